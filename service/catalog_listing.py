"""The catalog as the API and `gpugauge catalog ... --json` show it: filters, and schemas to dump it."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any

from marshmallow import RAISE, Schema, fields, validate

from catalog.commitments import COMMITTED
from catalog.gpu_names import gpu_name_matches
from catalog.providers import PROVIDER_NAMES
from catalog.types import Catalog, GpuSpec, InstanceType, Offer
from workers.schemas.fields import typed_function

PRICING_KINDS = ("on_demand", "spot", "owned", "committed_1y", "committed_3y", "savings_plan_1y", "savings_plan_3y")
# A page of instance types: the full catalog holds a few hundred types with thousands of prices, and a
# procurement script walks it by next_offset.
PAGE_SIZE = 100
MAX_PAGE_SIZE = 1000
SEGMENTS = ("consumer", "workstation", "datacenter")


class CatalogInfoSchema(Schema):
    """Which catalog answers: its version, how fresh its prices are, where its rows come from."""

    version = fields.String()
    prices_as_of = fields.String(metadata={"description": "the oldest cloud price's date, or 'unknown'"})
    sources = fields.List(fields.String())
    prices_as_of_by_provider = fields.Dict(keys=fields.String(), values=fields.String(),
                                           metadata={"description": "the same, per cloud provider"})


class GpuSchema(Schema):
    """One GPU model's datasheet row."""

    slug = fields.String()
    name = fields.String()
    architecture = fields.String()
    compute_capability = fields.String()
    year = fields.Integer()
    memory_bytes = fields.Integer()
    memory_bandwidth_gb_per_s = fields.Float()
    fp32_tflops = fields.Float()
    fp16_tflops = fields.Float()
    bf16_tflops = fields.Float()
    pcie_gen = fields.Integer()
    nvlink_gb_per_s = fields.Float()
    tdp_watts = fields.Integer()
    launch_price_usd = fields.Float(allow_none=True)
    segment = fields.String()
    source = fields.String()
    source_date = fields.String()


class PriceSchema(Schema):
    """One price of an instance type: region, pricing kind, dollars per hour."""

    region = fields.String()
    pricing = typed_function(lambda offer: offer.pricing.value, {"type": "string"})
    price_per_hour_usd = fields.Float()
    source = fields.String()
    as_of = fields.String(allow_none=True, metadata={"description": "date the source says it was true; null if unsaid"})


class InstanceSchema(Schema):
    """One machine shape with its prices by region."""

    provider = typed_function(lambda row: row["instance"].provider.value, {"type": "string"})
    instance_type = typed_function(lambda row: row["instance"].instance_type, {"type": "string"})
    gpu = typed_function(lambda row: row["instance"].gpu, {"type": "string"})
    gpu_count = typed_function(lambda row: row["instance"].gpu_count, {"type": "integer"})
    gpu_memory_bytes = typed_function(lambda row: row["gpu_memory_bytes"], {"type": "integer"})
    vcpus = typed_function(lambda row: row["instance"].vcpus, {"type": "integer"})
    host_memory_bytes = typed_function(lambda row: row["instance"].host_memory_bytes, {"type": "integer"})
    local_storage_bytes = typed_function(lambda row: row["instance"].local_storage_bytes, {"type": "integer"})
    cpu_model = typed_function(lambda row: row["instance"].cpu_model, {"type": "string"})
    cpu_single_thread_score = typed_function(lambda row: row["instance"].cpu_single_thread_score, {"type": "number"})
    network_gbit_per_s = typed_function(lambda row: row["instance"].network_gbit_per_s, {"type": "number"})
    source = typed_function(lambda row: row["instance"].source, {"type": "string"})
    source_date = typed_function(lambda row: row["instance"].source_date, {"type": "string"})
    prices = fields.List(fields.Nested(PriceSchema))


class GpuListSchema(CatalogInfoSchema):
    """The GPUs of one catalog version."""

    gpus = fields.List(fields.Nested(GpuSchema))


class InstanceListSchema(CatalogInfoSchema):
    """One page of the instance types of one catalog version, with their prices."""

    instances = fields.List(fields.Nested(InstanceSchema))
    notes = fields.List(fields.String(), metadata={
        "description": "why the list may be empty: a GPU or region the catalog does not have, with suggestions"})
    total = fields.Integer(metadata={"description": "instance types that pass the filters, on every page"})
    offset = fields.Integer()
    limit = fields.Integer()
    next_offset = fields.Integer(allow_none=True, metadata={"description": "the next page's offset; null: last"})


# Query strings carry numbers as text, so these fields parse them (the body's strict fields would not).
class GpuFilterSchema(Schema):
    """Filters of the GPU list."""

    class Meta:
        unknown = RAISE

    min_memory_bytes = fields.Integer(validate=validate.Range(min=0, max=10**13))
    segment = fields.String(validate=validate.OneOf(SEGMENTS))
    architecture = fields.String(validate=validate.Length(min=1, max=32))


