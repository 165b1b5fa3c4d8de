"""Everyday phrasing of `/gpugauge ...` rewritten into the grammar's words, before the grammar reads them.

People type to a bot as they talk: "fine-tune llama 7b with lora on 1 gpu for 3 epochs, 50k samples,
budget $50". The grammar (grammar.py) wants `key=value` words and switches; this module rewrites, and
never guesses: a word it does not know is left for the grammar to refuse with its suggestion.
- filler words that carry nothing ("with", "on", "for", "the", ...) are dropped, and trailing commas,
  question and exclamation marks taken off;
- a setting and its value written apart become one word: "batch 64", "batch size 64", "seq 2048",
  "rank 16", "budget $500", "deadline 2d", and the other way round for counts, "90 epochs",
  "50k samples", "8 gpus", "2048 tokens" (a sequence length; "10B tokens", a million or more, is the run's
  data, made samples by the seq= said with it);
- "2gb of data" / "150GB dataset" is the data's size; "$500" alone is the budget, "within 2 days" / "in 36 hours"
  the deadline ("by tomorrow" 24 h, "overnight" 12 h, told back), "us-east-1" alone a region; "cheapest",
  "cheaper" and "fastest", "faster" the objective;
- a preset written in two words ("llama 7b", "gpt2 medium", "bert base") is the preset; in the fit command,
  a GPU in two or three words ("gtx 1080 ti", "a100 80gb") is one word, and a count before it ("4 t4s",
  "4x a100") the GPU count;
- "my" or "our" before a GPU ("on my 1080 ti", "our 4 3090s", "our 2x a6000") names cards the team owns
  (constraints.owned_gpus), ranked at their power cost beside the clouds' machines; a family that is
  several cards ("my a100") stays a GPU to rank on, for the grammar to say as any GPU named;
- "single" ("on a single a100", "a single gpu") is one GPU at most (gpus=1);
- "10B tokens" with no sequence length is samples of the model's context, as a corpus named (TOKEN_SETS) is;
- a few public data sets by name give their training split, a corpus its tokens (datasets.py);
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection

from catalog.gpu_names import gpu_name_matches, gpus_of_memory, smallest_card
from workers.sizing.presets.names import match_preset_name
from workers.slack.corpus import count_said, tokens_as_samples
from workers.slack.datasets import DATASET_EPOCHS, DATASET_SEQ, DATASETS, TOKEN_SETS
from workers.slack.deadlines import UNTIL, duration_at, relative_deadline, until_deadline
from workers.slack.defaults import GENERIC_NAMES, cifar_layout, recipe_epochs, sized_family
from workers.slack.joined import NUMBER as _NUMBER
from workers.slack.joined import RUNS_PER_YEAR, described_counts, media_words
from workers.slack.joined import joined as _joined
from workers.slack.places import place_regions
from workers.slack.typed import (
    ALIASED_KEYS,
    CURRENCY,
    MANAGED,
    PINNED_STRATEGIES,
    SIZED_ALREADY,
    STRATEGY_TOLD,
    STRATEGY_WORDS,
)

_DOLLARS_WORDS = ("dollars", "dollar", "usd", "bucks")  # "under 100 dollars": the budget ("budget 200 usd": its unit)
FILLER = frozenset({
    "a", "an", "the", "with", "on", "for", "and", "or", "using", "use", "of", "to", "at", "from", "in", "into",
    "please", "pls", "i", "we", "me", "my", "our", "want", "need", "would", "like", "how", "much", "where", "tell",
    "should", "what", "which", "is", "it", "run", "train", "training", "model", "models", "job", "instances", "hours",
    "instance", "machine", "machines", "node", "can", "do", "does", "will", "be", "about", "around", "per", "tokens",
    "if", "whether", "card", "cards", "way", "best", "costs", "take", "takes", "long", "needed", "many", "could",
    "are", "there", "that", "this", "these", "some", "any", "get", "rent", "renting", "less",  # "less than $50"
    "full", "quantization", "quantized", "loss",  # "full fine-tune": every weight trains; "4-bit quantization": qlora
    "reproduce", "replicate", "reproducing",  # "reproduce gpt-2 on openwebtext": the run, its data said
    # "on aws only", "at most 4 gpus", "max 4 gpus", "up to 8 gpus", "on google cloud": the words around a setting
    "only", "most", "max", "maximum", "up", "cloud", "len", "length", "dataset", "corpus", "continued", "english",
    # "how much memory does resnet50 need", "how much vram", "is a t4 enough for ...": the answer leads with memory
    "memory", "vram", "enough", "what's", "whats", "it's", "i'd", "i'm", "we're", "under", "below", "us", "help",
    "compare", "vs", "versus", "difference", "between",  # "compare a100 vs h100 for ...": both ranked side by side
    "as", "possible", "parameter", "parameters", "params",  # "as cheap as possible", "full parameter fine-tune"
    "classifier", "classification", "segmentation",  # "a classifier ... with resnet18", "a unet for segmentation"
    "tabular", "structured", "code", "sentiment", "analysis", "table",  # "rows of tabular data", "a table of 1m rows"
    "summarization", "summarisation", "translation", "ner", "qa", "chatbot", "chat", "assistant",  # a task: no size
    "have", "has", "own", "got",  # "we have a100s": after one of these a card is the team's (OWNER_WORDS)
    "w/", "layers", "modules", "each", "custom",  # "w/ qlora", "lora on all linear layers", "of 4096 tokens each"
    "speed", "worth", "benefit", "gain", "pay", "pays", "off", "handle", "rig", "box", "workstation", "show",
    *_DOLLARS_WORDS,
})
# setting words that are also plain nouns of a question ("what gpu do I need"): dropped when no value follows
NODE_GPUS = 8  # a training node: AWS p4d/p5/p6 and GCP a3/a4 machines hold 8 GPUs (the catalog's instance rows)
NOUN_SETTINGS = frozenset({"gpu", "gpus", "data", "budget"})  # "$1k budget": its value said before it
# words that name a setting, written before its value ("batch 64", "batch size 64")
SETTING_WORDS = {
    "batch": "batch", "bs": "batch", "batch-size": "batch", "batchsize": "batch", "length": "seq",  # max length 2048
    "epochs": "epochs", "epoch": "epochs", "seq": "seq", "seq-len": "seq", "seqlen": "seq", "r": "rank",
    "sequence": "seq", "context": "seq", "lr": "lr", "rank": "rank", "budget": "budget", "deadline": "deadline",
    "samples": "samples", "target": "target", "data": "data", "gpus": "gpus", "gpu": "gpus", "precision": "precision",
    "optimizer": "optimizer", "region": "region", "top": "top", "accum": "accum", "targets": "targets",
}
_SKIPPED_AFTER_SETTING = {"size", "length", "len", "of", "is", "=", ":"}  # "batch size 64", "seq length 2048"
COUNT_WORDS = {  # words that name a count, written after it ("90 epochs", "50k samples")
    "epoch": "epochs", "epochs": "epochs", "gpu": "gpus", "gpus": "gpus",  # "100k conversations", "50k tweets"
    **dict.fromkeys(("sample", "samples", "examples", "images", "sequences", "rows", "records", "sentences",
                     "conversations", "documents", "dialogues", "prompts", "pairs", "questions", "reviews", "photos",
                     "texts", "tweets", "posts", "emails", "articles", "tickets", "stories", "messages", "books",
                     "papers", "captions", "clips", "recordings", "utterances", "datapoints"), "samples"),
    "tokens": "seq", "context": "seq", "seq": "seq", "sequence": "seq",  # "4k context", "2048 seq len"
}
_DESCRIBED_NOUNS = frozenset(w for w, count in COUNT_WORDS.items() if count == "samples")  # "50k labeled examples"
# filler words that also describe a count's noun ("1m tabular rows", "20k chat conversations"): dropped there too
_DESCRIBING_FILLER = frozenset({"tabular", "structured", "code", "sentiment", "english", "custom", "chat",
                                "classification", "segmentation", "ner", "qa", "summarization", "summarisation",
                                "translation"})
# "2048 tokens" is a sequence length; "10B tokens" is the data set: at or above this it is read as the run's
# tokens, made samples by the sequence length said beside it.
TOTAL_TOKENS_FROM = 1_000_000
OWNER_WORDS = frozenset({"my", "our", "have", "own", "got"})  # "on my 4090", "we have 2 a6000s", "i have a 4090"
_TIME_LEADS = {"within", "in", "by", "under", "to", "max", "for"}  # "to": "up to 2 days"; "for 1 week": its time
_BUDGET_LEADS = {"under", "below", "max", "within", "budget", "than"}  # "for less than $50"
SYNONYMS = {"finetuning": "fine-tune", "fine-tuning": "fine-tune", "finetuned": "fine-tune",
            "pretraining": "pretrain", "pre-train": "pretrain", "pre-training": "pretrain",
            "on-prem": "onprem", "cheapest": "cost", "cheap": "cost", "cheaper": "cost", "fastest": "time",
            "fast": "time", "faster": "time", "quickest": "time", "asap": "time", "google": "gcp", "amazon": "aws",
            "better": "balanced",  # "is a 4090 or an a100 better for ...": cost and time together
            "ec2": "aws", "gce": "gcp", "peft": "lora",  # Hugging Face PEFT: LoRA, the method people mean by it
            "scratch": "pretrain", "sft": "fine-tune",  # supervised fine-tuning (TRL's SFTTrainer)
            "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "eight": "8", "ten": "10",
            "sixteen": "16", "v100s": "v100"}  # "on v100s": plural, the V100S card being no catalog's
BUY_WORDS = frozenset({"buy", "buying", "purchase"})  # the purchase question (providers onprem; "or rent": the clouds)
RENT_TOO = frozenset({"rent", "renting", *RUNS_PER_YEAR})  # "buy ... or rent", and a job said to recur
_SIZE = re.compile(r"^\d+(\.\d+)?[kmgtp]i?b$")  # "2gb", "1.5tb", "500GiB": a size, the data's when "data" follows
_DATA_WORDS = frozenset({"data", "dataset", "corpus"})
_CARD_WORDS = frozenset({"gpu", "gpus", "card", "cards", "vram"})  # "a 24gb gpu": the cards of that memory
_IMAGE_SIZE = re.compile(r"^(\d{1,2}x)?\d{2,5}x\d{2,5}$")
_IMAGE_WORDS = frozenset({"images", "image", "photos", "pictures", "px", "pixels"})  # after a size: its unit
_MONEY = re.compile(r"^\$\d[\d,]*(\.\d+)?[kmb]?$")
_REGION = re.compile(r"^(us|eu|europe|asia|ap|me|sa|ca|af|il|mx|northamerica|southamerica|australia|africa)"
                     r"-[a-z]+-?\d+$")  # us-east-1, europe-west4, me-west1


def _clean(word: str) -> str:
    word = word.strip("()[]").rstrip(",;:!?").rstrip(")]")  # "(90 epochs)", "8 gpus),"
    return word[:-1] if word.endswith(".") and not _NUMBER.match(word) else word


_GPU_COUNT = re.compile(r"(\d{1,4})x?(?:(?<=x)([a-z0-9].*))?")  # "4", "4x", "4xa100", "2x3090"


def _is_number(word: str) -> bool:
    return bool(_NUMBER.match(word))


def normalize(words: list[str], *, presets: Collection[str], gpus: Collection[str] = (), flags: Collection[str] = ()
              ) -> tuple[list[str], tuple[int, int, int] | None, tuple[str, ...]]:
    """Return the words in the grammar's form, a named data set's image input (or None), and what was assumed, told.

    `gpus` (the fit command's) joins a GPU written in two or three words ("gtx 1080 ti", "a100 80gb") and
    reads a count before one as the GPU count ("4 t4", "4x a100", "8xh100"); `flags`: the grammar's bare words."""
    said = described_counts(_joined([SYNONYMS.get(c, c) for c in map(_clean, words) if c]), nouns=_DESCRIBED_NOUNS,
                            meaningful=lambda w: w not in _DESCRIBING_FILLER and (
                                _known(w, presets) or w in DATASETS or w in flags or bool(gpu_name_matches(w, gpus))),
                            named=lambda w: w in DATASETS)  # "25k imdb reviews": the count, then the data set
    out: list[str] = []
    dataset: tuple[int, tuple[int, int, int] | None] | None = None
    named = ""
    tokens = nodes = 0
    told: list[str] = []  # what a word was read as, told back: a corpus's tokens, a relative deadline
    i = 0
    while i < len(said):
        word, nxt = said[i], said[i + 1] if i + 1 < len(said) else ""
        if "=" in word and (key := word.partition("=")[0]) in ALIASED_KEYS:  # "r=64": rank=64; "alpha=32": read
            out.extend([f"{ALIASED_KEYS[key]}={word.partition('=')[2]}"] if ALIASED_KEYS[key] else [])
            told.extend([] if ALIASED_KEYS[key] else [SIZED_ALREADY["alpha"]])
        elif "=" in word:
            out.append(word)
        elif word in SIZED_ALREADY:  # "with flash attention", "packing", "alpha 32": nothing to size differently
            told.append(SIZED_ALREADY[word])
            i += (word in ("alpha", "dropout", "warmup") and _is_number(nxt)) + (said[i + 2:i + 3] == ["steps"])
        elif word in CURRENCY or (_is_number(word) and nxt in CURRENCY):  # "€500", "50 euros": refused, said why
            out.append(word if word in CURRENCY else nxt)
            i += 1 if word not in CURRENCY or _is_number(nxt) else 0
        elif word in MANAGED:  # "on aws sagemaker": its cloud's machines, at their own prices, said
            out.extend([] if MANAGED[word][0] in said else [MANAGED[word][0]])
            told.append(f"{word}: {MANAGED[word][1]}")
        elif word in ("4-bit", "4bit"):  # "4-bit lora" is QLoRA, "4-bit qlora" says it twice
            said, out = [("qlora" if w == "lora" else w) for w in said], [("qlora" if w == "lora" else w) for w in out]
            out.extend([] if "qlora" in said or "qlora" in out else ["qlora"])
        elif word in OWNER_WORDS and gpus and (owned := _owned_gpus(said, i + 1 + (a := nxt in ("a", "an")), gpus)):
            count, slug, taken, family = owned
            out.append(f"owned={count}x{slug}")  # "on my 1080 ti", "our 4 3090s"
            variants = ", ".join(gpu_name_matches(family, gpus)) if family else ""
            told.extend([f"{family}: the team's taken as {slug}, the smaller of its cards ({variants}); name the card "
                         "for another"] if family else [])
            i += taken + a
        elif nxt and (taken := _preset_words(said, i, presets)):
            out.append("-".join(said[i:i + taken]))  # "llama 7b", "gpt2 medium", "llama 2 7b"
            named_set = next((w for w in said[i + 1:i + taken] if w in DATASETS), None)
            if named_set is not None:  # "mlp mnist": the MNIST MLP, trained on MNIST
                dataset, named = DATASETS[named_set], named_set
            i += taken - 1
        elif nxt and (sized := sized_family(word, nxt, presets)):  # "a 1b llama", "an 8b llama", "qwen 7b"
            out.append(sized)
            told.append(f"{word} {nxt}: sized as {sized}")
            i += 1
        elif gpus and (joined := _gpu_words(said, i, gpus)):
            out.append("-".join(said[i:i + joined]))
            i += joined - 1
        elif gpus and (many := _GPU_COUNT.fullmatch(word)) and (
                (many[2] and _counted_gpu(many[2], gpus))
                or (not many[2] and nxt and (_counted_gpu(nxt, gpus) or _gpu_words(said, i + 1, gpus)))):
            out.append(f"gpus={many[1]}")  # "4 t4", "4x a100", "8xh100", "4 v100s"
            if many[2]:
                out.append(_counted_gpu(many[2], gpus))
            elif not _gpu_words(said, i + 1, gpus):
                said[i + 1] = _counted_gpu(nxt, gpus)
        elif word in _TIME_LEADS and (when := duration_at(said, i + 1)) is not None:
            out.append(f"deadline={when[0]}")
            i += when[1]
        elif word in _BUDGET_LEADS and _MONEY.match(nxt or "-"):
            out.append(f"budget={nxt}")
            i += 1
        elif _MONEY.match(word):
            out.append(f"budget={word}")
        elif _is_number(word) and nxt in _DOLLARS_WORDS:
            out.append(f"budget=${word}")
            i += 1
        elif (place := place_regions(said, i)) is not None:  # "in europe", "in frankfurt", "in sao paulo"
            out.append(f"region={place[0]}")
            told.extend([place[2]] if place[2] else [])
            i += place[1] - 1
        elif _SIZE.match(word) and _DATA_WORDS & set(said[i + 1:i + 3]):  # "2gb of data", "150GB dataset"
            out.append(f"data={word}")
        elif _SIZE.match(word) and (taken := media_words(said[i + 1:i + 3])):  # "2tb of images", "500mb of text"
            out.append(f"data={word}")  # the data's size; its count not said
            i += taken
        elif _SIZE.match(word) and (nxt in _CARD_WORDS or (i and said[i - 1] in ("in", "into"))) and (
                cards := gpus_of_memory(word, gpus)):  # "on a single 24gb gpu", "fit in 12gb": each such card
            out.extend(cards)
            told.append(f"{word}: the cards of {word.upper()}, {', '.join(cards)}")
        elif _is_number(word) and nxt in ("parameter", "parameters", "params") and word not in presets:
            out.append(f"params={word}")  # "a 2b parameter model": by its size ("a 7b model" is the llama-7b preset)
            i += 1
        elif _is_number(word) and _IMAGE_SIZE.match(nxt or "-") and said[i + 2:i + 3] and said[i + 2] in _IMAGE_WORDS:
            out += [f"samples={word.replace(',', '')}", f"input={nxt}"]  # "5k 256x256 images": how many, how big
            i += 2
        elif _IMAGE_SIZE.match(word):  # "1024x1024", "3x512x512": the image input ("256x256 images": the same)
            out.append(f"input={word}")
            i += nxt in _IMAGE_WORDS
        elif _REGION.match(word):
            out.append(f"region={word}")
        elif word in DATASETS and word not in presets:
            dataset, named = DATASETS[word], word
        elif word in TOKEN_SETS and not any(TOKEN_SETS[word][1] in t for t in told):  # "on openwebtext": its tokens
            tokens, why = tokens + TOKEN_SETS[word][0], TOKEN_SETS[word][1]  # "wikipedia and bookcorpus": BERT's two
            told.append(f"{TOKEN_SETS[word][0]:,} tokens ({word}: {why})")
        elif word in BUY_WORDS:  # "what should we buy": the purchase question; "buy or rent": beside the clouds
            out.extend(["onprem", *(["aws", "gcp"] if RENT_TOO & set(said) else [])])
        elif word in PINNED_STRATEGIES and not any(w.startswith("strategy=") for w in out):  # "with fsdp": theirs
            out.append(f"strategy={word}")
            told.append(f"{word}: sized as said (training.parallelism.data_parallel {PINNED_STRATEGIES[word]}); "
                        "leave it out for the ranking to choose each option's")
        elif word in STRATEGY_WORDS:  # "with deepspeed": no layout said; told back once, not pinned
            pinned = any(w in PINNED_STRATEGIES for w in said) or any(STRATEGY_TOLD in t for t in told)
            told.extend([] if pinned else [f"{word}: {STRATEGY_TOLD}"])
        elif (until := (until_deadline(said[i + 1:]) if word in UNTIL else None) or relative_deadline(word)):
            out.append(f"deadline={until[0]}")  # "by friday", "by end of the week"; "overnight", "by tomorrow"
            told.append(f"deadline={until[0]} ({until[1]})")
            i += until[2]
        elif word in SETTING_WORDS and word not in presets:
            j = i + 1
            while j < len(said) and said[j] in _SKIPPED_AFTER_SETTING:
                j += 1
            # "my data, 100k samples": the number is the count's, not data's ("batch 64 epochs 3": batch's)
            counted = (word in NOUN_SETTINGS and j + 1 < len(said) and _is_number(said[j])
                       and said[j + 1] in COUNT_WORDS and not (j + 2 < len(said) and _is_number(said[j + 2])))
            if j < len(said) and "=" not in said[j] and not _known(said[j], presets) and not counted:
                took = duration_at(said, j) if SETTING_WORDS[word] == "deadline" else None  # "a deadline of 2 days"
                value = took[0] if took else said[j].replace(",", "") if _is_number(said[j]) else said[j]
                out.append(f"{SETTING_WORDS[word]}={value}")
                i = j + (took[1] - 1 if took else 0)
            elif word not in NOUN_SETTINGS and word not in FILLER:  # "1024 sequence length"
                out.append(word)
        elif _is_number(word) and nxt == "tokens" and count_said(word) >= TOTAL_TOKENS_FROM:
            tokens = count_said(word)
            i += 1
        elif _is_number(word) and nxt in ("node", "nodes") and word.isdigit():  # "on 2 nodes": machines of 8 GPUs
            nodes = int(word)
            i += 1
        elif _is_number(word) and nxt in ("steps", "iterations", "iters"):  # "for 500 steps": refused, said why once
            pass
        elif _is_number(word) and nxt in COUNT_WORDS:
            out.append(f"{COUNT_WORDS[nxt]}={word.replace(',', '')}")
            i += 1
        elif word == "single" or (word in ("a", "an") and said[i - 1:i] == ["on"] and _names_cards(said, i + 1, gpus)):
            out.append("gpus=1")  # "on a single 4090", "a single gpu", "on a v100": one GPU at most
        elif word in FILLER:
            pass
        else:
            out.append(word)
        i += 1
    if nodes and not any(w.startswith("gpus=") for w in out):  # "one node of 8 a100s": the GPU count said wins
        out.append(f"gpus={NODE_GPUS * nodes}")
        told.append(f"gpus={NODE_GPUS * nodes} ({nodes} node{'s' if nodes > 1 else ''} of {NODE_GPUS} GPUs, as p5 or "
                    "a3-highgpu-8g hold)")
    image, assumed = None, told
    if tokens:
        out, note = tokens_as_samples(out, tokens)
        assumed.extend(note)
    if dataset is not None:
        samples, image = dataset
        at = None if any(w.startswith("input=") for w in out) else next(  # "resnet50 cifar10 224x224": as said
            (i for i, w in enumerate(out) if image and cifar_layout(w, presets, image[1])), None)
        if at is not None and image is not None:  # "resnet18 cifar10": the layout CIFAR recipes train
            said_as, (out[at], image) = out[at], (cifar_layout(out[at], presets, image[1]), None)
            generic = f"{said_as}: sized as " if said_as in GENERIC_NAMES else ""  # "a cnn": which one, told
            assumed.append(f"{generic}{out[at]} (CIFAR recipes' layout, kuangliu/pytorch-cifar: a 3x3 stem, no "
                           "max-pool)")
        if not any(w.startswith("samples=") for w in out):
            out.append(f"samples={samples}")
            assumed.append(f"samples={samples:,} ({named})")
        if named in DATASET_SEQ and not any(w.startswith("seq=") for w in out):
            seq, why = DATASET_SEQ[named]
            out.append(f"seq={seq}")
            assumed.append(f"seq={seq} ({why})")
        if named in DATASET_EPOCHS and not any(w.startswith("epochs=") for w in out):  # SQuAD's own 2
            out.append(f"epochs={DATASET_EPOCHS[named][0]}")
            assumed.append(f"epochs={DATASET_EPOCHS[named][0]} ({DATASET_EPOCHS[named][1]})")
        if (recipe := recipe_epochs(out, named, presets)) is not None:  # "resnet50 imagenet": torchvision's 90
            out.append(f"epochs={recipe[0]}")
            assumed.append(f"epochs={recipe[0]} ({recipe[2]})")
    # "pretrain ... from scratch" says one thing twice: kept once (a preset said twice is still refused)
    return [w for i, w in enumerate(out) if w not in ("pretrain", "fine-tune") or w not in out[:i]], image, \
        tuple(assumed)


def _words_together(said: list[str], at: int, names: Callable[[list[str]], object],
                    sizes: tuple[int, ...] = (3, 2)) -> int:
    """Return how many words from said[at] (3, else 2; or `sizes`) `names` accepts together; 0 where none."""
    for n in sizes:
        words = said[at:at + n]
        if len(words) == n and not any("=" in w for w in words) and names(words):
            return n
    return 0


def _preset_words(said: list[str], at: int, presets: Collection[str]) -> int:
    """Return how many words from said[at] name a preset together ("llama 2 7b": the forms presets.names tries); 0
    where none do. A later word with an owner is a name of its own ("fine-tune" read as google/vit-...'s owner)."""
    return _words_together(said, at, lambda words: not any(len(w.split("/")[0]) > 1 for w in words[1:] if "/" in w)
                           and match_preset_name("-".join(words), presets) is not None, sizes=(5, 4, 3, 2))


def _counted_gpu(word: str, gpus: Collection[str]) -> str:
    """Return the GPU a word after a count names, "" where none: the word, or its singular ("4 v100s": the V100S
    card's name reads as a plural after a count), or "" where neither names one."""
    if gpu_name_matches(word, gpus):
        return word
    return word[:-1] if word.endswith("s") and len(word) > 2 and gpu_name_matches(word[:-1], gpus) else ""


def _gpu_words(said: list[str], at: int, gpus: Collection[str]) -> int:
    """Return how many words from said[at] name a GPU together ("gtx 1080 ti"); 0 where they do not."""
    return _words_together(said, at, lambda words: gpu_name_matches(" ".join(words), gpus), sizes=(4, 3, 2))


def _names_cards(said: list[str], at: int, gpus: Collection[str]) -> bool:
    """Whether the words at said[at] name a card, a family or a memory size cards have ("v100", "rtx 4090", "24gb")."""
    word = said[at] if at < len(said) else ""
    return bool(word and (_gpu_words(said, at, gpus) or gpu_name_matches(word, gpus) or gpus_of_memory(word, gpus)))


def _owned_gpus(said: list[str], at: int, gpus: Collection[str]) -> tuple[int, str, int, str] | None:
    """Read "[N | Nx] GPU" at said[at] ("1080 ti", "4 3090s", "2x a6000", "4xa100-80gb"): the count, the slug it
    names, the words taken and the family's word where it names a family, not a card ("we have 4 a100s": the
    smaller card, whose fit holds on the larger; "" otherwise); None where no GPU is named ("1080 ti" is a GPU, not
    1080 cards)."""
    named = _one_gpu(said, at, gpus)
    if named is not None:
        return 1, *named
    many = _GPU_COUNT.fullmatch(said[at]) if at < len(said) else None
    if many is None or int(many[1]) < 1:
        return None
    if many[2]:
        slug = smallest_card(slugs := gpu_name_matches(many[2], gpus))
        return None if slug is None else (int(many[1]), slug, 1, many[2] if len(slugs) > 1 else "")
    named = _one_gpu(said, at + 1, gpus)
    return (int(many[1]), named[0], named[1] + 1, named[2]) if named is not None else None


def _one_gpu(said: list[str], at: int, gpus: Collection[str]) -> tuple[str, int, str] | None:
    """Return the slug the words at said[at] name (three, two or one of them; a family's smaller card), the words
    taken and the family's word ("" where they name one card)."""
    taken = _gpu_words(said, at, gpus) or (1 if at < len(said) and gpu_name_matches(said[at], gpus) else 0)
    words = " ".join(said[at:at + taken])
    slugs = gpu_name_matches(words, gpus) if taken else ()
    slug = smallest_card(slugs)
    return None if slug is None else (slug, taken, words if len(slugs) > 1 else "")


def _known(word: str, presets: Collection[str]) -> bool:
    """Whether a word means something of its own (a preset, a setting, a filler), so it is no setting's value."""
    return not _is_number(word) and (word in presets or word in SETTING_WORDS or word in FILLER)
