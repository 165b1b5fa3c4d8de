"""A corpus said by its words ("pretrain bert base on 3.3b words") or its sample's size ("fineweb 10b"), made the
tokens the grammar reads.

BERT's paper gives its pre-training corpus in words (BooksCorpus 800M and English Wikipedia 2,500M words), and people
repeat it so; the grammar counts a run's data in tokens. OpenAI's rule for English text, "1 token ≈ ¾ of a word; 100
tokens ≈ 75 words" (OpenAI Help Center, "What are tokens and how to count them?"), makes 3 words 4 tokens; told back,
since a WordPiece or another tokenizer gives a somewhat different count. FineWeb and FineWeb-Edu are said by their
samples' sizes ("pretrain gpt2 on fineweb 10b", as llm.c and the nanoGPT speedrun do): the sample-10BT, -100BT and
-350BT subsets are named for their GPT-2 tokens, as the tokenized copies people train on say ("FineWeb Edu 100B
dataset tokenized with GPT-2 tokenizer", Hugging Face karpathy/fineweb-edu-100B-gpt2-token-shards, read 2026-12-07).
"""

from __future__ import annotations

import re

from workers.schemas.humanize import parse_count

# The grammar's markers (phrases.normalize writes them): tokens-need-seq:N, N tokens to make samples by the context;
# TOKENS_SAID, a count of tokens made samples already. Either says the run's data is a corpus: a pre-training run.
TOKENS_NEED_SEQ = "tokens-need-seq"
TOKENS_SAID = "tokens-said"
TOKENS_PER_WORD = 4 / 3
WORDS_FROM = 1_000_000  # "a 512 words prompt" is a length, not a corpus
_PUNCTUATION = "?!.,;:()"
_FINEWEB = re.compile(r"^fineweb(?:-edu)?-?(\d+(?:\.\d+)?[bt])t?$")  # "fineweb10b", "fineweb-edu-10bt"
FINEWEB_WORDS = frozenset({"fineweb", "fineweb-edu"})
AUDIO_WINDOW_S = 30  # Whisper's input: 30 s of audio, 3,000 mel frames
_AUDIO_HOURS = re.compile(r"\b(\d[\d,]*(?:\.\d+)?k?)[ -]?(?:hours?|hrs?|h)\s+(?:of\s+)?(?:transcribed\s+|labell?ed\s+)?"
                          r"(?:audio|speech|recordings?)\b", re.IGNORECASE)


def audio_as_samples(text: str) -> tuple[str, tuple[str, ...]]:
    """Return the text with each amount of speech said in hours ("100 hours of audio") made samples of Whisper's
    30-second window, and what was read."""
    told: list[str] = []

    def samples(found: re.Match[str]) -> str:
        hours = parse_count(found[1].replace(",", ""))
        count = max(1, round(hours * 3600 / AUDIO_WINDOW_S))
        told.append(f"{found[0]}: {count:,} samples of {AUDIO_WINDOW_S} s, the window Whisper reads (each clip is "
                    f"padded to {AUDIO_WINDOW_S} s, so clips of 5 s make {AUDIO_WINDOW_S // 5}x as many; say samples= "
                    "for your clip count)")
        return f"{count} samples"

    return _AUDIO_HOURS.sub(samples, text), tuple(told)


def words_as_tokens(text: str) -> tuple[str, tuple[str, ...]]:
    """Return the text with each corpus said in words ("3.3b words") made tokens, and what was read."""
    words = re.sub(r"\bfineweb[ _]edu\b", "fineweb-edu", text, flags=re.IGNORECASE).split()  # "fineweb edu 10b"
    out: list[str] = []
    told: list[str] = []
    at = 0
    while at < len(words):
        nxt = words[at + 1].lower().strip(_PUNCTUATION) if at + 1 < len(words) else ""
        count = count_said(words[at]) if nxt in ("words", "word") else 0
        bare = words[at].lower().strip(_PUNCTUATION)
        whole = _FINEWEB.match(bare)  # "fineweb10b"; else "fineweb 10b", two words
        sample = whole or (_FINEWEB.match(f"fineweb{nxt}") if bare in FINEWEB_WORDS else None)
        if sample is not None:
            tokens = parse_count(sample[1])
            out.append(f"{tokens} tokens")
            told.append(f"{words[at]}{'' if whole else ' ' + nxt}: {tokens:,} tokens (FineWeb's sample of about "
                        f"{sample[1].upper()} GPT-2 tokens)")
            at += 1 if whole else 2
            continue
        if count >= WORDS_FROM:
            tokens = round(count * TOKENS_PER_WORD)
            out.append(f"{tokens} tokens")
            told.append(f"{words[at]} words: about {tokens:,} tokens (4 tokens to 3 words, OpenAI's rule for English)")
            at += 2
            continue
        out.append(words[at])
        at += 1
    return " ".join(out), tuple(told)


def tokens_as_samples(out: list[str], tokens: int) -> tuple[list[str], list[str]]:
    """Turn the run's tokens into samples= by the seq= said beside them; without one, a word the grammar refuses."""
    seq = next((count_said(w.partition("=")[2]) for w in out if w.startswith("seq=")), 0)
    if any(w.startswith("samples=") for w in out):
        return [*out, TOKENS_SAID], []
    if seq <= 0:
        return [*out, f"{TOKENS_NEED_SEQ}:{tokens}"], []
    samples = -(-tokens // seq)
    return [*out, f"samples={samples}", TOKENS_SAID], [f"samples={samples:,} ({tokens:,} tokens / seq {seq:,})"]


def count_said(word: str) -> int:
    """Return the count a word says ("10b", "1,000", "$5k"), 0 where it says none."""
    try:
        return parse_count(word.lstrip("$").replace(",", ""))
    except ValueError:
        return 0
