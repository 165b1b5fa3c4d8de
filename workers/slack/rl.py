"""A DQN said with its game and its length in frames ("train a dqn on atari for 10m frames"), in the grammar's words.

The dqn-atari preset is the Nature DQN (Mnih et al. 2015): its network reads 4 x 84 x 84 Atari frames, so "atari",
"atari games" or a game's name is its data, not a word to refuse. Its run is counted in frames, and its Extended
Data Table 1 sets what a frame costs: an action every 4 frames (action repeat 4), one update of a minibatch of 32
every 4 actions (update frequency 4), so one update per 16 frames; "trained for a total of 50 million frames" (its
Methods), the length assumed where a game is named without one. A run said in frames is made samples the grammar
reads: updates x the minibatch (32, or the batch said). Each reading is told back, with what the estimate leaves out:
it times the learner's updates, while collecting the frames (the emulator, and a forward pass of the policy per
action) takes time of its own; Tianshou's Atari examples (thu-ml/tianshou examples/atari README) collect "~3000 env
step per second (~12000 Atari frame per second ...)" with a CNN policy, so that time is said beside it.
"""

from __future__ import annotations

import re

from workers.schemas.humanize import parse_count

DQN_WORDS = frozenset({"dqn", "dqn-atari", "dqn-nature"})
GAMES = frozenset({"atari", "pong", "breakout", "seaquest", "enduro", "beamrider", "qbert", "q*bert", "asterix",
                   "montezuma", "pacman", "ms-pacman", "freeway", "boxing", "invaders"})
FRAMES_PER_UPDATE = 4 * 4  # action repeat 4 x update frequency 4 (Mnih et al. 2015, Extended Data Table 1)
NATURE_MINIBATCH = 32
NATURE_FRAMES = 50_000_000
COLLECTED_FRAMES_PER_S = 12_000  # Tianshou's Atari collector with a CNN policy (module docstring)
_BATCH = re.compile(r"^batch(?:=|_size=)?(\d+)$")
_PUNCTUATION = "?!.,;:()"


def _count(word: str) -> int | None:
    try:
        return parse_count(word.replace(",", ""))
    except ValueError:
        return None


def _batch(words: list[str]) -> int:
    """Return the batch said ("batch 64", "batch=64"), else the Nature DQN's minibatch."""
    for at, word in enumerate(words):
        if (said := _BATCH.match(word)) is not None:
            return int(said[1])
        after = [w for w in words[at + 1:at + 3] if w not in ("size", "of")]  # "batch size 64"
        if word in ("batch", "minibatch") and after and after[0].isdigit():
            return int(after[0])
    return NATURE_MINIBATCH


def rl_words(text: str) -> tuple[str, tuple[str, ...]]:
    """Return the text with a DQN's game and its frames in the grammar's words, and what was read; the text as it
    was where no DQN is named."""
    words = text.split()
    bare = [w.lower().strip(_PUNCTUATION) for w in words]
    if not DQN_WORDS & set(bare):
        return text, ()
    out: list[str] = []
    told: list[str] = []
    game = frames = None
    at = 0
    while at < len(words):
        word, nxt = bare[at], bare[at + 1] if at + 1 < len(bare) else ""
        if word in GAMES or (word == "space" and nxt == "invaders"):
            game = game or ("space invaders" if word == "space" else word)
            if out and out[-1].lower() in ("on", "in", "playing", "for"):
                out.pop()  # "on atari": the preset's own data
            at += 2 if word == "space" or nxt in ("games", "game") else 1
            continue
        if (count := _count(word)) is not None and nxt in ("frames", "frame"):
            frames = count
            at += 2
            continue
        out.append(words[at])
        at += 1
    if game:
        told.append(f"{game}: the Nature DQN's Atari network (dqn-atari: 4 x 84 x 84 frames, 18 actions)")
    if frames is None and game:
        frames = NATURE_FRAMES
        told.append("50M frames (the Nature DQN's run: Mnih et al. 2015, 'a total of 50 million frames')")
    if frames is not None:
        batch = _batch(bare)
        updates = max(1, frames // FRAMES_PER_UPDATE)
        out.append(f"samples={updates * batch}")
        collect_h = frames / COLLECTED_FRAMES_PER_S / 3600
        collect = f"{collect_h:,.1f} h" if collect_h >= 1 else f"{max(1.0, collect_h * 60):.0f} min"
        told.append(f"{frames:,} frames: {updates:,} updates of {batch} (an update every 4 actions of 4 frames, "
                    f"Mnih et al. 2015), timed as the learner's updates; collecting the frames adds about "
                    f"{collect} (Tianshou's Atari collector, about 12,000 frames a second)")
    return " ".join(out), tuple(told)
