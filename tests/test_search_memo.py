"""best_layout remembers its searches: the remembered answer is the search's, and is dropped when it could differ."""

from __future__ import annotations

from dataclasses import replace

import pytest

from catalog.types import Catalog
from workers.modelimport.models import _layer_list_stats
from workers.schemas.specs import load_job
from workers.sizing import efficiency, timing
from workers.sizing.spec import JobSpec
from workers.sizing.strategies import search
from workers.sizing.strategies.search import best_layout, search_layouts

BF16_ADAMW = {"precision": "bf16-mixed", "optimizer": "adamw"}
JOBS = {
    "gpt2": {"model": {"preset": "gpt2"}, "training": {"batch_size": 12, "sequence_length": 1024, **BF16_ADAMW,
                                                       "update_interval": 5}},
    "resnet50": {"model": {"preset": "resnet50"}, "training": {"batch_size": 128, "precision": "fp16-mixed",
                                                               "optimizer": "momentum"}},
    "llama-7b": {"model": {"preset": "llama-7b"}, "training": {"batch_size": 4, "sequence_length": 2048,
                                                               **BF16_ADAMW}},
}
# (GPU, GPUs per machine, machines, network Gbit/s, host memory, host need): one machine, several, a small host
SHAPES = [("b200", 8, 1, 0.0, 1 << 62, 0), ("b200", 8, 4, 3200.0, 1 << 62, 0), ("a100-80gb", 8, 2, 400.0, 1 << 62, 0),
          ("l4", 4, 1, 0.0, 192 * 2**30, 64 * 2**30), ("t4", 1, 1, 0.0, 1 << 62, 0)]


def _job(name: str) -> JobSpec:
    return load_job(JOBS[name])[1]


def _ask(job: JobSpec, cat: Catalog, shape: tuple[str, int, int, float, int, int], *, remembered: bool) -> object:
    gpu, per_node, nodes, network, host, need = shape
    ask = best_layout if remembered else search_layouts
    return ask(job, cat.gpu(gpu), gpus_per_node=per_node, nodes=nodes, network_gbit_per_s=network,
               host_memory_bytes=host, host_need_bytes=need)


@pytest.mark.parametrize("name", sorted(JOBS))
def test_a_remembered_search_is_the_search(shipped: Catalog, name: str) -> None:
    job = _job(name)
    for shape in SHAPES:
        searched = _ask(job, shipped, shape, remembered=False)
        assert _ask(job, shipped, shape, remembered=True) == searched  # asked first (or remembered earlier)
        assert _ask(job, shipped, shape, remembered=True) == searched  # asked again
        # a new job object on the same model and training asks the same question
        assert _ask(replace(job, limit=3), shipped, shape, remembered=True) == searched


def test_another_training_is_searched_again(shipped: Catalog) -> None:
    job = _job("gpt2")
    smaller = replace(job, training=replace(job.training, batch_size=2))
    shape = ("l4", 4, 1, 0.0, 1 << 62, 0)
    assert _ask(smaller, shipped, shape, remembered=True) == _ask(smaller, shipped, shape, remembered=False)
    assert _ask(job, shipped, shape, remembered=True) == _ask(job, shipped, shape, remembered=False)


def test_changed_factors_drop_the_remembered_searches(shipped: Catalog, monkeypatch: pytest.MonkeyPatch) -> None:
    job = _job("gpt2")
    shape = SHAPES[1]
    before = _ask(job, shipped, shape, remembered=True)
    monkeypatch.setattr(efficiency, "BANDWIDTH_EFFICIENCY", efficiency.BANDWIDTH_EFFICIENCY * 0.5)
    timing.forget_cached_times()  # what the calibration tool does after writing a factor
    try:
        after = _ask(job, shipped, shape, remembered=True)
        assert after == _ask(job, shipped, shape, remembered=False)
        assert after != before
    finally:
        monkeypatch.undo()
        timing.forget_cached_times()


