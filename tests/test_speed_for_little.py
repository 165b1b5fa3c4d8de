"""A cost-ranked answer says where a run 1.5x as fast or more costs little more (`speed-for-little`)."""

from __future__ import annotations

import re

import pytest

from catalog.types import Catalog
from tests.recommending import changed_example, recommend_spec
from workers.ranking.wider import LITTLE_EXTRA_USD, QUICKER_SHARE, SAME_COST_SHARE


def _slowest(option: object) -> float:
    return max(option.training_hours, option.percentile_hours or 0.0)  # type: ignore[attr-defined]


@pytest.mark.parametrize("example", ["dcgan-faces", "unet-highres"])
def test_a_much_faster_option_for_little_more_is_named_with_the_deadline_that_ranks_it(
        shipped: Catalog, example: str) -> None:
    rec = recommend_spec(changed_example(example, objective="cost"), shipped)
    top = rec.options[0]
    [warning] = [w for w in rec.requirements.warnings if w.code == "speed-for-little"]
    named = next(o for o in rec.options[1:]
                 if f"{o.provider} {o.gpu_count * o.nodes} x {o.gpu} (" in warning.message
                 and f"{o.instance_type}, {o.pricing.value}, {o.region}" in warning.message)
    assert _slowest(named) <= QUICKER_SHARE * _slowest(top)  # like with like: each at its held time
    assert named.training_cost_usd <= max(top.training_cost_usd + LITTLE_EXTRA_USD,
                                          SAME_COST_SHARE * top.training_cost_usd)
    # the fastest such option of the answer
    assert all(_slowest(o) >= _slowest(named) for o in rec.options[1:]
               if o.training_cost_usd <= named.training_cost_usd)
    hours = float(re.search(r"deadline_hours ([0-9.]+)", warning.message).group(1))  # type: ignore[union-attr]
    assert _slowest(named) <= hours < _slowest(named) + 0.1
    # what the deadline ranks first is as quick and no dearer
    first = recommend_spec(changed_example(example, objective="cost", constraints={"deadline_hours": hours}),
                           shipped).options[0]
    assert _slowest(first) <= hours and first.training_cost_usd <= named.training_cost_usd


@pytest.mark.parametrize("example", ["mlp-mnist", "dqn-atari", "bert-finetune"])
def test_it_is_said_exactly_where_such_an_option_is_in_the_answer(shipped: Catalog, example: str) -> None:
    # MLP on MNIST and the DQN: launch-bound steps, no card much quicker; BERT on 2 T4s: 1.6x for $0.05 more
    rec = recommend_spec(changed_example(example, objective="cost"), shipped)
    top = rec.options[0]
    allowed = max(top.training_cost_usd + LITTLE_EXTRA_USD, SAME_COST_SHARE * top.training_cost_usd)
    quicker = [o for o in rec.options[1:] if o.training_cost_usd <= allowed
               and _slowest(o) <= QUICKER_SHARE * _slowest(top)]
    said = [w for w in rec.requirements.warnings if w.code == "speed-for-little"]
    assert bool(said) == bool(quicker), (example, [(o.training_hours, o.training_cost_usd) for o in quicker])


def test_another_objective_says_nothing(shipped: Catalog) -> None:
    rec = recommend_spec(changed_example("dcgan-faces", objective="balanced"), shipped)
    assert rec.options and not any(w.code == "speed-for-little" for w in rec.requirements.warnings)
