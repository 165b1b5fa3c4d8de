"""An Arm host at the top of an answer names the answer's first x86 option beside its `arm-host` warning."""

from __future__ import annotations

from dataclasses import replace

from catalog.types import Catalog
from tests.recommending import recommend_spec
from workers.ranking.wider import arm_alternative

CIFAR = {"model": {"preset": "resnet18", "input_shape": [3, 32, 32]},
         "training": {"batch_size": 128, "epochs": 200, "precision": "fp16-mixed", "optimizer": "momentum"},
         "dataset": {"samples": 50_000, "bytes": 180_000_000, "in_memory": True},
         "constraints": {"providers": ["aws"]}, "objective": "cost", "limit": 200}


def _arm(option: object) -> bool:
    return any(w.code == "arm-host" for w in option.warnings)  # type: ignore[attr-defined]


def test_an_arm_top_option_names_the_first_x86_option(shipped: Catalog) -> None:
    rec = recommend_spec(CIFAR, shipped)
    arm = [o for o in rec.options if _arm(o)]
    x86 = [o for o in rec.options if not _arm(o)]
    assert arm and x86, "AWS offers both Graviton (g5g) and x86 (g4dn) T4 machines for this job"
    # the answer's order with an Arm option put first, as the ranking does when Graviton is cheapest
    options = tuple(replace(o, rank=i + 1) for i, o in enumerate([arm[0], *x86[:3], *arm[1:3]]))
    noted = arm_alternative(replace(rec, options=options))
    [warning] = [w for w in noted.options[0].warnings if w.code == "arm-host"]
    first = options[1]
    assert f"#2, {first.provider} " in warning.message and first.instance_type in warning.message
    more = first.training_cost_usd / options[0].training_cost_usd - 1.0
    assert f"{more:+.1%} cost" in warning.message
    assert noted.options[1:] == options[1:]  # only the top option's warning changes
    # the ranked answer itself says so where Graviton comes first
    if _arm(rec.options[0]):
        [top] = [w for w in rec.options[0].warnings if w.code == "arm-host"]
        assert "the first x86 option of this answer" in top.message


def test_an_x86_top_option_or_no_x86_alternative_leaves_the_answer_as_it_was(shipped: Catalog) -> None:
    rec = recommend_spec(CIFAR, shipped)
    x86_first = tuple(sorted(rec.options, key=_arm))
    assert arm_alternative(replace(rec, options=x86_first)) == replace(rec, options=x86_first)
    only_arm = tuple(o for o in rec.options if _arm(o))
    assert arm_alternative(replace(rec, options=only_arm)) == replace(rec, options=only_arm)
