"""Families the presets lack (wav2vec2, PEGASUS, detectors, a diffusion model unnamed): said as such, with what to give
(T5, FLAN-T5, BART and Whisper have presets since 2026-12-07: tests/test_seq2seq.py; Stable Diffusion too:
tests/test_diffusion.py)."""

from __future__ import annotations

import pytest

from tests.test_slack_phrases import parse
from workers.slack.grammar import CommandError


@pytest.mark.parametrize(("text", "family"), [("can we train a diffusion model on 10k images", "diffusion"),
                                             ("train yolox on coco", "yolox"), ("fine-tune pegasus on 100k pairs",
                                                                                  "pegasus"),
                                             ("fine-tune wav2vec2 on 100 hours of audio", "wav2vec2"),
                                             ("fine-tune detr on coco", "detr")])
def test_families_without_a_preset_say_how_to_size_them(text: str, family: str) -> None:
    # each was "unknown preset 'stable'" (or 'yolov8', 'pegasus'), as if misspelt, with a preset suggested (YOLOv5
    # and YOLOv8 are presets since 2026-12-07: tests/test_detectors.py)
    with pytest.raises(CommandError) as caught:
        parse(text)
    said = caught.value.problems[0]  # "whisper small" was 'whisper' and "unknown preset 'small'" besides
    assert not any(p.startswith(("unknown preset 'small'", "unknown preset 'base'")) for p in caught.value.problems)
    assert said.startswith(f"unknown preset '{family}'; no preset of that family") and "ONNX export" in said
    assert "params=" in said and "model.layers" in said


@pytest.mark.parametrize(("text", "family"), [("train yolov7-tiny on coco", "yolov7-tiny"),
                                             ("train yolox-s on 100k images for 100 epochs", "yolox-s"),
                                             ("fine-tune deberta v3 base on 50k samples", "deberta"),
                                             ("train stylegan2 on ffhq 256", "stylegan2")])
def test_a_family_said_with_its_size_is_one_problem(text: str, family: str) -> None:
    # "yolov8n" was "no preset of that name ... give a language model's size"; "deberta v3 base" added "unknown
    # preset 'v3'" and "unknown preset 'base'; did you mean t5-base?" to the family's message; "stylegan2 ... 256" was
    # "no preset of that name ... give a language model's size" and "unknown preset '256'"
    with pytest.raises(CommandError) as caught:
        parse(text)
    assert len(caught.value.problems) == 1
    assert caught.value.problems[0].startswith(f"unknown preset '{family}'; no preset of that family")


def test_gradient_clipping_said_is_the_global_norm() -> None:
    training = parse("fine-tune bert base with gradient clipping on 10k samples").spec["training"]
    assert training["gradient_clipping"] == "global"
