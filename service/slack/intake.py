"""A verified slash command turned into its immediate reply: help, a parse error, or a queued job's ack.

Everything here must finish well inside Slack's 3 seconds (docs.slack.dev/interactivity/
implementing-slash-commands: "respond within 3000 ms"), so the sizing itself is left to the task;
only the grammar and the schema run here. Every reply is ephemeral (only the asker sees it) and
answered with HTTP 200, even when the queue is down, since Slack shows any other status as a failure.
"""

from __future__ import annotations

import html
import logging
from collections.abc import Mapping
from dataclasses import replace
from typing import Any
from urllib.parse import parse_qs

from kombu.exceptions import OperationalError as KombuOperationalError
from marshmallow import ValidationError
from redis.exceptions import RedisError

from catalog.store import CatalogStoreError
from workers.schemas.specs import flatten_errors, load_job
from workers.sizing.presets.hf_presets import SAME_LAYERS
from workers.sizing.presets.registry import PRESETS
from workers.sizing.throughput import has_bf16
from workers.slack.blocks import Message, render_error, render_help
from workers.slack.corpus import audio_as_samples, words_as_tokens
from workers.slack.grammar import Command, CommandError, parse_command
from workers.slack.machines import machine_words
from workers.slack.prices import priced_cards, render_prices
from workers.slack.recipes import recipe_words
from workers.slack.rl import rl_words
from workers.slack.settings import SlackSettings
from workers.slack.wording import describe_errors
from workers.tasks.problems import Unavailable
from workers.tasks.runtime import runtime
from workers.tasks.slack import SLACK_TASK

log = logging.getLogger(__name__)

MAX_TITLE_CHARS = 120
# Redis (jobs, catalog versions) or the broker out of reach: the command can wait, the reply cannot.
_UNAVAILABLE = (RedisError, KombuOperationalError, CatalogStoreError, Unavailable, OSError)


MAX_FORM_FIELDS = 64  # Slack sends about a dozen; parse_qs refuses more (a ValueError) instead of reading them


class FormError(ValueError):
    """The body is not a slash command's form; the message says why, for the reply."""


def read_form(body: bytes) -> dict[str, str]:
    """Decode Slack's url-encoded form from the raw body (first value of each field); FormError if it is not one."""
    try:
        fields = parse_qs(body.decode("utf-8"), keep_blank_values=True, max_num_fields=MAX_FORM_FIELDS)
    except UnicodeDecodeError:
        raise FormError("its body is not UTF-8 text") from None
    except ValueError:
        raise FormError(f"its form has more than {MAX_FORM_FIELDS} fields") from None
    return {name: values[0] for name, values in fields.items()}


def unreadable(error: FormError) -> dict[str, Any]:
    """Return the reply to a verified request whose form cannot be read (Slack needs a 200 and words)."""
    return ephemeral(render_error("gpugauge cannot read this request", detail=f"{error}."))


def ephemeral(message: Message) -> dict[str, Any]:
    """Mark a message as seen by the asker only."""
    return {"response_type": "ephemeral", **message}


def preset_words() -> tuple[str, ...]:
    """Return every preset name and alias the command accepts."""
    return (*(word for preset in PRESETS.values() for word in (preset.name, *preset.aliases)), *SAME_LAYERS)


def acknowledge(form: Mapping[str, str], settings: SlackSettings) -> dict[str, Any]:
    """Return the immediate reply to a verified command, queuing the work when there is work to do."""
    try:
        return _acknowledge(form, settings)
    except _UNAVAILABLE as error:
        log.warning("slack command not queued: %s", type(error).__name__)
        return ephemeral(render_error("gpugauge is temporarily unavailable",
                                      detail="Its job queue does not answer; try again in a minute."))
    except Exception:  # Slack shows a non-200 as a bare failure; a person deserves a sentence
        log.exception("slack command failed before it was queued")
        return ephemeral(render_error("gpugauge hit an internal error",
                                      detail="It has been logged; try again in a minute."))


