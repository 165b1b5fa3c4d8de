"""`/gpugauge` naming public data sets and corpora: their training split, tokens and recipe, told back."""

from __future__ import annotations

import pytest

from tests.test_slack_phrases import PRESET_WORDS, parse
from workers.slack.grammar import CommandError, parse_command


def test_a_count_the_user_gives_wins_over_the_data_sets() -> None:
    given = parse("resnet50 imagenet 100k samples")
    assert given.spec["dataset"]["samples"] == 100_000 and not any("imagenet" in d for d in given.defaults_used)


def test_what_a_data_set_name_set_is_told_back_as_assumed() -> None:
    assert parse("vgg16 cifar10 batch 128").defaults_used == (
        "samples=50,000 (cifar10)", "input 3x32x32", "epochs=1 (one pass over the data; say e.g. `90 epochs`)",
        "precision=fp32")
    # a ResNet on CIFAR is the layout CIFAR recipes train, at their recipe's 200 epochs
    assert parse("resnet18 cifar10 batch 128").defaults_used == (
        "resnet18-cifar (CIFAR recipes' layout, kuangliu/pytorch-cifar: a 3x3 stem, no max-pool)",
        "samples=50,000 (cifar10)", "epochs=200 (kuangliu/pytorch-cifar main.py: 200 epochs)", "precision=fp32")
    # ImageNet is the data set of torchvision's own recipe for its ResNets: 90 epochs, not one pass
    imagenet = parse("resnet50 imagenet bf16 batch 256")
    assert imagenet.defaults_used == ("samples=1,281,167 (imagenet)",
                                      "epochs=90 (torchvision's ImageNet recipe: references/classification/train.py "
                                      "--epochs)")
    assert imagenet.spec["training"]["epochs"] == 90
    assert parse("resnet50 imagenet 30 epochs").spec["training"]["epochs"] == 30  # said wins, nothing told
    # a fine-tune is not the recipe's run, nor one pass: the Trainer's 3, as transformers' guide fine-tunes ViT
    assert parse("fine-tune resnet50 imagenet").spec["training"]["epochs"] == 3
    tuned = parse("fine-tune vit on cifar10")
    assert tuned.spec["training"]["epochs"] == 3 and \
        "epochs=3 (a fine-tune, as transformers' Trainer: num_train_epochs)" in tuned.defaults_used
    assert "epochs" not in parse("train resnet50 on 10k images").spec["training"]  # not said a fine-tune: one pass
    assert "epochs" not in parse("vgg16 cifar10").spec["training"]  # not the recipe's data set: one pass, told
    assert parse("llama 3 8b lora on 10k samples").spec["training"]["epochs"] == 3  # the Trainer's
    assert "epochs" not in parse("pretrain gpt2 on 10B tokens").spec["training"]
    # a GAN on CelebA as PyTorch's DCGAN tutorial trains it (one pass was about 3 minutes of a 5-epoch run)
    gan = parse("train a gan on celeba")
    assert gan.spec["training"]["epochs"] == 5 and "epochs=5 (PyTorch's DCGAN tutorial on CelebA: num_epochs = 5)" \
        in gan.defaults_used
    assert "epochs" not in parse("dcgan on cifar10").spec["training"]
    # "a vae" is pytorch/examples' MNIST VAE (784 inputs), told back as "a gan" and "an mlp" are: on CelebA it was
    # sized so without a word
    told = parse("train a vae on celeba").defaults_used[0]
    assert told.startswith("vae: sized as vae-mnist, VAE of pytorch/examples")


def test_cifar_sizes_only_an_image_preset_at_32_by_32() -> None:
    assert parse("vgg16 cifar100").spec["model"]["input_shape"] == [3, 32, 32]
    # a ResNet: the CIFAR layout (a 3x3 stem, no max-pool) at its own 32 x 32, not torchvision's stem at 32 x 32
    assert parse("resnet18 cifar100").spec["model"] == {"preset": "resnet18-cifar"}
    assert parse("resnet50 cifar10 224x224").spec["model"] == {"preset": "resnet50", "input_shape": [3, 224, 224]}
    assert "input_shape" not in parse("bert-base cifar10").spec["model"]  # a language model reads tokens
    assert "input_shape" not in parse("vae-mnist mnist").spec["model"]  # one channel at 28 x 28 already


