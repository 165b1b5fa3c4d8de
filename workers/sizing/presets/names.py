"""Model names as people write them matched to preset names and aliases; pure, for the CLI, API and Slack.

People name a model as its Hugging Face repository does ("meta-llama/Llama-2-7b-hf",
"Qwen/Qwen2.5-7B-Instruct", "google-bert/bert-base-uncased"), as Ollama tags it ("llama3:8b") or in words
("Llama 3 8B"). A name is tried as given (lower case, spaces, underscores and colons as hyphens), then without the
owner before the slash, without a weights or config file's extension ("yolov8n.pt"), without a leading "meta-",
without the suffixes that name the same shape ("-hf", "-instruct", "-chat", "-it": an instruction-tuned or converted
checkpoint has its base model's layers), and with the family and its version written together ("llama-3.1-8b" is
"llama3.1-8b"). The first form that is a preset word wins; nothing is guessed beyond these forms.
"""

from __future__ import annotations

import re
from collections.abc import Collection

SAME_SHAPE_SUFFIXES = ("-hf", "-instruct", "-chat", "-it")
_OWNER = re.compile(r"^[a-z0-9][\w.-]*/")
_SEPARATORS = re.compile(r"[\s_:]+")  # ":" too: Ollama's tags ("llama3:8b", "qwen2.5:7b")
_WEIGHTS_FILE = re.compile(r"\.(pt|pth|yaml|yml|safetensors|ckpt)$")  # a checkpoint or config file named for its model


def name_forms(name: str) -> list[str]:
    """Return the forms a model name is tried in, most literal first."""
    raw = name.strip().lower()
    key = _SEPARATORS.sub("-", raw)
    forms = [raw, key]
    key = _OWNER.sub("", key)
    forms.append(key)
    if (bare := _WEIGHTS_FILE.sub("", key)) != key:  # "yolov8n.pt": Ultralytics' model= names its weights file
        key = bare
        forms.append(key)
    if key.startswith("meta-"):  # "Meta-Llama-3-8B"
        key = key[len("meta-"):]
        forms.append(key)
    stripped = True
    while stripped:
        stripped = False
        for suffix in SAME_SHAPE_SUFFIXES:
            if key.endswith(suffix) and len(key) > len(suffix):
                key = key[:-len(suffix)]
                forms.append(key)
                stripped = True
    forms.append(re.sub(r"^([a-z]+)-(\d)", r"\1\2", key))  # "llama-2-7b" -> "llama2-7b"
    return list(dict.fromkeys(forms))


def match_preset_name(name: str, words: Collection[str]) -> str | None:
    """Return the first form of `name` that is among `words` (preset names and aliases), else None."""
    return next((form for form in name_forms(name) if form in words), None)