def _acknowledge(form: Mapping[str, str], settings: SlackSettings) -> dict[str, Any]:
    catalog = runtime().catalog.get()
    cards = catalog.gpus
    gpus = [gpu.slug for gpu in cards]
    text = form.get("text", "")
    said, machines = machine_words(text, catalog.instances)  # "on a p3.8xlarge": its GPUs, count and cloud
    said, played = rl_words(said)  # "a dqn on atari for 10m frames": its network's data, frames made samples
    said, counted = words_as_tokens(said)  # "on 3.3b words": a corpus's words made tokens
    said, heard = audio_as_samples(said)  # "on 100 hours of audio": Whisper's 30-second samples
    said, recipe = recipe_words(said)  # "train gpt2 like nanogpt": its config's batch, iterations and precision
    try:
        rented = {instance.gpu for instance in catalog.instances}
        command = parse_command(said, presets=preset_words(), gpus=gpus, unrented=[g for g in gpus if g not in rented],
                                no_bf16=[gpu.slug for gpu in cards if not has_bf16(gpu)])
        told = (*machines, *played, *counted, *heard, *recipe)
        command = replace(command, defaults_used=(*told, *command.defaults_used))
    except CommandError as error:
        if priced := priced_cards(text, gpus):  # "how much does an h100 cost per hour": no job, a card's price
            return ephemeral(render_prices(priced, catalog, title=_title(text)))
        return ephemeral(render_error("gpugauge did not understand that", problems=error.problems))
    if command.kind == "help":
        return ephemeral(render_help(presets=tuple(PRESETS), gpus=gpus))
    try:
        data, _ = load_job(command.spec)
    except ValidationError as error:
        problems = describe_errors(flatten_errors(error.messages))
        return ephemeral(render_error("gpugauge cannot size this job", problems=problems))
    url = form.get("response_url", "")
    if not url.startswith(settings.response_url_prefixes):
        log.warning("slack command refused: its response_url is not on an allowed host")
        detail = ("Its response_url, where the answer would be posted, is not on the allowed hosts "
                  f"({', '.join(settings.response_url_prefixes)})." if url else
                  "It came without a Slack response_url to post the answer to.")
        return ephemeral(render_error("gpugauge cannot answer this request", detail=detail))
    return ephemeral(_queue(command, data, url=url, text=text, settings=settings))


def _queue(command: Command, data: Mapping[str, Any], *, url: str, text: str,
           settings: SlackSettings) -> Message:
    title = _title(text)
    job_id = settings.jobs.open(kind=command.kind, spec=data, gpus=command.gpus,
                                gpu_count=command.gpu_count, title=title, response_url=url)
    runtime().queue.enqueue(SLACK_TASK, job_id)
    log.info("slack job %s queued (%s)", job_id, command.kind)
    return {"text": _ack_text(command, title)}


def _ack_text(command: Command, title: str) -> str:
    doing = "Checking the fit of" if command.kind == "fit" else "Ranking machines for"
    lines = [f":hourglass_flowing_sand: {doing} `{title}`; the answer will appear here shortly."]
    if command.defaults_used:
        lines.append(f"Assumed {', '.join(command.defaults_used)} (say otherwise to change it).")
    if only := command.spec.get("constraints", {}).get("gpus"):
        lines.append(f"Only machines with {', '.join(only)}.")
    if owned := command.spec.get("constraints", {}).get("owned_gpus"):
        cards = ", ".join(f"{o['count']} x {o['gpu']}" for o in owned)
        lines.append(f"Your own cards: {cards}, ranked at their power cost beside the clouds' machines.")
    if not command.spec.get("dataset", {}).get("samples"):
        lines.append("Tip: add `samples=` (e.g. samples=1.28M) to get training hours and cost.")
    return "\n".join(lines)


def _title(text: str) -> str:
    # Echoed inside a code span: no backticks, and Slack's three escaped characters stay escaped.
    words = html.escape(html.unescape(" ".join(text.split())).replace("`", "'"), quote=False)
    return words if len(words) <= MAX_TITLE_CHARS else words[: MAX_TITLE_CHARS - 1] + "…"

