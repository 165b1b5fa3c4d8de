"""Recommending a spec on the shipped catalog, as the ranking scenario tests do (fixture `shipped`)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from catalog.loader import load_catalog
from catalog.types import Catalog
from workers.ranking.recommend import recommend
from workers.ranking.recommendation import Recommendation
from workers.schemas.specs import load_job
from workers.sizing.estimate import estimate_on_gpus
from workers.sizing.memory import usable_memory_bytes
from workers.sizing.requirements import Requirements


def recommend_spec(spec: dict[str, Any], catalog: Catalog) -> Recommendation:
    """Return the recommendation of a JSON spec (left as it was) over the catalog."""
    _, job = load_job(copy.deepcopy(spec))
    return recommend(job, catalog)


def estimate_spec(spec: dict[str, Any], gpu: str) -> Requirements:
    """Return the estimate of a JSON spec on one GPU of the shipped catalog, as `gpugauge estimate --gpu` gives it."""
    _, job = load_job(copy.deepcopy(spec))
    return estimate_on_gpus(job, load_catalog().gpus, slugs=[gpu])


def usable_bytes(gpu: str) -> int:
    """Return the memory a job may use on one GPU of the shipped catalog (the headroom taken off)."""
    return usable_memory_bytes(next(g for g in load_catalog().gpus if g.slug == gpu))


EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def changed_example(name: str, **changes: Any) -> dict[str, Any]:
    """Return examples/NAME.json with each section's fields merged over it (a top-level value set as given)."""
    spec: dict[str, Any] = json.loads((EXAMPLES / f"{name}.json").read_text())
    for section, fields in changes.items():
        spec[section] = {**spec.get(section, {}), **fields} if isinstance(fields, dict) else fields
    return spec