class InstanceFilterSchema(Schema):
    """Filters of the instance list."""

    class Meta:
        unknown = RAISE

    provider = fields.String(validate=validate.OneOf(PROVIDER_NAMES))
    region = fields.String(validate=validate.Length(min=1, max=64))
    gpu = fields.String(validate=validate.Length(min=1, max=64), metadata={
        "description": "a GPU slug, or a name as people write it (\"RTX 4090\"); a family (\"a100\") is "
                       "each of its members"})
    pricing = fields.String(validate=validate.OneOf(PRICING_KINDS))
    min_gpu_memory_bytes = fields.Integer(validate=validate.Range(min=0, max=10**13))
    max_price_per_hour_usd = fields.Float(validate=validate.Range(min=0.0, max=1e6))
    limit = fields.Integer(load_default=PAGE_SIZE, validate=validate.Range(min=1, max=MAX_PAGE_SIZE),
                           metadata={"description": "instance types per page"})
    offset = fields.Integer(load_default=0, validate=validate.Range(min=0, max=10**6),
                            metadata={"description": "how many instance types to skip (the last page's next_offset)"})


def catalog_info(catalog: Catalog) -> dict[str, Any]:
    """Return the catalog's version, prices_as_of and sources."""
    return {"version": catalog.version, "prices_as_of": catalog.prices_as_of,
            "sources": list(catalog.sources), "prices_as_of_by_provider": dict(catalog.prices_as_of_by_provider)}


def list_gpus(catalog: Catalog, *, min_memory_bytes: int = 0, segment: str | None = None,
              architecture: str | None = None) -> dict[str, Any]:
    """Return the catalog's GPUs that pass the filters, with the catalog's version."""
    gpus: list[GpuSpec] = [
        g for g in catalog.gpus
        if g.memory_bytes >= min_memory_bytes
        and (segment is None or g.segment == segment)
        and (architecture is None or g.architecture == architecture.lower())
    ]
    listing: dict[str, Any] = GpuListSchema().dump({**catalog_info(catalog), "gpus": gpus})
    return listing


def list_instances(catalog: Catalog, *, provider: str | None = None, region: str | None = None,
                   gpu: str | None = None, pricing: str | None = None, min_gpu_memory_bytes: int = 0,
                   max_price_per_hour_usd: float | None = None, limit: int = PAGE_SIZE,
                   offset: int = 0) -> dict[str, Any]:
    """Return one page (`limit` from `offset`) of the instance types that pass the filters, with their prices."""
    # A GPU or region the catalog lacks matches nothing: an empty list (what the document promises for
    # any string), with a note naming the close ones.
    # A GPU as people write it ("A100", "RTX 4090") is each slug it names (catalog/gpu_names.py).
    slugs = [g.slug for g in catalog.gpus]
    gpus = set(gpu_name_matches(gpu, slugs)) if gpu is not None else None
    notes = [note for field, value, names in (("gpu", gpu if not gpus else None, slugs),
                                              ("region", region, [o.region for o in catalog.offers]))
             if value is not None and (note := _unknown_note(field, value, names))]
    memory = {g.slug: g.memory_bytes for g in catalog.gpus}
    price_filtered = region is not None or pricing is not None or max_price_per_hour_usd is not None
    prices: dict[tuple[str, str], list[Offer]] = {}
    for offer in catalog.offers:
        if ((region is None or offer.region == region)
                and (offer.pricing not in COMMITTED if pricing is None else offer.pricing.value == pricing)
                and (max_price_per_hour_usd is None or offer.price_per_hour_usd <= max_price_per_hour_usd)):
            prices.setdefault((offer.provider.value, offer.instance_type), []).append(offer)
    rows = []
    for instance in catalog.instances:
        key = (instance.provider.value, instance.instance_type)
        if not _instance_matches(instance, provider=provider, gpus=gpus):
            continue
        if memory.get(instance.gpu, 0) < min_gpu_memory_bytes or (price_filtered and key not in prices):
            continue
        rows.append({"instance": instance, "gpu_memory_bytes": memory.get(instance.gpu, 0),
                     "prices": sorted(prices.get(key, []), key=lambda o: (o.region, o.pricing.value))})
    page = rows[offset:offset + limit]
    following = offset + limit if offset + limit < len(rows) else None
    listing: dict[str, Any] = InstanceListSchema().dump({
        **catalog_info(catalog), "instances": page, "notes": notes, "total": len(rows), "offset": offset,
        "limit": limit, "next_offset": following})
    return listing


def _instance_matches(instance: InstanceType, *, provider: str | None, gpus: set[str] | None) -> bool:
    return (provider is None or instance.provider.value == provider) and (gpus is None or instance.gpu in gpus)


def _unknown_note(field: str, value: str, names: Iterable[str]) -> str | None:
    known = sorted(set(names))
    if value in known:
        return None
    close = difflib.get_close_matches(value, known, n=3)
    return f"no {field} {value!r} in the catalog" + (f"; did you mean {', '.join(close)}?" if close else "")
