"""The product's messages in the words a Slack user types: a spec field with its value ("raise constraints.max_gpus
to 32") becomes the setting to say (`gpus=32`), and the CLI's flags, which a Slack user has no use for, are left out.
The API, the CLI and the reports keep the field names, which their users write."""

from __future__ import annotations

import re
from collections.abc import Mapping

from workers.slack.grammar import FIELD_WORDS

_FIELD_VALUE = re.compile(r"\b((?:constraints|dataset|training)\.[a-z_]+)(?: to)? (\d[\d,]*(?:\.\d+)?)\b(?!\s*%)")
_CLI = re.compile(r" \(CLI [^)]*\)")
_UNITS = {"deadline=": "h"}  # deadline= reads a bare number as hours; said with its unit


def slack_words(text: str) -> str:
    """Return a message with each spec field and value a Slack setting (`gpus=32`) and the CLI's flags dropped."""

    def setting(match: re.Match[str]) -> str:
        word = FIELD_WORDS.get(match[1], "")
        if not word.endswith("="):
            return match[0]
        return f"`{word}{match[2].replace(',', '')}{_UNITS.get(word, '')}`"

    return _FIELD_VALUE.sub(setting, _CLI.sub("", text))


def describe_errors(errors: Mapping[str, list[str]]) -> list[str]:
    """Name schema errors (flat field paths) in the words a Slack user types."""
    words = {p: FIELD_WORDS.get(p) or FIELD_WORDS.get(re.sub(r"(?:\[\d+\])+$", "", p), p) for p in errors}
    return [f"{words[path]} {' '.join(messages)}" for path, messages in errors.items()]
