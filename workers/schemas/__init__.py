"""The marshmallow schemas every boundary passes: HTTP bodies, CLI spec files, Slack, Celery payloads."""

from service.schemas.problem import ProblemSchema
from service.schemas.results import (
    ModelStatsSchema,
    RecommendationSchema,
    RequirementsSchema,
)
from service.schemas.spec import EstimateRequestSchema, JobSpecSchema

__all__ = [
    "EstimateRequestSchema",
    "JobSpecSchema",
    "ModelStatsSchema",
    "ProblemSchema",
    "RecommendationSchema",
    "RequirementsSchema",
]
