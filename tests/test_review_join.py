"""A fanned-out review's join: each chunk keeps its jobs' document parts, the join splices them in order.

The document the join writes must be the one a single pass writes (ReviewResultSchema, compact JSON),
whatever the chunks, for jobs alike (dumped once, named each), failed jobs and sweeps; and a chunk kept
in the former format (full reviews as JSON) joins the same.
"""

from __future__ import annotations

import json
import math

from catalog.types import Catalog
from tests.review_builders import FakeRanking, card, catalog, gpu_spec, item, option, per_gpu, recommendation
from workers.review.budget import Review, Sweep, SweepKind
from workers.review.review import combine_review, merge_use, review_jobs, run_review
from workers.schemas.review_result import ReviewResultSchema
from workers.sizing.errors import SpecError
from workers.tasks.records import dumps
from workers.tasks.review import (
    _CONVERTER,
    ALIKE_CHUNK_FACTOR,
    _read_chunk,
    chunk_bounds,
    chunk_payload,
    job_documents,
    spliced_document,
)

CHEAP = option("g4dn.xlarge", hours=10.0, price=0.5, gpu="t4")
FAST = option("p4d.1", hours=2.0, price=8.0, gpu="a100-40gb")
FOUR_SMALL = option("g4dn.12xlarge", hours=3.0, price=4.0, gpu="t4", gpu_count=4)
ROWS = (per_gpu("t4", hours=10.0), per_gpu("a100-40gb", hours=2.0))


def _catalog() -> Catalog:
    return catalog(gpus=[gpu_spec("t4", memory_gib=16, bandwidth_gb_per_s=320)], cards=[card("t4", 2000.0, 70)])


def _review() -> tuple[Review, FakeRanking]:
    ranking = FakeRanking({"train": recommendation([CHEAP, FAST], per_gpu_rows=ROWS),
                           "tune": recommendation([CHEAP, FAST, FOUR_SMALL], per_gpu_rows=ROWS),
                           "bad": SpecError("constraints.regions", "unknown region 'mars-1'")})
    train = item("train").job
    items = (
        item("train", team="vision", deadline_hours=12.0),
        item("tune", team="nlp", runs=12, sweep=Sweep(SweepKind.GRID, 2)),
        item("bad", team="ops"),
        item('the "same" train', team="speech\nteam", deadline_hours=12.0, spec=train),  # alike, quoted, a newline
        item("train again", team="vision", runs=3, spec=train),  # the same ranking, another review
    )
    return Review(name="q3", budget_usd=100.0, items=items), ranking


def test_the_spliced_document_is_the_one_pass_document() -> None:
    review, ranking = _review()
    one_pass = dumps(ReviewResultSchema().dump(run_review(review, _catalog(), recommend_fn=ranking)))
    jobs, use = review_jobs(review, _catalog(), recommend_fn=ranking)
    whole = combine_review(review, _catalog(), jobs=jobs, use=use)
    assert spliced_document(whole, job_documents(jobs)) == one_pass
    first, fourth = job_documents(jobs)[0], job_documents(jobs)[3]
    assert json.loads(fourth)["name"] == 'the "same" train' and json.loads(fourth)["team"] == "speech\nteam"
    assert {**json.loads(first), "name": "", "team": ""} == {**json.loads(fourth), "name": "", "team": ""}


def test_chunks_kept_now_and_in_the_former_format_join_to_the_one_pass_document() -> None:
    review, ranking = _review()
    one_pass = json.loads(dumps(ReviewResultSchema().dump(run_review(review, _catalog(), recommend_fn=ranking))))
    parts = []
    for start, stop in ((0, 2), (2, 5)):
        part = Review(name=review.name, budget_usd=review.budget_usd, items=review.items[start:stop])
        jobs, use = review_jobs(part, _catalog(), first_index=start, recommend_fn=ranking)
        positions = list(range(start, stop))
        parts.append(chunk_payload(jobs, positions=positions, use=use) if start == 0 else json.dumps(
            {"jobs": _CONVERTER.unstructure(jobs), "positions": positions, "use": _CONVERTER.unstructure(use)}))
    assert "\n" in parts[0] and all("\n" not in line for line in parts[1:])
    placed, uses = [], []
    for payload in parts:
        slim, documents, positions, use = _read_chunk(payload, first=len(placed))
        assert all(job.front == () and job.sample == () for job in slim)  # the totals never read them
        placed += zip(positions, slim, documents, strict=True)
        uses.append(use)
    whole = combine_review(review, _catalog(), jobs=[p[1] for p in placed], use=merge_use(uses))
    joined = json.loads(spliced_document(whole, [p[2] for p in placed]))
    assert joined["jobs"] == one_pass["jobs"]
    assert [j["error"] for j in joined["jobs"]][2] == {"field": "jobs[2].spec.constraints.regions",
                                                        "reason": "unknown region 'mars-1'"}
    for key in ("total", "teams", "standing", "yearly"):
        assert joined[key] == one_pass[key]
    # GPU hours summed per chunk, then over chunks: equal to the one pass up to the order of the additions
    hours = {row["gpu"]: row["review_hours"] for row in joined["buy_vs_rent"]}
    assert all(math.isclose(hours[row["gpu"]], row["review_hours"]) for row in one_pass["buy_vs_rent"])


def test_a_chunk_takes_the_rest_of_its_run_of_alike_jobs_up_to_a_bound() -> None:
    assert chunk_bounds(8, chunk_jobs=2) == [(0, 2), (2, 4), (4, 6), (6, 8)]
    assert chunk_bounds(8, chunk_jobs=2, alike=list("aaaaabbc")) == [(0, 5), (5, 7), (7, 8)]
    longest = 2 * ALIKE_CHUNK_FACTOR
    bounds = chunk_bounds(100, chunk_jobs=2, alike=["a"] * 100)
    assert bounds[0] == (0, longest) and bounds[-1][1] == 100 and all(b - a <= longest for a, b in bounds)
    assert [a for a, _ in bounds[1:]] == [b for _, b in bounds[:-1]]  # every job in exactly one chunk
