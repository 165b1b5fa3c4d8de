"""Compiled schema dumps give marshmallow's output exactly: values, missing keys, defaults, hooks, key order."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import date
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from marshmallow import Schema, fields, post_dump

from catalog.loader import load_catalog
from catalog.types import Catalog
from workers.ranking.recommend import PER_GPU_ALL, PER_GPU_OPTIONS, recommend
from workers.schemas import dump_recommendation
from workers.schemas.dumpers import compiled_dump
from workers.schemas.results import RecommendationSchema
from workers.schemas.specs import load_job

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


@cache
def _catalog() -> Catalog:
    return load_catalog()


@pytest.mark.parametrize(("example", "rows"), [
    ("resnet50-imagenet.json", PER_GPU_OPTIONS),  # the bench's job
    ("buy-or-rent.json", PER_GPU_ALL),  # purchase rows, every per-GPU row
    ("spot-pretrain-2d.json", PER_GPU_OPTIONS),  # spot, scaling, a deadline
    ("team-owns-4x3090.json", PER_GPU_OPTIONS),  # owned GPUs: options without some prices
])
def test_recommendation_dump_is_marshmallows_to_the_byte(example: str, rows: str) -> None:
    _, job = load_job(json.loads((EXAMPLES / example).read_text(encoding="utf-8")))
    rec = recommend(job, _catalog(), per_gpu_rows=rows, today=date(2026, 12, 1), stale_after_days=30)
    expected = json.dumps(RecommendationSchema().dump(rec), allow_nan=False)
    assert json.dumps(dump_recommendation(rec), allow_nan=False) == expected


@dataclass
class Inner:
    amount: int
    label: str | None = None


@dataclass
class Outer:
    count: Any
    ratio: Any
    flag: Any
    inner: Inner | None
    inners: list[Inner]
    tags: list[Any]
    extra: dict[str, Any] = field(default_factory=dict)


class InnerSchema(Schema):
    amount = fields.Integer()
    label = fields.String()


class HookedSchema(Schema):
    amount = fields.Integer()
    label = fields.String()

    @post_dump
    def _drop_empty_label(self, data: dict[str, Any], **_: Any) -> dict[str, Any]:
        if data.get("label") is None:
            data.pop("label", None)
        return data


class Shouting(fields.String):
    def _serialize(self, value: Any, attr: str | None, obj: Any, **kwargs: Any) -> Any:
        return None if value is None else str(value).upper()


class OuterSchema(Schema):
    count = fields.Integer(data_key="n")
    ratio = fields.Float()
    ratio_text = fields.Float(attribute="ratio", as_string=True, dump_only=True)
    flag = fields.Boolean()
    inner = fields.Nested(InnerSchema, allow_none=True)
    inner_amount = fields.Integer(attribute="inner.amount", dump_only=True)  # dotted: marshmallow reads it
    inners = fields.List(fields.Nested(InnerSchema))
    hooked = fields.Nested(HookedSchema, attribute="inners", many=True, dump_only=True)
    tags = fields.List(fields.String())
    shout = Shouting(attribute="tags", dump_only=True)
    absent = fields.Integer()  # no such attribute: the key is left out
    defaulted = fields.Integer(dump_default=7)
    total = fields.Function(lambda outer: outer.count * 2)
    extra = fields.Dict(keys=fields.String(), values=fields.Integer())


@pytest.mark.parametrize("outer", [
    Outer(count=3, ratio=2, flag=1, inner=Inner(5, "a"), inners=[Inner(1), Inner(2, "b")], tags=["x", 4],
          extra={"k": 1}),
    Outer(count=True, ratio=0.1, flag=None, inner=None, inners=[], tags=[None], extra={}),
    Outer(count=None, ratio=None, flag=False, inner=Inner(0), inners=[Inner(9)], tags=[], extra={"z": 2}),
])
def test_compiled_dump_matches_marshmallow_on_every_field_kind(outer: Outer) -> None:
    schema = OuterSchema(exclude=("total",)) if outer.count is None else OuterSchema()  # None * 2 fails in both
    expected = schema.dump(outer)
    dumped = compiled_dump(schema)(outer)
    assert json.dumps(dumped) == json.dumps(expected)
    assert isinstance(dumped["ratio"], float) or dumped["ratio"] is None  # Float formats an int as a float
    assert "absent" not in dumped and dumped["defaulted"] == 7


def test_compiled_dump_reads_mappings_and_many_as_marshmallow_does() -> None:
    schema = InnerSchema(many=True)
    rows: list[Any] = [{"amount": "12", "label": 3}, Inner(4, None), {"label": "only"}]
    assert json.dumps(compiled_dump(schema)(rows)) == json.dumps(schema.dump(rows))
    assert compiled_dump(schema)(rows)[0] == {"amount": 12, "label": "3"}
