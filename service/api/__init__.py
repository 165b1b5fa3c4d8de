"""The JSON API's blueprints and what they share: strict JSON bodies, API keys, problem docs."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

import flask_smorest
from flask import request
from webargs.flaskparser import FlaskParser
from werkzeug.exceptions import UnsupportedMediaType

from service.auth import require_api_key
from service.problems import PROBLEM_MEDIA_TYPE
from service.schemas import ProblemSchema

F = TypeVar("F", bound=Callable[..., Any])


class StrictJsonParser(FlaskParser):
    """webargs' parser: 400 (not 500) for JSON Python's decoder refuses oddly; unknown query keys 422."""

    # None: the schema's own `unknown` (RAISE) applies, so a misspelt filter is refused, not ignored.
    DEFAULT_UNKNOWN_BY_LOCATION: ClassVar[dict[str, str | None]] = {
        **FlaskParser.DEFAULT_UNKNOWN_BY_LOCATION, "query": None, "querystring": None}

    def _raw_load_json(self, req: Any) -> Any:
        try:
            return super()._raw_load_json(req)
        except json.JSONDecodeError:
            raise
        except (ValueError, RecursionError) as error:  # a 5000-digit integer, nesting past the stack
            self._handle_invalid_json_error(error, req)  # type: ignore[arg-type]


class ApiBlueprint(flask_smorest.Blueprint):
    """A flask-smorest blueprint whose bodies must be JSON and whose routes need an API key."""

    ARGUMENTS_PARSER = StrictJsonParser()

    def __init__(self, *args: Any, guarded: bool = True, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if guarded:
            self.before_request(require_api_key)
            self.before_request(_require_json_body)

    def problems(self, *statuses: int) -> Callable[[F], F]:
        """Document the problem+json answers a route can give."""
        def decorate(view: F) -> F:
            for status in statuses:
                view = self.alt_response(status, schema=ProblemSchema, content_type=PROBLEM_MEDIA_TYPE)(view)
            return view
        return decorate


def _require_json_body() -> None:
    if request.method in ("POST", "PUT", "PATCH") and not request.is_json:
        raise UnsupportedMediaType(f"send the body as application/json, not {request.mimetype or 'nothing'}")