def test_a_vit_keeps_its_224_input_and_says_the_images_are_resized() -> None:
    # ViT-B/16's patch grid and position embeddings are 224 x 224's: at 32 x 32 it would see 2 x 2 patches
    command = parse("fine-tune vit-b16 on cifar10 10 epochs")
    assert "input_shape" not in command.spec["model"]
    assert "input 3x224x224 (vit-b16's own: the 32 x 32 images resized to it)" in command.defaults_used
    assert parse("vit-b16 imagenet").defaults_used[0] == "samples=1,281,167 (imagenet)"  # no image size named
    # from scratch on ImageNet: torchvision's vit_b_16 recipe's 300 epochs (references/classification README)
    assert parse("vit-b16 imagenet").spec["training"]["epochs"] == 300


@pytest.mark.parametrize(("text", "preset", "samples", "shape"), [
    ("mlp mnist 10 epochs", "mlp-mnist", 60_000, None),  # the preset's two words also name its data set
    ("vae mnist", "vae-mnist", 60_000, None),
    ("mlp fashion-mnist", "mlp", 60_000, None),
    ("dcgan celeba 25 epochs", "dcgan", 202_599, None),  # the DCGAN reads its 64 x 64 resize: no image input
    ("resnet18 svhn", "resnet18-cifar", 73_257, None),  # CIFAR recipes' layout, at its own 32 x 32
    ("fine-tune bert base on squad 2 epochs", "bert-base", 87_599, None),
    ("distilbert sst2", "distilbert", 67_349, None),
    ("roberta-base mnli", "roberta-base", 392_702, None),
    ("bert imdb", "bert", 25_000, None),
    ("mistral 7b qlora dolly 3 epochs", "mistral-7b", 15_011, None),  # an instruction set
])
def test_more_public_data_sets_give_their_training_split(text: str, preset: str, samples: int,
                                                         shape: list[int] | None) -> None:
    command = parse(text)
    assert command.spec["model"]["preset"] == preset
    assert command.spec["dataset"]["samples"] == samples
    assert command.spec["model"].get("input_shape") == shape
    # a text set leaves the length to seq=, its own script (SQuAD's 384; IMDb's guide, the model's 512: GLUE's 128
    # would cut most reviews) or a fine-tune's recipe (TRL's 1,024 for a decoder, GLUE's 128 for an encoder's
    # classifier); an image set, to the image
    recipe = {"squad": 384, "mistral": 1024, "sst2": 128, "mnli": 128, "imdb": 512}
    assert command.spec["training"].get("sequence_length") == next(
        (seq for word, seq in recipe.items() if word in text), None)
    assert any(d.startswith(f"samples={samples:,} (") for d in command.defaults_used)


def test_squad_is_fine_tuned_for_its_recipes_two_epochs_where_none_are_said() -> None:
    # google-research/bert's run_squad.py runs 2 epochs for BERT-Base and -Large; the Trainer's 3 was 1.5x the time
    command = parse("fine-tune bert-large on squad")
    assert command.spec["training"]["epochs"] == 2
    assert "epochs=2 (google-research/bert run_squad.py's --num_train_epochs=2.0)" in command.defaults_used
    assert parse("fine-tune bert base on squad for 3 epochs").spec["training"]["epochs"] == 3  # said wins
    assert parse("fine-tune bert base on imdb").spec["training"]["epochs"] == 3  # no recipe of its own: the Trainer's


def test_alpaca_is_sized_at_the_length_its_own_script_truncates_to() -> None:
    command = parse("fine-tune llama 3 8b with lora on alpaca 3 epochs")
    assert command.spec["dataset"]["samples"] == 52_002
    assert command.spec["training"]["sequence_length"] == 512  # not Llama 3's 8,192-token context: 16x the tokens
    assert "seq=512 (Stanford Alpaca's train.py truncates at model_max_length 512)" in command.defaults_used
    assert not any("the model's context" in d for d in command.defaults_used)
    assert parse("llama 3 8b lora alpaca seq 2048").spec["training"]["sequence_length"] == 2048  # said wins


