"""A corpus said by its words ("pretrain bert base on 3.3b words"), made the tokens the grammar reads.

BERT's paper gives its pre-training corpus in words (BooksCorpus 800M and English Wikipedia 2,500M words), and people
repeat it so; the grammar counts a run's data in tokens. OpenAI's rule for English text, "1 token ≈ ¾ of a word; 100
tokens ≈ 75 words" (OpenAI Help Center, "What are tokens and how to count them?"), makes 3 words 4 tokens; told back,
since a WordPiece or another tokenizer gives a somewhat different count.
"""

from __future__ import annotations

from workers.schemas.humanize import parse_count

TOKENS_PER_WORD = 4 / 3
WORDS_FROM = 1_000_000  # "a 512 words prompt" is a length, not a corpus
_PUNCTUATION = "?!.,;:()"


def words_as_tokens(text: str) -> tuple[str, tuple[str, ...]]:
    """Return the text with each corpus said in words ("3.3b words") made tokens, and what was read."""
    words = text.split()
    out: list[str] = []
    told: list[str] = []
    at = 0
    while at < len(words):
        nxt = words[at + 1].lower().strip(_PUNCTUATION) if at + 1 < len(words) else ""
        try:
            count = parse_count(words[at].replace(",", "")) if nxt in ("words", "word") else 0
        except ValueError:
            count = 0
        if count >= WORDS_FROM:
            tokens = round(count * TOKENS_PER_WORD)
            out.append(f"{tokens} tokens")
            told.append(f"{words[at]} words: about {tokens:,} tokens (4 tokens to 3 words, OpenAI's rule for English)")
            at += 2
            continue
        out.append(words[at])
        at += 1
    return " ".join(out), tuple(told)
