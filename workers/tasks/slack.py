"""The Celery task that answers a queued slash command at its response_url; its one argument is a job id.

It lives in service/ (registered when service.api.slack is imported, as the app factory does) so
that it may use the service's schemas and Block Kit rendering; workers/ never imports service/.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded
from marshmallow import ValidationError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from catalog.gpu_names import model_word
from catalog.types import GpuSpec
from workers.ranking.owned_fit import same_cards_fixes
from workers.ranking.recommend import check_recommendable
from workers.schemas import RequirementsSchema
from workers.schemas.specs import flatten_errors, load_job
from workers.sizing.errors import SizingError
from workers.sizing.estimate import estimate_on_gpus
from workers.sizing.largest_batch import largest_batch
from workers.sizing.requirements import Requirements
from workers.slack.blocks import Message, fix_words, render_error, render_fit, render_recommendation
from workers.slack.buying import runs_per_year
from workers.slack.delivery import DeliveryError, deliver
from workers.slack.settings import slack_settings
from workers.slack.wording import describe_errors
from workers.tasks.recommend import shared_recommendation
from workers.tasks.runs import calibration_for
from workers.tasks.runtime import runtime

log = logging.getLogger(__name__)

SLACK_TASK = "gpugauge.slack.answer"
# How long an answer waits for the shared recommendation job another worker is running before running
# it here: well inside the task's soft time limit (TASK_SOFT_TIME_LIMIT_S, 100 s) and Slack's 30 minutes.
SLACK_JOB_WAIT_S = 30.0
MOST_BATCH_SEARCHES = 4  # a fit answer's largest batch, for its first cards (each search sizes the job ~15 times)


# A post Slack did not take, or a lost Redis, can heal; everything else is answered once.
@shared_task(name=SLACK_TASK, acks_late=True, reject_on_worker_lost=True, max_retries=3,  # type: ignore[untyped-decorator]
             autoretry_for=(DeliveryError, RedisConnectionError, RedisTimeoutError), retry_backoff=True)
def answer_slack_command(job_id: str) -> dict[str, str]:
    """Size or rank the command stored under `job_id` and post the answer, or a readable error."""
    settings = slack_settings()
    command = settings.jobs.command(job_id)
    if command is None or settings.jobs.delivered(job_id):
        log.info("slack job %s: nothing to do (expired or already answered)", job_id)
        return {"id": job_id, "status": "skipped"}
    message = compose_answer(command, answerer=settings.answerer or answer_command, job_id=job_id)
    posted = deliver(job_id, message, jobs=settings.jobs, webhook_factory=settings.webhook_factory)
    return {"id": job_id, "status": "posted" if posted else "skipped"}


def answer_command(command: Mapping[str, Any]) -> Message:
    """Rank the offers for a command's spec, or fit it on its GPUs, and render the answer."""
    rt = runtime()
    catalog = rt.catalog.get()
    calibration = calibration_for(rt.runs, catalog)
    data, job = load_job(command["spec"])
    if command["kind"] == "fit":
        requirements = estimate_on_gpus(job, catalog.gpus, slugs=command["gpus"],
                                        gpu_count=int(command["gpu_count"]), calibration=calibration)
        largest = {row.gpu: largest_batch(job, catalog.gpus, slug=row.gpu, gpu_count=row.gpu_count)
                   for row in requirements.per_gpu[:MOST_BATCH_SEARCHES]}  # "what batch size can i use on a v100"
        return render_fit(RequirementsSchema().dump(requirements), title=command["title"],
                          fixes=fit_fixes(requirements, catalog.gpus), largest=largest)
    # The API's shared job for this spec: read when done, waited for when another worker runs it, else
    # run here and recorded on it (workers/tasks/recommend.py); an identical API request shares it.
    check_recommendable(job, catalog)
    result = shared_recommendation(data, wait_s=SLACK_JOB_WAIT_S)
    named = command["spec"].get("constraints", {}).get("providers") or ()
    models = {model_word(slug) for slug in command["spec"].get("constraints", {}).get("gpus") or ()}
    return render_recommendation(result, title=command["title"], purchase="onprem" in named, compare=len(models) > 1,
                                 per_year=runs_per_year(command["title"]))  # "every week": the break-even in years


def fit_fixes(requirements: Requirements, gpus: Sequence[GpuSpec]) -> dict[str, str]:
    """Return, for each card the job as given does not fit, the same-card change that fits it, in words."""
    return {slug: fix_words(fix) for slug, fix in same_cards_fixes(requirements, gpus).items()}


def compose_answer(command: Mapping[str, Any], *, answerer: Any, job_id: str) -> Message:
    """Return the answer, or an error message a person can act on; never raise, never stay silent."""
    try:
        message: Message = answerer(command)
        return message
    except SizingError as error:
        problems = describe_errors({error.field: [error.reason]})
        return render_error("gpugauge cannot size this job", problems=problems)
    except ValidationError as error:
        return render_error("gpugauge cannot size this job",
                            problems=describe_errors(flatten_errors(error.messages)))
    except SoftTimeLimitExceeded:
        log.warning("slack job %s: ran past its time limit", job_id)
        return render_error("gpugauge took too long on this job",
                            problems=["name fewer providers or regions, or ask for fewer GPUs with gpus="])
    except Exception:  # any bug still owes the user an answer; the traceback goes to the log
        log.exception("slack job %s: failed", job_id)
        return render_error("gpugauge hit an internal error", detail=f"It is logged as job {job_id}; "
                            "try again in a minute, and tell the team if it keeps happening.")