def test_billions_of_tokens_are_the_data_set_made_samples_by_the_sequence_length() -> None:
    command = parse("pretrain gpt2 on 10B tokens, seq 1024, bf16, batch 16")
    assert command.spec["dataset"]["samples"] == 9_765_625 and command.spec["training"]["sequence_length"] == 1024
    assert "samples=9,765,625 (10,000,000,000 tokens / seq 1,024)" in command.defaults_used
    assert parse("gpt2 seq 2048 tokens").spec["training"]["sequence_length"] == 2048  # no count: a setting
    assert parse("gpt2 2048 tokens").spec["training"]["sequence_length"] == 2048  # a sequence length
    # without a sequence length, a language model's tokens are made samples by its context (the length it is
    # sized at), said back; a model without one is asked for seq=
    told = parse("gpt2 on 10B tokens")
    assert told.spec["dataset"]["samples"] == 9_765_625 and "sequence_length" not in told.spec["training"]
    assert "samples=9,765,625 (10,000,000,000 tokens / seq 1,024, the model's context)" in told.defaults_used
    # a pre-training run's trillions ("15T tokens", Llama 3's) were an unknown word
    trillion = parse("pretrain llama 3 70b on 1T tokens seq 8192")
    assert trillion.spec["dataset"]["samples"] == -(-10**12 // 8192)
    with pytest.raises(CommandError) as caught:
        parse("resnet50 on 10B tokens")
    assert any("add seq=" in p for p in caught.value.problems)
    with pytest.raises(CommandError) as caught:  # the phrases' marker typed by hand is an unknown word, no crash
        parse("gpt2 tokens-need-seq:lots")
    assert any("unknown word" in p for p in caught.value.problems)


def test_a_named_corpus_is_its_tokens_made_samples_by_the_sequence() -> None:
    command = parse("pretrain gpt2 on openwebtext")
    assert command.spec["dataset"]["samples"] == -(-9_035_582_198 // 1024)  # nanoGPT's train.bin, GPT-2's context
    assert command.defaults_used[0].startswith("9,035,582,198 tokens (openwebtext: ")
    said = parse("pretrain gpt2 on openwebtext seq 512")
    assert said.spec["dataset"]["samples"] == -(-9_035_582_198 // 512)
    assert parse("gpt2 openwebtext samples=1M").spec["dataset"]["samples"] == 1_000_000  # a count said wins
    # BERT's corpora as its paper counts them in words, made tokens (4 to 3) and told back: a pre-training
    wiki = parse("train bert from scratch on wikipedia")
    assert wiki.spec["dataset"]["samples"] == -(-3_333_333_333 // 512) and wiki.spec["training"]["precision"] == \
        "bf16-mixed"
    assert wiki.defaults_used[0].startswith("3,333,333,333 tokens (wikipedia: English Wikipedia's 2,500M words")
    assert parse("pretrain bert on bookcorpus").spec["dataset"]["samples"] == -(-1_066_666_667 // 512)
    # BERT's own corpus is both, said together ("unknown word 'bookcorpus'"): their tokens add, each told back once
    both = parse("pretrain bert-large from scratch on english wikipedia and bookcorpus")
    assert both.spec["dataset"]["samples"] == -(-(3_333_333_333 + 1_066_666_667) // 512)
    assert sum("tokens (wikipedia:" in t or "tokens (bookcorpus:" in t for t in both.defaults_used) == 2


def test_the_mnist_presets_train_for_their_own_recipes_epochs_on_mnist() -> None:
    assert parse("train a vae on mnist").spec["training"]["epochs"] == 10  # pytorch/examples vae
    assert parse("mlp mnist").spec["training"]["epochs"] == 20  # Keras' mnist_mlp.py
    assert parse("mlp mnist 5 epochs").spec["training"]["epochs"] == 5
    assert "epochs" not in parse("mlp fashion-mnist").spec["training"]  # not the recipe's data set


def test_a_generic_model_word_is_sized_as_one_model_and_told_which() -> None:
    # "train an mlp on 1m rows of tabular data" ('tabular'), "train a transformer from scratch on 1b tokens"
    # ('transformer') and "train a stylegan on ffhq" ('ffhq') were refused
    rows = parse("train an mlp on 1m rows of tabular data")
    assert rows.spec["dataset"]["samples"] == 1_000_000 and rows.defaults_used[0].startswith("mlp: sized as mlp-mnist")
    decoder = parse("train a transformer from scratch on 1b tokens")
    assert decoder.defaults_used[0].startswith("transformer: sized as gpt2, GPT-2 124M")
    assert decoder.spec["dataset"]["samples"] == -(-1_000_000_000 // 1024)
    assert parse("train a gan on ffhq").spec["dataset"]["samples"] == 70_000


@pytest.mark.parametrize(("text", "samples", "preset"), [
    ("fine tune distilbert for sentiment analysis on 50k tweets", 50_000, "distilbert"),
    ("continue pretraining llama 3 8b on 5b tokens of code", -(-5_000_000_000 // 8192), "llama-3-8b"),
    ("train gpt-2 on shakespeare", -(-301_966 // 1024), "gpt-2"),  # nanoGPT's tiny Shakespeare in GPT-2 tokens
    ("pretrain a 125m model on 2.5b tokens", -(-2_500_000_000 // 1024), "125m"),
    ("train a vision transformer on imagenet-21k", 14_197_122, "vit"),
])
def test_everyday_phrasings_of_a_run_are_read(text: str, samples: int, preset: str) -> None:
    # each was refused: 'sentiment', 'analysis', 'tweets'; 'continue', 'code'; 'shakespeare'; '125m'; 'vision',
    # 'imagenet-21k'
    command = parse(text)
    assert command.spec["dataset"]["samples"] == samples and command.spec["model"]["preset"] == preset
    if text.startswith("continue"):  # continued pre-training: the pre-training run's defaults, from the weights
        assert command.spec["training"]["from_pretrained"] is True


@pytest.mark.parametrize(("text", "samples"), [
    ("fine-tune llama 3 8b on 50k instruction examples", 50_000),
    ("fine-tune bert on 10,000 labeled examples for 5 epochs", 10_000),
    ("fine-tune roberta base on 20k customer support tickets", 20_000),
    # filler words that also describe data: "tabular", "chat", "code" were kept and the count lost its noun
    ("train an mlp on 1m tabular rows", 1_000_000),
    ("fine-tune llama 3 8b on 20k chat conversations", 20_000),
    ("fine-tune llama 3 8b on 10k code samples", 10_000),
    ("train an mlp on 500k data points", 500_000),
    ("train an mlp on a table of 1m rows", 1_000_000),
])
def test_words_describing_a_counts_noun_are_dropped(text: str, samples: int) -> None:
    # each was refused: the number, the describing words and the noun were three unknown words
    assert parse(text).spec["dataset"]["samples"] == samples


def test_a_data_set_named_between_a_count_and_its_noun_keeps_both() -> None:
    # "25k imdb reviews", "20k cifar10 images": refused (the count, the data set and the noun, three unknown words);
    # said the other way round ("cifar10 20k images") they were read. The count is the samples, the data set its input.
    imdb = parse("fine-tune distilbert on 25k imdb reviews")
    assert imdb.spec["dataset"]["samples"] == 25_000 and "DistilBERT on IMDb" in " ".join(imdb.defaults_used)
    cifar = parse("resnet18 on 20k cifar10 images")
    assert cifar.spec == parse("resnet18 on cifar10 20k images").spec and cifar.spec["dataset"]["samples"] == 20_000


def test_a_word_the_grammar_knows_is_never_dropped_as_describing() -> None:
    with pytest.raises(CommandError):  # "spot" is the grammar's: not taken for a description of the examples
        parse("fine-tune llama 3 8b on 50k spot examples")
    images = parse("train a unet on 2000 512x512 medical images")  # the image size between them stays
    assert images.spec["model"]["input_shape"] == [3, 512, 512] and images.spec["dataset"]["samples"] == 2000


def test_peft_quantization_models_and_gpu_hours_are_read() -> None:
    # 'peft', 'quantization', 'models' and 'hours' ("how many a100 hours") were unknown words
    assert parse("run llama 3 8b fine-tune with peft").spec["training"]["parallelism"]["adapter"]["kind"] == "lora"
    assert parse("fine-tune llama 3 8b with 4-bit quantization").spec["training"]["parallelism"]["adapter"][
        "kind"] == "qlora"
    assert parse("what gpu should i buy for fine-tuning 7b models").spec["constraints"]["providers"] == ["onprem"]
    assert parse("how many a100 hours to pretrain gpt2 xl on 40b tokens").spec["dataset"]["samples"] == 39_062_500
    assert parse("fine-tune llama 3 8b within 36 hours").spec["constraints"]["deadline_hours"] == 36.0


def test_a_rig_of_cards_glue_a_small_gpt_and_sixteen_bits_are_read() -> None:
    # '2x3090' and 'rig', 'glue', 'small gpt', '16 bit' and 'tell' were unknown words
    rig = parse_command("fine-tune llama 3 8b on my 2x3090 rig", presets=PRESET_WORDS, gpus=("rtx-3090", "t4"))
    assert rig.spec["constraints"]["owned_gpus"] == [{"gpu": "rtx-3090", "count": 2}]
    glue = parse("fine-tune bert-base-uncased on glue")  # GLUE's eight training sets, WNLI left out, as BERT ran them
    assert glue.spec["dataset"]["samples"] == 949_098 and glue.spec["training"]["sequence_length"] == 128
    assert parse("train a small gpt on 100m tokens").spec["model"]["preset"] == "gpt2"
    assert parse("fine-tune llama 3 8b with lora, 16 bit, 2 epochs").spec["training"]["precision"] == "bf16-mixed"
    assert parse("fine-tune llama 3 8b and tell me the cost on gcp").spec["objective"] == "cost"


def test_a_resnet_code_llama_each_custom_and_a_deadline_of_days_are_read() -> None:
    # 'resnet', 'codellama', 'each', 'custom' and 'days' (after "a deadline of 2") were refused
    resnet = parse("train a resnet on imagenet")
    assert resnet.defaults_used[0].startswith("resnet: sized as resnet50, ResNet-50")
    assert parse("fine-tune llama 3 8b on 10k samples of 4096 tokens each").spec["dataset"]["samples"] == 10_000
    assert parse("fine-tune bert on a custom dataset of 5k sentences").spec["dataset"]["samples"] == 5_000
    assert parse("train resnet50 on imagenet with a deadline of 2 days").spec["constraints"]["deadline_hours"] == 48.0
    assert parse("train resnet50 deadline 36h").spec["constraints"]["deadline_hours"] == 36.0


def test_code_llama_is_llama_2s_layers() -> None:
    from workers.sizing.presets.registry import find_preset

    assert find_preset("codellama-7b").name == "llama2-7b" and find_preset("CodeLlama-13b-hf").name == "llama2-13b"


def test_stories_and_a_run_for_a_week_are_read() -> None:
    # 'stories' and "for 1 week" were unknown words; "for 90 epochs" stays the epochs
    assert parse("fine-tune gpt2 medium on 5k stories").spec["dataset"]["samples"] == 5_000
    week = parse("train bert base on 16 v100s for 1 week")
    assert week.spec["constraints"]["deadline_hours"] == 168.0 and week.spec["constraints"]["max_gpus"] == 16
    epochs = parse("train resnet50 on imagenet for 90 epochs")
    assert epochs.spec["training"]["epochs"] == 90 and "deadline_hours" not in epochs.spec.get("constraints", {})


def test_a_hedged_duration_trillions_and_an_autoencoder_are_read() -> None:
    # "for about 3 hours", "2 trillion tokens" and "an autoencoder" were refused
    assert parse("fine-tune llama 3 8b with lora for about 3 hours").spec["constraints"]["deadline_hours"] == 3.0
    assert parse("fine-tune llama 3 8b within roughly 2 days").spec["constraints"]["deadline_hours"] == 48.0
    assert parse("pretrain a 7b model on 2 trillion tokens").spec["dataset"]["samples"] == 2 * 10**12 // 2048
    encoder = parse("train an autoencoder on mnist")
    assert encoder.defaults_used[0].startswith("autoencoder: sized as vae-mnist")


def test_squad_two_and_a_budget_said_as_less_than_are_read() -> None:
    # "squad v2" ('v2'), "could i ... for less than $50" ('could', 'less', 'than') were refused
    two = parse("fine-tune bert-large-uncased on squad v2")
    assert two.spec["dataset"]["samples"] == 130_319 and two.spec["training"]["epochs"] == 2
    assert two.spec["training"]["sequence_length"] == 384
    assert parse("could i train resnet50 on imagenet for less than $50").spec["constraints"]["budget_usd"] == 50.0
    assert parse("fine-tune bert on sst2").spec["dataset"]["samples"] == 67_349
