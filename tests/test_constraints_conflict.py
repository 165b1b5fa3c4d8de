"""When the budget, the deadline or the CO2e cap rule every option out, the answer says which to relax, and to what."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from catalog.types import Catalog
from tests.recommending import recommend_spec
from workers.ranking.recommendation import Recommendation
from workers.sizing.errors import SpecError

RESNET50 = json.loads((Path(__file__).resolve().parents[1] / "examples" / "resnet50-imagenet.json").read_text())




def _with(**constraints: float) -> dict[str, Any]:
    return {**RESNET50, "constraints": {**RESNET50["constraints"], **constraints}}


def _conflict(rec: Recommendation) -> str:
    [message] = [w.message for w in rec.requirements.warnings if w.code == "constraints-conflict"]
    return message


def _field(message: str, name: str) -> float:
    return float(re.search(rf"constraints\.{name} to ([0-9]+(?:\.[0-9]+)?)", message).group(1))  # type: ignore[union-attr]


def test_a_budget_too_small_for_the_deadline_names_the_budget_that_opens_an_option(shipped: Catalog) -> None:
    rec = recommend_spec(_with(budget_usd=5, deadline_hours=2), shipped)
    assert not rec.options
    message = _conflict(rec)
    assert "$5.00 budget" in message and "2 h deadline" in message
    budget = _field(message, "budget_usd")
    assert budget > 5
    opened = recommend_spec(_with(budget_usd=budget, deadline_hours=2), shipped)
    assert opened.options and all(o.training_cost_usd <= budget for o in opened.options)
    assert "constraints-conflict" not in [w.code for w in opened.requirements.warnings]


def test_a_deadline_no_machine_meets_names_the_deadline_that_does(shipped: Catalog) -> None:
    rec = recommend_spec(_with(deadline_hours=0.1), shipped)
    assert not rec.options
    message = _conflict(rec)
    assert "whatever the budget, no option meets the 6 min deadline on at most 8 GPUs" in message
    deadline = _field(message, "deadline_hours")
    if deadline < 1:  # a sub-hour figure is said in minutes beside the field's hours
        assert f"deadline_hours to {deadline:g} ({deadline * 60:.3g} min)" in message
    opened = recommend_spec(_with(deadline_hours=deadline), shipped)
    assert opened.options and opened.options[0].training_hours <= deadline


def test_a_co2e_cap_too_low_names_the_cap_the_cleanest_option_needs(shipped: Catalog) -> None:
    rec = recommend_spec(_with(max_co2e_kg=0.01), shipped)
    assert not rec.options
    cap = _field(_conflict(rec), "max_co2e_kg")
    opened = recommend_spec(_with(max_co2e_kg=cap), shipped)
    assert opened.options


def test_a_job_with_options_gets_no_conflict_warning(shipped: Catalog) -> None:
    rec = recommend_spec(RESNET50, shipped)
    assert rec.options and "constraints-conflict" not in [w.code for w in rec.requirements.warnings]


def test_a_deadline_only_more_gpus_meet_names_the_gpu_count_that_does(shipped: Catalog) -> None:
    rec = recommend_spec(_with(deadline_hours=0.4), shipped)
    assert not rec.options
    message = _conflict(rec)
    gpus = int(_field(message, "max_gpus"))
    assert gpus > 8
    opened = recommend_spec({**RESNET50, "constraints": {**RESNET50["constraints"], "deadline_hours": 0.4,
                                                         "max_gpus": gpus}}, shipped)
    assert opened.options and opened.options[0].training_hours <= 0.4


def test_a_deadline_alone_that_eight_gpus_miss_names_the_deadline_and_the_gpu_count_that_meet_it(
        shipped: Catalog) -> None:
    # "pretrain llama 7b on 1T tokens within 30 days" was told only to move its deadline to 1,667 h
    alone = {k: v for k, v in RESNET50["constraints"].items() if k != "budget_usd"}
    rec = recommend_spec({**RESNET50, "constraints": {**alone, "deadline_hours": 0.4}}, shipped)
    assert not rec.options
    message = _conflict(rec)
    assert message.startswith("No option meets the 24 min deadline; the fastest option without the deadline")
    assert _field(message, "deadline_hours") > 0.4
    gpus = int(_field(message, "max_gpus"))
    assert gpus > 8 and "or with up to 32 GPUs the cheapest that meets the deadline is" in message
    opened = recommend_spec({**RESNET50, "constraints": {**alone, "deadline_hours": 0.4, "max_gpus": gpus}}, shipped)
    assert opened.options and opened.options[0].training_hours <= 0.4


LLAMA_70B_FULL: dict[str, Any] = {
    "model": {"preset": "llama3-70b"}, "dataset": {"samples": 1_000_000},
    "training": {"batch_size": 8, "epochs": 3, "sequence_length": 1024, "precision": "bf16-mixed", "recompute": True,
                 "optimizer": "adamw", "optimizer_implementation": "fused", "from_pretrained": True,
                 "loss": "fused_linear_cross_entropy"},
}


def test_a_budget_that_more_gpus_come_near_names_the_gpu_count_beside_the_budget(shipped: Catalog) -> None:
    """A Llama 3 70B full fine-tune under $1,000: within 8 GPUs it runs only offloaded, the cheapest $6.5k over
    1,300 h, and the answer said to raise the budget to that; 16 B200s run it for a fifth of it."""
    rec = recommend_spec({**LLAMA_70B_FULL, "constraints": {"budget_usd": 1000}}, shipped)
    assert not rec.options
    message = _conflict(rec)
    print(f"\n{message}")
    budget, gpus = _field(message, "budget_usd"), int(_field(message, "max_gpus"))
    assert gpus > 8 and "or with up to" in message
    wider = recommend_spec({**LLAMA_70B_FULL, "constraints": {"max_gpus": gpus}, "limit": 1}, shipped).options[0]
    assert wider.training_cost_usd <= 0.8 * budget and not wider.parallelism.offload_optimizer  # type: ignore[union-attr]
    # a budget the limit's own cheapest option is near says nothing of more GPUs
    assert "max_gpus" not in _conflict(recommend_spec(_with(budget_usd=5), shipped))


def test_a_deadline_no_gpu_limit_ranked_meets_says_the_gpu_hours_and_the_gpus_it_takes(shipped: Catalog) -> None:
    """A 7B pre-training on 10T tokens within a week: no limit ranked (up to 128 GPUs) meets it; the answer said only
    "move constraints.deadline_hours to" some hundred thousand hours. Now the job's GPU-hours at the widest limit and
    the GPUs a week takes at that option's efficiency."""
    spec = {"model": {"preset": "llama2-7b"}, "dataset": {"samples": 10**13 // 4096},
            "training": {"batch_size": 4, "sequence_length": 4096, "precision": "bf16-mixed", "optimizer": "adamw",
                         "optimizer_implementation": "fused", "recompute": True},
            "constraints": {"deadline_hours": 168}}
    rec = recommend_spec(spec, shipped)
    assert not rec.options
    message = _conflict(rec)
    print(f"\n{message}")
    found = re.search(r"the job is about ([0-9,]+) (\S+) GPU-hours, so meeting the 168 h \(7 d\) deadline takes at "
                      r"least ([0-9,]+) such GPUs", message)
    assert found is not None
    gpu_hours, needed = (int(found.group(i).replace(",", "")) for i in (1, 3))
    assert needed == -(-gpu_hours // 168) and needed > 128
    widest = recommend_spec({**spec, "constraints": {"max_gpus": 128}, "objective": "time", "limit": 1},
                            shipped).options[0]
    assert abs(widest.training_hours * widest.gpu_count * widest.nodes - gpu_hours) <= 0.02 * gpu_hours


def test_a_deadline_several_smaller_machines_meet_within_the_gpu_limit_is_ranked_not_refused(
        shipped: Catalog) -> None:
    """"how many h100s to pretrain gpt2 on 10b tokens in 2 hours": no single machine meets 2 h, 2 x a3-highgpu-4g
    (8 GPUs, the limit) does. The answer was "nothing fits ... raise constraints.max_gpus to 8", the limit it had."""
    spec = {"model": {"preset": "gpt2"}, "dataset": {"samples": 10**10 // 1024},
            "training": {"batch_size": 32, "sequence_length": 1024, "precision": "bf16-mixed", "optimizer": "adamw",
                         "optimizer_implementation": "fused", "gradient_clipping": "global"},
            "constraints": {"gpus": ["h100"], "deadline_hours": 2}}
    rec = recommend_spec(spec, shipped)
    assert rec.options and all(o.gpu_count * o.nodes <= 8 for o in rec.options)
    assert all(o.percentile_hours <= 2 or o.training_hours <= 2 for o in rec.options)
    assert not any(w.code == "constraints-conflict" for w in rec.requirements.warnings)


def test_a_region_pattern_ranks_every_region_it_starts_and_an_empty_one_is_refused(shipped: Catalog) -> None:
    # "in europe" from Slack: constraints.regions ["eu-*", "europe-*"]
    rec = recommend_spec({**RESNET50, "constraints": {"regions": ["eu-*", "europe-*"]}}, shipped)
    regions = {o.region for o in rec.options}
    assert rec.options and all(r.startswith(("eu-", "europe-")) for r in regions)
    with pytest.raises(SpecError) as caught:
        recommend_spec({**RESNET50, "constraints": {"regions": ["mars-*"]}}, shipped)
    assert caught.value.field == "constraints.regions"
