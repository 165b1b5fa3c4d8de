"""The identity memo: values per (object, key), forgotten with the object; sized; no model kept alive."""

from __future__ import annotations

import gc
import weakref

from workers.sizing.memo import IdentityMemo


class _Owner:
    pass


def test_values_are_remembered_per_owner_and_key() -> None:
    memo: IdentityMemo[int] = IdentityMemo(8)
    a, b = _Owner(), _Owner()
    assert memo.get(a, 1, lambda: 10) == 10
    assert memo.get(a, 1, lambda: 11) == 10  # remembered
    assert memo.get(a, 2, lambda: 20) == 20
    assert memo.get(b, 1, lambda: 30) == 30
    assert len(memo) == 3


def test_an_owner_that_dies_takes_its_values_with_it_and_is_not_kept_alive() -> None:
    memo: IdentityMemo[list[int]] = IdentityMemo(8)
    owner = _Owner()
    alive = weakref.ref(owner)
    memo.get(owner, "x", lambda: [1])
    memo.get(owner, "y", lambda: [2])
    del owner
    gc.collect()
    assert alive() is None
    assert len(memo) == 0
    # a new object at a reused address gets its own value, never the dead one's
    for _ in range(50):
        fresh = _Owner()
        assert memo.get(fresh, "x", lambda: [3]) == [3]
        del fresh


def test_the_oldest_pair_goes_first_and_an_unreferable_owner_is_held() -> None:
    memo: IdentityMemo[int] = IdentityMemo(2)
    owner, held = _Owner(), (1, 2)  # a tuple cannot be weakly referenced
    memo.get(owner, 1, lambda: 1)
    memo.get(held, 1, lambda: 2)
    memo.get(held, 2, lambda: 3)
    assert len(memo) == 2
    assert memo.get(owner, 1, lambda: 4) == 4  # evicted, worked out again
    assert memo.get(held, 2, lambda: 5) == 3


def test_an_estimate_keeps_no_model_alive_after_its_job() -> None:
    from catalog.gpus import gpus_by_slug
    from workers.schemas import EstimateRequestSchema
    from workers.schemas.specs import build_job
    from workers.sizing.estimate import estimate_requirements

    block = [{"type": "linear", "out_features": 64}, {"type": "relu"}]
    raw = {"model": {"input_shape": [64], "layers": block * 600}, "training": {"batch_size": 8}}
    job = build_job(EstimateRequestSchema().load(raw))
    model = weakref.ref(job.model)
    estimate_requirements(job, known_gpus=gpus_by_slug())
    del job
    gc.collect()
    assert model() is None  # the sizing memos held 1,200 rows of every model they had seen


def test_threads_sharing_a_memo_get_their_own_values_while_owners_come_and_go() -> None:
    import threading

    memo: IdentityMemo[tuple[int, int]] = IdentityMemo(16)  # the embedded mode runs jobs in a thread pool
    errors: list[BaseException] = []

    def work(n: int) -> None:
        try:
            for i in range(2_000):
                owner = _Owner()
                for key in range(3):
                    assert memo.get(owner, key, lambda i=i, key=key: (n * 10_000 + i, key)) == (n * 10_000 + i, key)
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    gc.collect()
    assert len(memo) == 0