def test_the_memory_of_searches_is_bounded(shipped: Catalog, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(search, "SEARCHES_KEPT", 2)
    job = _job("resnet50")
    for shape in SHAPES:
        _ask(job, shipped, shape, remembered=True)
    assert len(search._SEARCHES) <= 2


@pytest.mark.parametrize("name", sorted(JOBS))
def test_layouts_left_untimed_change_no_answer(shipped: Catalog, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A layout that even without communication cannot beat the best is not timed; timing it changes nothing."""
    job = _job(name)
    kept = [_ask(job, shipped, shape, remembered=False) for shape in SHAPES]
    monkeypatch.setattr(search, "cannot_be_faster", lambda *args, **kwargs: False)  # time every layout that fits
    assert [_ask(job, shipped, shape, remembered=False) for shape in SHAPES] == kept


def test_a_remembered_search_keeps_no_model_alive(shipped: Catalog) -> None:
    import gc
    import weakref

    block = [{"type": "embedding", "vocab": 1000, "dim": 64},
             *[{"type": "transformer_block", "heads": 4, "ffn": 256}] * 4, {"type": "linear", "out_features": 1000}]
    job = load_job({"model": {"layers": block}, "training": {"batch_size": 4, "sequence_length": 128, **BF16_ADAMW}})[1]
    alive = weakref.ref(job.model)
    first = _ask(job, shipped, SHAPES[0], remembered=True)
    assert first is not None and _ask(job, shipped, SHAPES[0], remembered=True) is first  # remembered meanwhile
    del job
    _layer_list_stats.cache_clear()  # the last 16 small layer lists are held on purpose (modelimport/models.py)
    gc.collect()
    assert alive() is None  # the memo held every model it had searched (up to 1,024)


def test_a_job_that_differs_only_in_its_run_length_shares_the_search_and_another_batch_does_not(
        shipped: Catalog) -> None:
    from workers.sizing.spec import step_training

    job = _job("gpt2")
    longer = replace(job, training=replace(job.training, epochs=7.5, eval_every_epochs=2, learning_rate=3e-4,
                                           checkpoint_every_hours=2.0))
    assert step_training(longer.training) == step_training(job.training)
    shape = SHAPES[1]
    first = _ask(job, shipped, shape, remembered=True)
    assert first is not None and _ask(longer, shipped, shape, remembered=True) is first  # shared, not searched again
    assert _ask(longer, shipped, shape, remembered=False) == first  # and what a search of it gives
    smaller = replace(job, training=replace(job.training, batch_size=6))
    assert step_training(smaller.training) != step_training(job.training)
    assert _ask(smaller, shipped, shape, remembered=True) == _ask(smaller, shipped, shape, remembered=False)


def test_the_envelopes_remembered_answers_are_its_arithmetic(shipped: Catalog,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """searched_memory remembers each (micro-batch, GPU) answer on the envelope: asked in one order over
    cards (whose reserves differ) and micro-batches, each answer equals the one a fresh envelope gives
    to that question alone, and asking again returns the remembered object."""
    from workers.sizing.memo import IdentityMemo
    from workers.sizing.strategies import footprint
    from workers.sizing.strategies.parallelism import DataParallel, Layout

    job = load_job({"model": {"preset": "resnet50"}, "training": {"batch_size": 64, "optimizer": "momentum"}})[1]
    layout = Layout(data_parallel=DataParallel.ZERO1, gpu_count=4, gpus_per_node=4)
    # fp32 cards of three generations: one envelope, three CUDA contexts (overheads.CUDA_CONTEXT_BYTES)
    questions = [(slug, b, 4 // b) for slug in ("gtx-1080-ti", "v100-16gb", "titan-x-maxwell") for b in (4, 2, 1)]

    def ask(slug: str, b: int, u: int) -> footprint.LayoutMemory:
        return footprint.searched_memory(job, layout, gpu=shipped.gpu(slug), batch_size=b, update_interval=u)

    monkeypatch.setattr(footprint, "_ENVELOPES", IdentityMemo(size=4096))
    remembered = {q: ask(*q) for q in questions}
    assert len({m.total_bytes for m in remembered.values()}) > 3  # the answers differ by card and batch
    assert all(ask(*q) is remembered[q] for q in questions)
    for q in questions:
        monkeypatch.setattr(footprint, "_ENVELOPES", IdentityMemo(size=4096))  # nothing remembered
        assert ask(*q) == remembered[q]
