"""GET /v1/catalog, /v1/catalog/gpus, /v1/catalog/instances: what the ranking uses, and how fresh."""

from __future__ import annotations

from typing import Any

from service.api import ApiBlueprint
from service.catalog_listing import (
    CatalogInfoSchema,
    GpuFilterSchema,
    GpuListSchema,
    InstanceFilterSchema,
    InstanceListSchema,
    catalog_info,
    list_gpus,
    list_instances,
)
from workers.tasks.runtime import runtime

blp = ApiBlueprint("catalog", __name__, url_prefix="/v1/catalog",
                   description="The GPUs, instance types and prices gpugauge ranks against.")


@blp.route("", methods=["GET"])
@blp.alt_response(200, schema=CatalogInfoSchema, success=True)
@blp.problems(401)
def info() -> dict[str, Any]:
    """Name the catalog version, when its prices were read, and its sources."""
    return catalog_info(runtime().catalog.get())


@blp.route("/gpus", methods=["GET"])
@blp.arguments(GpuFilterSchema, location="query")
@blp.alt_response(200, schema=GpuListSchema, success=True)
@blp.problems(401, 422)
def gpus(filters: dict[str, Any]) -> dict[str, Any]:
    """List the GPU models, filtered by memory, segment or architecture."""
    return list_gpus(runtime().catalog.get(), **filters)


@blp.route("/instances", methods=["GET"])
@blp.arguments(InstanceFilterSchema, location="query")
@blp.alt_response(200, schema=InstanceListSchema, success=True)
@blp.problems(401, 422)
def instances(filters: dict[str, Any]) -> dict[str, Any]:
    """List the instance types with their prices, filtered by provider, region, GPU, pricing or price."""
    return list_instances(runtime().catalog.get(), **filters)
