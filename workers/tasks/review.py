"""The Celery tasks of a large budget review: fanned out over the workers in chunks, joined when all are in.

`gpugauge.review` (the job's own task, the one its replay re-runs) splits the review's jobs into chunks of
REVIEW_CHUNK_JOBS and queues one `gpugauge.review_chunk` for each chunk whose result is not kept yet.
Each chunk reviews its jobs, keeps its result in the job registry once (a redelivered chunk is never
counted twice) and moves the job's progress; the chunk that brings the last result in joins them in
order into the whole review (totals, buy-vs-rent) and records it. A chunk lost with a killed worker
comes back (late acks, reject on worker lost; beat's lost-job sweep re-runs the job's task, which queues
only what is missing); a join that died is done again by whichever chunk or re-run finds all chunks in.
Celery's chord is not used: it needs a result backend, which this service keeps off (celery_app.py).
In the embedded mode the same tasks run on the in-process thread pool.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from collections.abc import Sequence
from typing import Any

from cattrs import Converter
from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded
from flask import current_app
from marshmallow import ValidationError

from workers.ranking.recommend import recommend
from workers.review.ownership import ReviewUse
from workers.review.review import ReviewResult, combine_review, merge_use, review_jobs
from workers.review.totals import OK, JobReview
from workers.schemas.review_result import JobReviewSchema, ReviewResultSchema
from workers.schemas.reviews import build_review, load_review
from workers.sizing.errors import SizingError
from workers.tasks.jobs import RUNNING, TERMINAL, JobStore, dumps, finish, mark_running, now_iso
from workers.tasks.outage import when_redis_answers
from workers.tasks.problems import problem, problem_for
from workers.tasks.runs import calibration_for
from workers.tasks.runtime import runtime

REVIEW_TASK = "gpugauge.review"
REVIEW_CHUNK_TASK = "gpugauge.review_chunk"
REVIEW_CHUNK_TIME_LIMIT_S = 300
REVIEW_CHUNK_SOFT_TIME_LIMIT_S = 270

_CONVERTER = Converter()  # JobReview (frozen dataclasses, enums, tuples) to JSON-able dicts and back


def record_progress(store: JobStore, job_id: str, *, done: int, total: int) -> None:
    """Write how many of the review's jobs are done onto the running job's record."""
    record = store.get(job_id)
    if record is not None and record["status"] == RUNNING:
        store.advance(job_id, expected_status=RUNNING,
                      record={**record, "progress": {"done": done, "total": total}})


def chunk_bounds(total_jobs: int, *, chunk_jobs: int, alike: Sequence[object] | None = None) -> list[tuple[int, int]]:
    """Return the [start, stop) of each chunk of a review of `total_jobs` (in shape order).

    With `alike` (each place's spec, in the same order), a chunk cut inside a run of jobs of one spec
    takes the rest of that run, up to ALIKE_CHUNK_FACTOR x `chunk_jobs` jobs: a chunk ranks each spec
    once, so a spec's 250 jobs in one chunk cost one ranking, not ten (a 10,000-job review of 40 specs
    ranked 400 times, 86 s of worker CPU). Chunks of distinct jobs are cut as before.
    """
    size = max(chunk_jobs, 1)
    bounds: list[tuple[int, int]] = []
    start = 0
    while start < total_jobs:
        stop = min(start + size, total_jobs)
        if alike is not None:
            longest = start + ALIKE_CHUNK_FACTOR * size
            while stop < min(total_jobs, longest) and alike[stop] == alike[stop - 1]:
                stop += 1
        bounds.append((start, stop))
        start = stop
    return bounds


ALIKE_CHUNK_FACTOR = 20


def _spec_key(job: Any) -> str:
    spec = job.get("spec") if isinstance(job, dict) else None
    return json.dumps(spec, sort_keys=True, default=str)


def shape_order(jobs: list[Any]) -> list[int]:
    """Return the review's job positions with those of the same spec together (first seen first).

    Chunks cut from this order hold jobs alike together, and a chunk ranks each distinct job once
    (workers/review/review.py review_jobs): a quarterly review's repeated jobs are ranked once per chunk.
    """
    groups: dict[str, list[int]] = {}
    for position, job in enumerate(jobs):
        groups.setdefault(_spec_key(job), []).append(position)
    return [position for members in groups.values() for position in members]


@shared_task(name=REVIEW_TASK, acks_late=True, reject_on_worker_lost=True)  # type: ignore[untyped-decorator]
def review_job(job_id: str, request: dict[str, Any], validated: bool = False) -> dict[str, Any]:
    """Queue the review's chunks whose results are not kept yet; join them if every one is in already.

    `validated`: the request is the API's loaded review (service/api/reports.py), so its chunks build
    their jobs without passing the schema again; anything else is loaded as a raw review.
    """
    rt, what = runtime(), f"review job {job_id}"
    when_redis_answers(lambda: mark_running(rt.jobs, job_id), what=what)
    jobs = request.get("jobs") or []
    order = shape_order(jobs)  # the same on every run of this task: a re-run queues the same chunks
    bounds = chunk_bounds(len(jobs), chunk_jobs=int(current_app.config["REVIEW_CHUNK_JOBS"]),
                          alike=[_spec_key(jobs[p]) for p in order])
    kept = when_redis_answers(lambda: rt.jobs.chunk_payloads(job_id), what=what)
    missing = [i for i in range(len(bounds)) if i not in kept]
    for index in missing:
        start, stop = bounds[index]
        positions = order[start:stop]
        args = (job_id, index, len(bounds), start, {**request, "jobs": [jobs[p] for p in positions]}, len(jobs),
                positions, validated)
        when_redis_answers(functools.partial(rt.queue.enqueue, REVIEW_CHUNK_TASK, *args), what=what)
    if not missing and bounds:
        _join(job_id, request, chunks=len(bounds), validated=validated)
    return {"id": job_id, "status": "running", "chunks": len(bounds), "queued": len(missing)}


@shared_task(name=REVIEW_CHUNK_TASK, acks_late=True, reject_on_worker_lost=True,  # type: ignore[untyped-decorator]
             time_limit=REVIEW_CHUNK_TIME_LIMIT_S, soft_time_limit=REVIEW_CHUNK_SOFT_TIME_LIMIT_S)
def review_chunk(job_id: str, index: int, chunks: int, first: int, request: dict[str, Any],
                 total_jobs: int, positions: list[int] | None = None, validated: bool = False) -> dict[str, Any]:
    """Review one chunk's jobs and keep the result once; the chunk that completes the set joins them.

    `positions`: the chunk's jobs' places in the whole review (None: `first` on, in order). `validated`:
    the request was loaded by the API (review_job). What is kept is `chunk_payload`'s: each job's part of
    the document, dumped here, in parallel with the other chunks, not by the join.
    """
    rt, what = runtime(), f"review job {job_id} chunk {index}"
    ttl_s = int(current_app.config["RESULT_TTL_S"])
    try:
        payload, count = "", 0
        if not when_redis_answers(lambda: rt.jobs.has_chunk(job_id, index=index), what=what):
            review = build_review(request) if validated else load_review(request)[1]
            catalog = rt.catalog.get()
            calibration = calibration_for(rt.runs, catalog)
            places = positions if positions is not None else list(range(first, first + len(review.items)))
            jobs, use = review_jobs(review, catalog, positions=places, recommend_fn=lambda job, cat: recommend(
                job, cat, calibration=calibration, brief=True), explain_fn=lambda job, cat: recommend(
                job, cat, calibration=calibration))
            payload, count = chunk_payload(jobs, positions=places, use=use), len(jobs)
        _, complete = when_redis_answers(lambda: rt.jobs.add_chunk(
            job_id, index=index, payload=payload, jobs=count, chunks=chunks, total_jobs=total_jobs,
            at=now_iso()), what=what)
        if complete:
            _join(job_id, request, chunks=chunks, validated=validated)
    except (ValidationError, SizingError) as error:
        refused = problem_for(error)
        when_redis_answers(lambda: finish(rt.jobs, job_id, problem=refused, ttl_s=ttl_s), what=what)
        return {"id": job_id, "chunk": index, "status": "failed"}
    except SoftTimeLimitExceeded:
        late = problem(500, detail="a chunk of the review ran past its time limit")
        when_redis_answers(lambda: finish(rt.jobs, job_id, problem=late, ttl_s=ttl_s), what=what)
        return {"id": job_id, "chunk": index, "status": "failed"}
    except Exception as error:
        broken = problem_for(error)
        when_redis_answers(lambda: finish(rt.jobs, job_id, problem=broken, ttl_s=ttl_s), what=what)
        raise
    return {"id": job_id, "chunk": index, "status": "kept"}


def _join(job_id: str, request: dict[str, Any], *, chunks: int, validated: bool = False) -> None:
    """Join every chunk's result, in order, into the whole review and record it (unless already recorded).

    The totals are worked out from the jobs' slim reviews; the document's `jobs` are the chunks' parts
    spliced in order, never decoded here (a 1,000-job review's were 14 MB to parse, structure and dump).
    """
    rt, what = runtime(), f"review job {job_id} join"
    stored = when_redis_answers(lambda: rt.jobs.get_stored(job_id), what=what)
    if stored is None or stored[0] in TERMINAL:
        return
    payloads = when_redis_answers(lambda: rt.jobs.chunk_payloads(job_id), what=what)
    if len(payloads) < chunks:
        return
    placed: list[tuple[int, JobReview, str]] = []
    uses: list[dict[str, ReviewUse]] = []
    for index in range(chunks):
        slim, documents, positions, use = _read_chunk(payloads[index], first=len(placed))
        placed += zip(positions, slim, documents, strict=True)
        uses.append(use)
    placed.sort(key=lambda entry: entry[0])
    top = {**request, "jobs": (request.get("jobs") or [])[:1]}  # its own fields: name, budget, providers, on-prem
    review = build_review(top) if validated else load_review(top)[1]
    whole = combine_review(review, rt.catalog.get(), jobs=[entry[1] for entry in placed], use=merge_use(uses))
    document = spliced_document(whole, [entry[2] for entry in placed])
    ttl_s = int(current_app.config["RESULT_TTL_S"])
    when_redis_answers(lambda: finish(rt.jobs, job_id, result_json=document, ttl_s=ttl_s), what=what)
    when_redis_answers(lambda: rt.jobs.drop_chunks(job_id), what=what)


# The first line of a chunk's payload is its meta (PAYLOAD_VERSION); each further line is one job's part
# of the document. Compact JSON holds no raw newline (json.dumps escapes it inside strings).
PAYLOAD_VERSION = 2


def chunk_payload(jobs: Sequence[JobReview], *, positions: Sequence[int], use: dict[str, ReviewUse]) -> str:
    """Return what a chunk keeps: its jobs' places, GPU use and slim reviews (what the totals read), then
    each job's document part (JobReviewSchema), a line each."""
    meta = {"v": PAYLOAD_VERSION, "positions": list(positions), "use": _CONVERTER.unstructure(use),
            "jobs": [_CONVERTER.unstructure(_slim(job)) for job in jobs]}
    return "\n".join([json.dumps(meta, separators=(",", ":")), *job_documents(jobs)])


def _read_chunk(payload: str, *, first: int) -> tuple[list[JobReview], list[str], Sequence[int],
                                                      dict[str, ReviewUse]]:
    """Return a kept chunk's slim reviews, document parts, positions and GPU use.

    A chunk kept before PAYLOAD_VERSION 2 holds its full reviews as JSON: they are dumped here. One kept
    before positions were kept holds the next jobs in order (from `first`).
    """
    head, _, body = payload.partition("\n")
    meta = json.loads(head)
    reviews = [_CONVERTER.structure(job, JobReview) for job in meta["jobs"]]
    if meta.get("v") == PAYLOAD_VERSION:
        documents = body.split("\n") if reviews else []
    else:
        documents, reviews = job_documents(reviews), [_slim(job) for job in reviews]
    positions = meta.get("positions") or range(first, first + len(reviews))
    return reviews, documents, positions, _CONVERTER.structure(meta["use"], dict[str, ReviewUse])


def _slim(job: JobReview) -> JobReview:
    """Return the job's review without what only its document shows (front, sample, sweep, warnings)."""
    return dataclasses.replace(job, front=(), sample=(), sweep_comparison=None, warnings=())


def job_documents(jobs: Sequence[JobReview]) -> list[str]:
    """Return each job's part of the review document, as ReviewResultSchema writes it (compact JSON).

    Jobs alike (the same review but for their names and teams, as review_jobs makes them) are dumped
    once: the rest of their part is shared, their own name and team written before it.
    """
    schema = JobReviewSchema()
    shared: dict[JobReview, str] = {}
    documents = []
    for job in jobs:
        key = dataclasses.replace(job, name="", team="")
        rest = shared.get(key) if job.status == OK else None
        if rest is None:
            dumped: dict[str, Any] = schema.dump(job)
            if job.status != OK or list(dumped)[:2] != ["name", "team"]:
                documents.append(dumps(dumped))
                continue
            rest = shared[key] = dumps({k: v for k, v in dumped.items() if k not in ("name", "team")})
        own = f'{{"name":{dumps(job.name)},"team":{dumps(job.team)}'
        documents.append(own + ("}" if rest == "{}" else "," + rest[1:]))
    return documents


def spliced_document(review: ReviewResult, job_documents: Sequence[str]) -> str:
    """Return the review's JSON document (as dumps(ReviewResultSchema().dump(review)) writes it) with
    `jobs` the given parts, in order."""
    top: dict[str, Any] = ReviewResultSchema().dump(dataclasses.replace(review, jobs=()))
    jobs = "[" + ",".join(job_documents) + "]"
    return "{" + ",".join(f"{dumps(key)}:{jobs if key == 'jobs' else dumps(value)}" for key, value in top.items()) + "}"
