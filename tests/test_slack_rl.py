"""A DQN said with its game and its run in frames: the preset's own data, frames made the updates' samples."""

from __future__ import annotations

import pytest

from service.slack.intake import preset_words
from workers.slack.grammar import parse_command
from workers.slack.rl import FRAMES_PER_UPDATE, NATURE_FRAMES, rl_words

GPUS = ["t4", "a100-80gb"]


def _parse(text: str) -> tuple[dict, tuple[str, ...]]:
    said, told = rl_words(text)
    return parse_command(said, presets=preset_words(), gpus=GPUS).spec, told


def test_frames_are_updates_of_the_minibatch_as_the_nature_dqn_runs_them() -> None:
    spec, told = _parse("train a dqn on atari for 10m frames")
    assert spec["model"]["preset"] in ("dqn", "dqn-atari")
    # an update of 32 every 4 actions of 4 frames: 10M frames are 625,000 updates, 20M samples
    assert FRAMES_PER_UPDATE == 16 and spec["dataset"]["samples"] == 625_000 * 32
    assert spec["training"]["batch_size"] == 32
    assert told[0].startswith("atari: the Nature DQN's Atari network")
    assert told[1].startswith("10,000,000 frames: 625,000 updates of 32")
    assert "collecting the frames adds about 14 min" in told[1]  # 10M frames at 12,000 a second


def test_a_batch_said_is_the_updates_minibatch() -> None:
    spec, told = _parse("dqn breakout 10m frames batch 64")
    assert spec["dataset"]["samples"] == 625_000 * 64 and spec["training"]["batch_size"] == 64
    assert "625,000 updates of 64" in told[1]


@pytest.mark.parametrize("text", ["train a dqn on pong", "dqn on space invaders", "train a dqn on atari games"])
def test_a_game_without_a_length_is_the_nature_dqns_50m_frames(text: str) -> None:
    spec, told = _parse(text)
    assert spec["dataset"]["samples"] == NATURE_FRAMES // FRAMES_PER_UPDATE * 32
    assert any(t.startswith("50M frames (the Nature DQN's run") for t in told)


def test_without_a_dqn_the_words_are_left_as_said() -> None:
    assert rl_words("resnet50 on imagenet for 90 epochs") == ("resnet50 on imagenet for 90 epochs", ())
    assert rl_words("train a dqn") == ("train a dqn", ())  # no game and no frames: nothing assumed
