"""The JSON API's blueprints and what they share: strict JSON bodies, API keys, problem docs."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypeVar

import flask_smorest
from flask import current_app, request
from marshmallow import ValidationError
from webargs.flaskparser import FlaskParser
from werkzeug.exceptions import UnsupportedMediaType

from service.auth import require_api_key
from service.problems import PROBLEM_MEDIA_TYPE
from workers.schemas import ProblemSchema

F = TypeVar("F", bound=Callable[..., Any])


class StrictJsonParser(FlaskParser):
    """webargs' parser: 400 (not 500) for JSON Python's decoder refuses oddly; unknown query keys 422."""

    # None: the schema's own `unknown` (RAISE) applies, so a misspelt filter is refused, not ignored.
    DEFAULT_UNKNOWN_BY_LOCATION = {  # noqa: RUF012  (webargs declares it a plain attribute)
        **FlaskParser.DEFAULT_UNKNOWN_BY_LOCATION, "query": None, "querystring": None}

    def _raw_load_json(self, req: Any) -> Any:
        try:
            return super()._raw_load_json(req)
        except json.JSONDecodeError:
            raise
        except (ValueError, RecursionError) as error:  # a 5000-digit integer, nesting past the stack
            self._handle_invalid_json_error(error, req)  # type: ignore[arg-type]


class ApiBlueprint(flask_smorest.Blueprint):  # type: ignore[misc]  # flask-smorest ships no types
    """A flask-smorest blueprint whose bodies must be JSON and whose routes need an API key.

    Its decorators are re-declared with types, so that views keep theirs under mypy.
    """

    ARGUMENTS_PARSER = StrictJsonParser()

    def __init__(self, *args: Any, guarded: bool = True, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._guarded = guarded
        self.before_request(_refuse_undeclared_query)
        if guarded:
            self.before_request(require_api_key)
            self.before_request(_require_json_body)

    def route(self, rule: str, **options: Any) -> Callable[[F], F]:
        """Register a view (flask-smorest's `route`), documenting 422; a guarded one also 401 and 429."""
        decorator: Callable[[F], F] = super().route(rule, **options)

        def register(view: F) -> F:
            # An undeclared query parameter is a 422 (_refuse_undeclared_query); a guarded route asks for
            # an API key (service/auth.py) and is rate-limited (service/limits.py).
            return decorator(self.problems(422, *((401, 429) if self._guarded else ()))(view))
        return register

    def arguments(self, schema: Any, **options: Any) -> Callable[[F], F]:
        """Load a request location with a schema, passing the result to the view.

        A schema class is made an instance once here: webargs would build one (and every nested
        schema) on each request, which cost more than the estimate itself.
        """
        if isinstance(schema, type):
            schema = schema()
        decorator: Callable[[F], F] = super().arguments(schema, **options)
        return decorator

    def response(self, status_code: int, schema: Any = None, **options: Any) -> Callable[[F], F]:
        """Dump the view's return value with a schema."""
        decorator: Callable[[F], F] = super().response(status_code, schema, **options)
        return decorator

    def alt_response(self, status_code: int, **options: Any) -> Callable[[F], F]:
        """Document another answer of the view."""
        decorator: Callable[[F], F] = super().alt_response(status_code, **options)
        return decorator

    def doc(self, **fields: Any) -> Callable[[F], F]:
        """Copy fields into the route's OpenAPI operation."""
        decorator: Callable[[F], F] = flask_smorest.Blueprint.doc(**fields)
        return decorator

    def problems(self, *statuses: int) -> Callable[[F], F]:
        """Document the problem+json answers a route can give."""
        def decorate(view: F) -> F:
            for status in statuses:
                view = self.alt_response(status, schema=ProblemSchema, content_type=PROBLEM_MEDIA_TYPE)(view)
            return view
        return decorate


def _refuse_undeclared_query() -> None:
    """Refuse query parameters the route does not declare (422 naming them), as its query schemas do.

    A route with a query schema (RAISE) refuses unknown keys itself; one without (GET /v1/catalog, a job's
    URL, the probes) would ignore them, while its OpenAPI operation allows none (schemathesis' negative
    data then called it a schema violation accepted).
    """
    if not request.args:
        return
    view = current_app.view_functions.get(request.endpoint or "")
    apidoc: dict[str, Any] = getattr(view, "_apidoc", {})
    if any(p.get("in") == "query" for p in apidoc.get("arguments", {}).get("parameters", [])):
        return  # the query schema decides
    declared = {p["name"] for p in apidoc.get("manual_doc", {}).get("parameters", []) if p.get("in") == "query"}
    unknown = sorted(set(request.args) - declared)
    if unknown:
        raise ValidationError({name or "(empty name)": ["Unknown field."] for name in unknown})


def _require_json_body() -> None:
    if request.method in ("POST", "PUT", "PATCH") and not request.is_json:
        raise UnsupportedMediaType(f"send the body as application/json, not {request.mimetype or 'nothing'}")
