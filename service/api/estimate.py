"""POST /v1/estimate: size a job spec synchronously, optionally on given GPUs.

Procurement tools and pages send the same few specs again and again, and the sizing is a pure
function of the body, the catalog and the reported runs' corrections. So the route remembers, for
the last REMEMBERED_BODIES bodies of at most REMEMBERED_BODY_BYTES, what the schema loaded (by the
body's bytes) and the requirements worked out from it (while the catalog and the corrections are
the same objects) as the answer's JSON bytes: a repeated body costs its JSON parse and two lookups. A
body the schema refuses is never remembered, so every refusal is worked out (and worded) afresh.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from flask import Request, Response, current_app, jsonify, request

from catalog.types import Catalog
from service.api import ApiBlueprint, StrictJsonParser
from workers.schemas import EstimateAnswer, EstimateAnswerSchema, EstimateRequestSchema
from workers.schemas.specs import build_job
from workers.sizing.estimate import estimate_on_gpus
from workers.sizing.reported import Calibration
from workers.sizing.requirements import Requirements
from workers.tasks.runs import calibration_for
from workers.tasks.runtime import runtime

REMEMBERED_BODIES = 256
REMEMBERED_BODY_BYTES = 32 * 1024


class _Lru:
    """The newest `size` entries, safe under the embedded server's request threads."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._data: OrderedDict[Any, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Any) -> Any:
        """Return the value under key (None when absent), marking it the newest."""
        with self._lock:
            value = self._data.get(key)
            if value is not None:
                self._data.move_to_end(key)
            return value

    def remember(self, key: Any, value: Any) -> None:
        """Keep value under key, dropping the oldest entry past the size."""
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            if len(self._data) > self.size:
                self._data.popitem(last=False)


class RememberingParser(StrictJsonParser):
    """The API's JSON parser, remembering what the schema loaded from each recent small body.

    The loaded spec is shared between the requests that sent the same bytes: the view reads it and
    never changes it.
    """

    def __init__(self) -> None:
        super().__init__()
        self.loaded = _Lru(REMEMBERED_BODIES)

    def _process_location_data(self, location_data: Any, schema: Any, req: Request, location: str,
                               unknown: str | None, validators: Any) -> Any:
        body = req.get_data(cache=True) if location == "json" else b""
        if not body or len(body) > REMEMBERED_BODY_BYTES:
            return super()._process_location_data(location_data, schema, req, location, unknown, validators)
        key = (body, id(schema))
        found = self.loaded.get(key)
        if found is None or found[0] is not schema:
            found = (schema, super()._process_location_data(location_data, schema, req, location, unknown,
                                                            validators))
            self.loaded.remember(key, found)
        return found[1]


blp = ApiBlueprint("estimate", __name__, url_prefix="/v1", description="Size a training job.")
blp.ARGUMENTS_PARSER = RememberingParser()
# id(loaded spec) -> (the loaded spec, catalog, calibration, app, the answer's JSON): the newest per spec
# (the app: its JSON settings wrote the bytes)
_ANSWERS = _Lru(REMEMBERED_BODIES)
_ANSWER_SCHEMA = EstimateAnswerSchema()


@blp.route("/estimate", methods=["POST"])
@blp.arguments(EstimateRequestSchema)
@blp.response(200, EstimateAnswerSchema)
@blp.problems(400, 401, 413, 415, 422)
def estimate(data: dict[str, Any]) -> Response:
    """Size a job spec; with `gpus`, also fit and time it on `gpu_count` of each of those GPUs."""
    rt = runtime()
    catalog = rt.catalog.get()
    calibration = calibration_for(rt.runs, catalog)
    app = current_app._get_current_object()  # type: ignore[attr-defined]
    found = _ANSWERS.get(id(data))
    if found is not None and found[0] is data and found[1] is catalog and found[2] is calibration \
            and found[3] is app:
        return Response(found[4], status=200, mimetype="application/json")  # the bytes answered before
    requirements: Requirements = _size(data, catalog, calibration)
    # Dumped here as the response decorator would (it passes a Response through), so the bytes can be kept.
    answer: Response = jsonify(_ANSWER_SCHEMA.dump(EstimateAnswer(requirements, catalog.version,
                                                                  catalog.prices_as_of)))
    if len(request.get_data(cache=True)) <= REMEMBERED_BODY_BYTES:  # the parser remembers it too
        _ANSWERS.remember(id(data), (data, catalog, calibration, app, answer.get_data()))
    return answer


def _size(data: dict[str, Any], catalog: Catalog, calibration: Calibration) -> Requirements:
    """Size the loaded spec (read, never changed: it may be shared) on its GPUs."""
    spec = {key: value for key, value in data.items() if key not in ("gpus", "gpu_count")}
    return estimate_on_gpus(build_job(spec), catalog.gpus, slugs=data["gpus"], gpu_count=data["gpu_count"],
                            calibration=calibration)
