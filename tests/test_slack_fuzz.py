"""The grammar on commands made of its own words at random (seeded): each is a spec, a readable refusal or the help,
never an exception of another kind (a ZeroDivisionError reached a user from "gpt2 seq=0 on 7b tokens")."""

from __future__ import annotations

import random

from marshmallow import ValidationError

from tests.test_slack_phrases import PRESET_WORDS
from workers.schemas.specs import load_job
from workers.slack.grammar import CommandError, parse_command

CARDS = ("t4", "v100-16gb", "a100-40gb", "a100-80gb", "h100-sxm", "rtx-3090", "rtx-4090", "a10g", "l4", "b200")
MODELS = ("fine-tune llama 3 8b", "pretrain gpt2", "train a gan", "resnet50", "bert base", "qwen 7b", "a 1b llama",
          "mistral 7b qlora", "unet", "mlp mnist", "continued pretraining of llama 3 8b", "does gemma 2 9b fit",
          "what should we buy for", "compare a100 vs h100 for", "fit vit on a t4", "params=2b")
PHRASES = ("with lora", "4-bit", "r=16", "rank 64 on all linear layers", "alpha 32", "on a single 24gb gpu",
           "on 8 h100s", "on 2 nodes", "by friday", "within 2 days", "under $50", "$1k budget", "on 10b tokens",
           "on 7b tokens", "50k samples", "3 epochs", "seq 4096", "seq=0", "seq 4k", "batch 8", "batch=0", "bf16",
           "fp16", "fp32", "spot", "cheapest", "fastest", "as cheap as possible", "in europe", "us-east-1",
           "on my 3090", "on our 4 4090s", "or rent", "in 12gb", "on a 20gb gpu", "on imagenet", "on cifar10",
           "on celeba", "on 5k 256x256 images", "with deepspeed zero 3", "no-checkpointing", "liger", "overnight",
           "by tomorrow", "packing", "with flash attention", "epochs=-1", "gpus=0", "top=0", "0gb of data",
           "99999999999 samples", "1.5 billion tokens", "?", "inference", "=", "x")


def test_random_commands_of_the_grammars_words_are_answered_or_refused_never_raised() -> None:
    rng = random.Random(20261206)
    answered = refused = 0
    for _ in range(3000):
        text = " ".join([rng.choice(MODELS), *rng.sample(PHRASES, rng.randint(0, 6))])
        try:
            command = parse_command(text, presets=PRESET_WORDS, gpus=CARDS)
        except CommandError as error:
            assert error.problems and all(isinstance(p, str) and p for p in error.problems), text
            refused += 1
            continue
        if command.kind != "help":
            try:
                load_job(command.spec)
                answered += 1
            except ValidationError:
                refused += 1
    print(f"\n3,000 random commands: {answered} sized, {refused} refused with reasons")
    assert answered >= 500 and refused >= 500  # both paths taken
