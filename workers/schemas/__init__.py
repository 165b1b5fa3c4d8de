"""The marshmallow schemas every boundary passes: HTTP bodies, CLI spec files, Slack, Celery payloads."""

from workers.schemas.problem import ProblemSchema
from workers.schemas.results import (
    EstimateAnswer,
    EstimateAnswerSchema,
    ModelStatsSchema,
    RecommendationSchema,
    RequirementsSchema,
    dump_recommendation,
)
from workers.schemas.spec import EstimateRequestSchema, JobSpecSchema

__all__ = [
    "EstimateAnswer",
    "EstimateAnswerSchema",
    "EstimateRequestSchema",
    "JobSpecSchema",
    "ModelStatsSchema",
    "ProblemSchema",
    "RecommendationSchema",
    "RequirementsSchema",
    "dump_recommendation",
]
