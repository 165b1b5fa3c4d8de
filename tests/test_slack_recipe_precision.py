"""A preset whose published recipe trains in 16-bit autocast is sized so where the command says no precision:
"vit-b/16 on imagenet-21k 90 epochs budget 5000 dollars" was sized in fp32 and ranked one L40S for 42 days."""

from __future__ import annotations

from catalog.types import Catalog
from tests.recommending import recommend_spec
from tests.test_slack_phrases import parse


def test_a_vit_is_sized_as_torchvisions_recipe_runs_it_and_told_so() -> None:
    command = parse("vit-b/16 on imagenet-21k 90 epochs budget 5000 dollars")
    assert command.spec["training"]["precision"] == "fp16-mixed"
    assert any(d.startswith("precision=fp16 (torchvision's vit_b_16 recipe trains with --amp")
               for d in command.defaults_used)
    assert parse("vit-b16 fp32 on imagenet").spec["training"]["precision"] == "fp32"  # said wins
    resnet = parse("resnet50 on imagenet")  # torchvision's ResNet recipe has no --amp: the spec's fp32, told
    assert "precision" not in resnet.spec["training"] and "precision=fp32" in resnet.defaults_used


def test_the_recipes_precision_turns_a_six_week_answer_into_days(shipped: Catalog) -> None:
    command = parse("vit-b/16 on imagenet-21k 90 epochs budget 5000 dollars")
    amp = recommend_spec(command.spec, shipped).options[0]
    fp32 = recommend_spec({**command.spec, "training": {**command.spec["training"], "precision": "fp32"}},
                          shipped).options[0]
    assert amp.training_cost_usd < fp32.training_cost_usd
    assert amp.training_hours < fp32.training_hours / 2
