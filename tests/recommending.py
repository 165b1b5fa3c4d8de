"""Recommending a spec on the shipped catalog, as the ranking scenario tests do (fixture `shipped`)."""

from __future__ import annotations

import copy
from typing import Any

from catalog.types import Catalog
from workers.ranking.recommend import recommend
from workers.ranking.recommendation import Recommendation
from workers.schemas.specs import load_job


def recommend_spec(spec: dict[str, Any], catalog: Catalog) -> Recommendation:
    """Return the recommendation of a JSON spec (left as it was) over the catalog."""
    _, job = load_job(copy.deepcopy(spec))
    return recommend(job, catalog)
