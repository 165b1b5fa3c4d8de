"""The ranking worked out over arrays (ranked_arrays.py) gives what the plain ranking gives: every shape it
builds filled in as judging fills it, and the whole answer (options, their order, the front, the rejected
groups and their reasons) equal, job by job."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from catalog.loader import load_catalog
from catalog.types import Catalog
from tests.recommending import changed_example
from workers.ranking import ranking
from workers.ranking.candidates import collect_candidates
from workers.ranking.catalog_index import catalog_index
from workers.ranking.front import pareto_test
from workers.ranking.ranked_arrays import ShapeBook, collect_in_arrays, judge_lazily, options_front
from workers.ranking.recommend import estimate_per_gpu
from workers.ranking.scope import gpu_counts_in_scope, resolve_scope
from workers.ranking.shapes import DEADLINE, GPU_MEMORY, HOST_MEMORY, SPOT_RESTARTS, Shape, judge_scope
from workers.schemas import JobSpecSchema, dump_recommendation
from workers.schemas.specs import build_job
from workers.sizing.estimate import estimate_requirements

JOBS = {
    "resnet50 as shipped (balanced, budget, deadline)": changed_example("resnet50-imagenet"),
    "resnet50, a budget that cuts, a short list": changed_example("resnet50-imagenet", constraints={
        "budget_usd": 300, "deadline_hours": 60}, limit=2),
    "resnet50 on spot, a tight deadline": changed_example("resnet50-imagenet", constraints={
        "pricing": ["spot"], "deadline_hours": 20, "max_gpus": 8}),
    "gpt2 as shipped (time)": changed_example("gpt2-pretrain"),
    "gpt2 by cost on one GPU": changed_example("gpt2-pretrain", constraints={"max_gpus": 1}, objective="cost"),
    "bert on every pricing kind, data in us-east-1": changed_example(
        "bert-finetune", constraints={"pricing": ["on_demand", "spot", "committed_1y", "committed_3y"]},
        dataset={"location": {"provider": "aws", "region": "us-east-1"}}),
    "bert balanced, a list of one": changed_example("bert-finetune", objective="balanced", limit=1),
    "spot checkpoints too far apart to make progress": changed_example(
        "dcgan-faces", training={"checkpoint_every_hours": 80.0}, constraints={"pricing": ["spot"]}),
    "pre-processing bound, on demand only": changed_example("preprocess-heavy"),
    "unet at 64 GPUs, a long list": changed_example("unet-highres", constraints={"max_gpus": 64}, limit=50),
    "spot pre-training by time": changed_example("spot-pretrain-2d", objective="time"),
    "vae, a budget of cents": changed_example("vae-mnist", constraints={"budget_usd": 0.05}),
    "dqn on one GPU": changed_example("dqn-atari"),
    "mlp balanced": changed_example("mlp-mnist", objective="balanced"),
}


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


def _found(s: Shape) -> dict[str, object]:
    """Return what a shape holds, by attribute: its run parts set, or left to be worked out when asked."""
    found = {k: v for k, v in vars(s).items() if k not in ("_parts", "_parts_from", "m")}
    if "_parts" in vars(s) or "_parts_from" in vars(s):
        found["parts"] = s.parts
    return found


def _same(a: object, b: object) -> bool:
    nan = isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b)
    return type(a) is type(b) and (a == b or nan)


def _assert_same_shapes(built: list[Shape], plain: list[Shape], name: str) -> None:
    assert len(built) == len(plain)
    for b, p in zip(built, plain, strict=True):
        assert b.m is p.m and b.idx == p.idx
        assert _found(b).keys() == _found(p).keys(), (name, p.m.instance_type)
        for field, value in _found(p).items():
            assert _same(getattr(b, field), value), (name, p.m.instance_type, field)


def test_shapes_built_by_the_book_are_the_shapes_judged_and_collected(catalog: Catalog) -> None:
    kinds: set[str | None] = set()
    built = 0
    for name, raw in JOBS.items():
        job = build_job(JobSpecSchema().load(raw))
        known = {g.slug: g for g in catalog.gpus}
        requirements = estimate_requirements(job, known_gpus=known)
        per_gpu = estimate_per_gpu(job, gpu_counts_in_scope(job.constraints, catalog), known)
        scope, index = resolve_scope(job.constraints, catalog), catalog_index(catalog)
        budget = job.constraints.budget_usd if job.constraints.budget_usd is not None else math.inf
        plain, judged = judge_scope(job, requirements=requirements, per_gpu=per_gpu, index=index, scope=scope,
                                    cpu_adjust=ranking._cpu_adjust(job), hours_known=True)
        book, _ = judge_lazily(job, requirements=requirements, per_gpu=per_gpu, index=index, scope=scope)
        if not any(s.m.transfer for s in plain):  # a moved data set splits machines per job: copies, not the same
            _assert_same_shapes(list(book), plain, name)  # as judged
        # and as collected, built before (the shapes collecting builds) and after
        book, found_judged = judge_lazily(job, requirements=requirements, per_gpu=per_gpu, index=index, scope=scope)
        spans = collect_candidates(plain, scope=scope, objective=job.objective, budget_usd=budget, judged=judged)
        offers = collect_in_arrays(book, found_judged, scope=scope, budget_usd=budget, objective=job.objective)
        assert len(offers) == len(spans)
        built += len(offers.built)
        times, costs, idx = offers.points()
        assert sorted(zip(idx, times, costs, strict=True)) == [
            (sp.shape.idx, sp.shape.time_metric, sp.shape.best_cost) for sp in spans], name
        for sp in offers.built:
            plain_span = next(p for p in spans if p.shape.idx == sp.shape.idx)
            assert (sp.costs, list(sp.offers), sp.min_key) == (plain_span.costs, list(plain_span.offers),
                                                               plain_span.min_key)
        if not any(s.m.transfer for s in plain):
            _assert_same_shapes(list(book), plain, name)
        kinds |= {s.reject for s in plain}
        # the cost/time front of the options: every point, and points a hair off each
        feasible = [(s.time_metric, s.best_cost) for s in plain if s.best_cost < math.inf]
        on_front, least_cost, least_time = options_front(offers)
        plain_test = pareto_test(feasible)
        assert (least_cost, least_time) == (min((c for _, c in feasible), default=math.inf),
                                            min((t for t, _ in feasible), default=math.inf))
        for t, c in feasible:
            for point in ((t, c), (t, c * (1 + 1e-12)), (t, c * (1 - 1e-12)), (t * (1 - 1e-12), c), (t * 2, c / 2)):
                assert on_front(*point) == plain_test(*point), (name, point)
    assert {None, DEADLINE, SPOT_RESTARTS, GPU_MEMORY, HOST_MEMORY} <= kinds
    assert built > 0  # shapes costed offer by offer or over the budget came up


def _answers(raw: dict[str, Any], catalog: Catalog, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any]:
    """Return the ranking (and the recommendation's dump holding it) over arrays, and the plain one's."""
    job = build_job(JobSpecSchema().load(raw))
    known = {g.slug: g for g in catalog.gpus}
    requirements = estimate_requirements(job, known_gpus=known)
    per_gpu = estimate_per_gpu(job, gpu_counts_in_scope(job.constraints, catalog), known)
    out = []
    for in_arrays in (True, False):
        with monkeypatch.context() as m:
            if not in_arrays:
                m.setattr(ranking, "ranks_in_arrays", lambda *a, **k: False)
            rec = ranking.rank_offers(job, requirements=requirements, per_gpu=per_gpu, catalog=catalog)
        out.append((rec, json.dumps(dump_recommendation(rec), sort_keys=True)))
    return out[0], out[1]


@pytest.mark.parametrize("name", list(JOBS))
def test_a_ranking_over_arrays_is_the_plain_ranking(name: str, catalog: Catalog,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[bool] = []
    plain_test = ranking.ranks_in_arrays
    monkeypatch.setattr(ranking, "ranks_in_arrays", lambda *a, **k: calls.append(plain_test(*a, **k)) or calls[-1])
    (arrays, arrays_text), (plain, plain_text) = _answers(JOBS[name], catalog, monkeypatch)
    assert True in calls  # the array path was taken
    assert arrays_text == plain_text
    assert arrays == plain


def test_a_ranking_over_arrays_where_nothing_fits_is_the_plain_ranking(catalog: Catalog,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    raw = {"model": {"preset": "llama2-70b"}, "training": {"batch_size": 1, "sequence_length": 4096,
                                                           "precision": "bf16-mixed", "optimizer": "adamw"},
           "dataset": {"samples": 20000, "bytes": 1_000_000_000}, "constraints": {"max_gpus": 1}}
    (arrays, arrays_text), (_, plain_text) = _answers(raw, catalog, monkeypatch)
    assert arrays.plan and not arrays.options
    assert arrays_text == plain_text


def test_the_book_builds_each_shape_once_and_knows_its_length(catalog: Catalog) -> None:
    raw = JOBS["resnet50 as shipped (balanced, budget, deadline)"]
    job = build_job(JobSpecSchema().load(raw))
    known = {g.slug: g for g in catalog.gpus}
    requirements = estimate_requirements(job, known_gpus=known)
    per_gpu = estimate_per_gpu(job, gpu_counts_in_scope(job.constraints, catalog), known)
    book, _ = judge_lazily(job, requirements=requirements, per_gpu=per_gpu, index=catalog_index(catalog),
                           scope=resolve_scope(job.constraints, catalog))
    assert isinstance(book, ShapeBook) and not book.made
    assert book[3] is book[3] and list(book.made) == [3]
    with pytest.raises(IndexError):
        book[len(book)]
    assert len(list(book)) == len(book) == len(book.made)


def test_a_list_longer_than_the_array_limit_is_ranked_plainly(catalog: Catalog) -> None:
    job = build_job(JobSpecSchema().load(JOBS["bert balanced, a list of one"]))
    scope = resolve_scope(job.constraints, catalog)
    assert ranking.ranks_in_arrays(job, scope, hours_known=True, carbon_ranks=False, owned=False)
    longer = build_job(JobSpecSchema().load({**JOBS["bert balanced, a list of one"],
                                             "limit": ranking.ARRAYS_MAX_LIMIT + 1}))
    assert not ranking.ranks_in_arrays(longer, scope, hours_known=True, carbon_ranks=False, owned=False)


def test_machines_without_an_estimate_are_rejected_alike_over_arrays(catalog: Catalog,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    job = build_job(JobSpecSchema().load(JOBS["resnet50 as shipped (balanced, budget, deadline)"]))
    known = {g.slug: g for g in catalog.gpus}
    requirements = estimate_requirements(job, known_gpus=known)
    per_gpu = estimate_per_gpu(job, gpu_counts_in_scope(job.constraints, catalog), known)
    dropped = sorted({gpu for gpu, _ in per_gpu})[::3]  # every third GPU model has no estimate
    partial = {pair: pg for pair, pg in per_gpu.items() if pair[0] not in dropped}
    answers = []
    for in_arrays in (True, False):
        with monkeypatch.context() as m:
            if not in_arrays:
                m.setattr(ranking, "ranks_in_arrays", lambda *a, **k: False)
            answers.append(ranking.rank_offers(job, requirements=requirements, per_gpu=partial, catalog=catalog))
    assert any(r.reason.startswith("no memory or time estimate") for r in answers[0].rejected)
    assert answers[0] == answers[1]
