"""Presets, built from their layers, against the parameter and multiply-add counts published for them."""

from __future__ import annotations

import pytest

from workers.schemas.specs import load_job
from workers.sizing.errors import ShapeError, SpecError, UnknownNameError
from workers.sizing.layers.build import compute_model_stats
from workers.sizing.presets.cnn import resnet_layers
from workers.sizing.presets.registry import PRESETS, find_preset, preset_layers, preset_names, preset_stats
from workers.sizing.presets.transformer import GPT2_SIZES, lm_multiply_adds
from workers.sizing.stats import LayerKind, LayerStats, ModelStats


def within(value: int, published: float, tolerance: float) -> bool:
    return abs(value - published) <= tolerance * published


def rows_under(stats: ModelStats, prefix: str) -> list[LayerStats]:
    return [r for r in stats.layers if r.name.startswith(prefix)]


# torchvision model docs (pytorch.org/vision/stable/models), IMAGENET1K_V1 weights: num_params and
# GFLOPS (which torchvision counts as multiply-adds) at 224x224.
TORCHVISION = {
    "resnet18": (11_689_512, 1.81e9),
    "resnet34": (21_797_672, 3.66e9),
    "resnet50": (25_557_032, 4.09e9),
    "resnet101": (44_549_160, 7.80e9),
    "resnet152": (60_192_808, 11.51e9),
    "vgg16": (138_357_544, 15.47e9),
    "alexnet": (61_100_840, 0.71e9),
    "vit-b16": (86_567_656, 17.56e9),
    "vit-b32": (88_224_232, 4.41e9),
    "vit-l16": (304_326_632, 61.55e9),
}


@pytest.mark.parametrize("name", sorted(TORCHVISION))
def test_vision_presets_match_torchvision_parameters_and_multiply_adds(name: str) -> None:
    params, macs = TORCHVISION[name]
    m = preset_stats(name)
    assert within(m.parameters, params, 0.01)
    assert within(m.multiply_adds, macs, 0.01)


# He et al. 2016, "Deep Residual Learning for Image Recognition", Table 1, "FLOPs" (multiply-adds)
# at 224x224: 1.8, 3.6, 3.8, 7.6, 11.3 x 10^9. The paper's layout puts the stride on the first 1x1
# of a bottleneck. The presets follow torchvision (stride on the 3x3, "ResNet v1.5", ~+6 % for
# ResNet-50: 4.09 vs 3.86 G) because that is what PyTorch users train. The paper prints two
# significant figures and truncates some (3.66 -> "3.6", 3.86 -> "3.8"), so 2 % is the precision
# of the printed figures, not a loose fit.
HE_TABLE_1 = {18: 1.8e9, 34: 3.6e9, 50: 3.8e9, 101: 7.6e9, 152: 11.3e9}


@pytest.mark.parametrize("depth", sorted(HE_TABLE_1))
def test_original_resnet_layout_matches_he_et_al_table_1(depth: int) -> None:
    m = compute_model_stats(resnet_layers(depth, stride_on_1x1=True), input_shape=[3, 224, 224], sequence_length=None)
    assert within(m.multiply_adds, HE_TABLE_1[depth], 0.02)


def test_stride_placement_is_the_only_difference_between_the_resnet_layouts() -> None:
    v1 = compute_model_stats(resnet_layers(50, stride_on_1x1=True), input_shape=[3, 224, 224], sequence_length=None)
    v15 = preset_stats("resnet50")
    assert v1.parameters == v15.parameters
    assert v15.multiply_adds > v1.multiply_adds * 1.05


def test_vgg16_convolutions_match_he_et_al() -> None:
    # He et al. 2016: "VGG-16/19 nets (15.3/19.6 billion FLOPs)"; the three dense layers add 0.12 G.
    m = preset_stats("vgg16")
    conv = sum(r.multiply_adds for r in m.layers if r.kind is LayerKind.CONV)
    assert within(conv, 15.3e9, 0.01)


def test_alexnet_parameters_match_krizhevsky_within_two_percent() -> None:
    # Krizhevsky et al. 2012: "60 million parameters" (two-GPU variant); torchvision's one-GPU layout
    # has 61.1 M, 1.8 % more, which the torchvision test above checks to 1 %.
    assert within(preset_stats("alexnet").parameters, 60e6, 0.02)


# Exact parameter counts of the backbones in KerasHub's presets (keras-team/keras-hub:
# bert_presets.py and gpt2_presets.py, "params"); the papers round them: Devlin et al. 2019
# "110M" / "340M" for BERT, Radford et al. 2019 117M / 345M / 762M / 1542M (miscounted; HF and
# OpenAI later say 124M / 355M / 774M / 1.5B).
LANGUAGE = {
    "bert-base": 109_482_240,
    "bert-large": 335_141_888,
    "gpt2": 124_439_808,
    "gpt2-medium": 354_823_168,
    "gpt2-large": 774_030_080,
    "gpt2-xl": 1_557_611_200,
    "llama-7b": 6.7e9,  # Touvron et al. 2023, LLaMA, Table 2: "6.7B"
}


@pytest.mark.parametrize("name", sorted(LANGUAGE))
def test_language_presets_match_published_parameters(name: str) -> None:
    assert within(preset_stats(name).parameters, LANGUAGE[name], 0.01)


def test_bert_base_matches_devlin_110m() -> None:
    assert within(preset_stats("bert-base").parameters, 110e6, 0.01)


@pytest.mark.parametrize("name", sorted(GPT2_SIZES))
def test_gpt2_multiply_adds_match_the_llm_foundry_closed_form(name: str) -> None:
    depth, hidden, _ = GPT2_SIZES[name]
    m = preset_stats(name, sequence_length=1024)
    # Weights in matrix products: four attention and two FFN matrices per layer, plus the LM head.
    matmul = depth * 12 * hidden * hidden + hidden * 50257
    assert within(
        m.multiply_adds,
        lm_multiply_adds(matmul_weights=matmul, layers=depth, hidden=hidden, sequence_length=1024),
        0.01,
    )
    # The cruder "2 x parameters FLOPs per token" (MosaicML) also agrees within 1 %.
    assert within(m.multiply_adds, m.parameters * 1024 + 2 * depth * hidden * 1024**2, 0.01)


def test_llama_multiply_adds_match_the_closed_form() -> None:
    m = preset_stats("llama-7b", sequence_length=2048)
    matmul = 32 * (4 * 4096 * 4096 + 3 * 4096 * 11008) + 4096 * 32000
    assert within(
        m.multiply_adds,
        lm_multiply_adds(matmul_weights=matmul, layers=32, hidden=4096, sequence_length=2048),
        0.01,
    )


def test_shorter_sequences_cost_less_and_shrink_attention_quadratically() -> None:
    long, short = preset_stats("gpt2"), preset_stats("gpt2", sequence_length=512)
    assert long.sequence_length == 1024 and short.sequence_length == 512
    assert long.parameters == short.parameters
    core_long = sum(r.saved_values for r in long.layers if r.kind is LayerKind.ATTENTION)
    core_short = sum(r.saved_values for r in short.layers if r.kind is LayerKind.ATTENTION)
    assert 3.5 * core_short < core_long < 4 * core_short  # s^2 probabilities dominate, plus 3*s*h for Q, K, V


def test_sequence_beyond_the_context_names_the_sequence_length() -> None:
    with pytest.raises(ShapeError) as caught:
        preset_stats("bert-base", sequence_length=1024)
    assert caught.value.field == "training.sequence_length"


def test_dcgan_matches_the_derived_generator_and_discriminator_figures() -> None:
    # estimation-methods.md §5 [derived] from pytorch/examples dcgan/main.py: G 3,576,704 params,
    # 104.6 M MACs; D 2,765,568 params, 103.8 M MACs.
    m = preset_stats("dcgan")
    generator, discriminator = rows_under(m, "G."), rows_under(m, "D.")
    assert sum(r.parameters for r in generator) == 3_576_704
    assert sum(r.parameters for r in discriminator) == 2_765_568
    assert within(sum(r.multiply_adds for r in generator), 104.6e6, 0.01)
    assert within(sum(r.multiply_adds for r in discriminator), 103.8e6, 0.01)
    assert generator[-1].output_shape == (3, 64, 64)
    assert discriminator[-1].output_shape == (1, 1, 1)


def test_vae_matches_the_derived_figures() -> None:
    # estimation-methods.md §5 [derived] from pytorch/examples vae/main.py: 652,824 params, ~0.65 M MACs.
    m = preset_stats("vae-mnist")
    assert m.parameters == 652_824
    assert within(m.multiply_adds, 0.65e6, 0.01)
    assert m.layers[-1].output_shape == (784,)


def test_mnist_mlp_is_keras_examples_784_512_512_10_with_dropout_masks() -> None:
    # keras-team/keras examples/mnist_mlp.py: Dense(512) x 2 with Dropout(0.2), Dense(10): 669,706 weights.
    m = preset_stats("mlp")
    assert m.name == "mlp-mnist"
    assert m.parameters == 784 * 512 + 512 + 512 * 512 + 512 + 512 * 10 + 10 == 669_706
    assert [r.output_shape for r in m.layers if r.type == "dense"] == [(512,), (512,), (10,)]
    dropouts = [r for r in m.layers if r.type == "dropout"]
    assert len(dropouts) == 2 and all(r.saved_mask_bytes == 512 for r in dropouts)  # one byte a unit


def test_cased_bert_differs_from_uncased_by_its_vocabulary_alone() -> None:
    # the cased WordPiece vocabulary has 28,996 tokens against 30,522: the word embedding's rows are the difference
    for size, hidden in (("base", 768), ("large", 1024)):
        cased, uncased = preset_stats(f"bert-{size}-cased"), preset_stats(f"bert-{size}")
        assert uncased.parameters - cased.parameters == (30_522 - 28_996) * hidden
        assert cased.multiply_adds == uncased.multiply_adds  # an embedding lookup multiplies nothing
    assert find_preset("google-bert/bert-base-cased").name == "bert-base-cased"


def test_dqn_counts_the_target_network_as_frozen() -> None:
    # estimation-methods.md §5 [derived] from Mnih et al. 2015: 1,693,362 params, ~9.35 M MACs per network.
    m = preset_stats("dqn-atari")
    online, target = rows_under(m, "online."), rows_under(m, "target.")
    assert m.parameters == 1_693_362
    assert m.frozen_parameters == 1_693_362
    assert within(sum(r.multiply_adds for r in online), 9.35e6, 0.01)
    assert sum(r.multiply_adds for r in target) == sum(r.multiply_adds for r in online)
    assert all(r.saved_values == 0 and r.parameters == 0 for r in target)


def test_meta_learner_trains_the_learner_initialisation_and_the_lstm() -> None:
    m = preset_stats("lstm-meta-learner")
    meta = next(r for r in m.layers if r.type == "meta_lstm")
    learner = m.frozen_parameters  # the support copy of the learner
    assert learner == 32_901  # markdtw/meta-learning-lstm-pytorch learner.py, 5 classes, 84x84
    assert meta.parameters == learner + 2_126  # cI + LSTMCell(4, 20) + the gates' weights and biases
    assert m.parameters == meta.parameters
    assert all(r.parameters == 0 for r in rows_under(m, "query."))


@pytest.mark.parametrize("name", preset_names())
def test_every_preset_totals_its_rows_and_cites_a_source(name: str) -> None:
    m = preset_stats(name)
    assert m.name == name
    assert m.neurons == sum(r.neurons for r in m.layers) > 0
    assert m.parameters == sum(r.parameters for r in m.layers) > 0
    assert m.multiply_adds == sum(r.multiply_adds for r in m.layers) > 0
    assert all(min(r.neurons, r.parameters, r.multiply_adds, r.saved_values, r.saved_mask_bytes) >= 0 for r in m.layers)
    preset = PRESETS[name]
    assert preset.description and preset.published.source
    # a checkpoint's published count holds its frozen weights too where they are part of it (Whisper's sinusoidal
    # positions); a DQN's target network is a second copy, not counted in its published figure
    trained_or_all = m.parameters + (m.frozen_parameters if name.startswith("whisper") else 0)
    assert within(trained_or_all, preset.published.parameters, 0.01)


def test_preset_layers_are_an_editable_copy_giving_the_same_statistics() -> None:
    layers = preset_layers("resnet18")
    layers[-1]["out_features"] = 10
    edited = compute_model_stats(layers, input_shape=[3, 224, 224], sequence_length=None)
    assert edited.parameters == preset_stats("resnet18").parameters - 990 * 513
    assert preset_layers("resnet18")[-1]["out_features"] == 1000


def test_input_shape_override_scales_a_cnn() -> None:
    assert within(
        preset_stats("resnet50", input_shape=[3, 448, 448]).multiply_adds,
        4 * preset_stats("resnet50").multiply_adds,
        0.01,
    )


@pytest.mark.parametrize(("depth", "params"), [(18, 11_173_962), (50, 23_520_842)])
def test_the_cifar_layout_resnets_have_the_cifar_recipes_size_and_work(depth: int, params: int) -> None:
    # kuangliu/pytorch-cifar's ResNet-18 / -50 (3x3 stem, no max-pool, 10 classes): the counts its users quote
    cifar = preset_stats(f"resnet{depth}-cifar")
    assert cifar.parameters == params
    # its stages run at 32 down to 4 px: 16x the multiply-adds of torchvision's stem fed the same 32 x 32 images
    torchvision = preset_stats(f"resnet{depth}", input_shape=[3, 32, 32])
    assert 12 < cifar.multiply_adds / torchvision.multiply_adds < 20
    assert within(preset_stats("resnet18-cifar").multiply_adds, 0.556e9, 0.01)


def test_an_input_too_small_for_a_preset_names_the_input_shape() -> None:
    with pytest.raises(ShapeError) as caught:
        preset_stats("alexnet", input_shape=[3, 16, 16])
    assert caught.value.field == "model.input_shape"


def test_a_gan_sized_at_its_images_is_itself_and_another_size_is_refused_with_the_reason() -> None:
    # DCGAN's input is its 100 x 1 x 1 latent: a user's "3 x 64 x 64" are the images it makes, not a
    # 3-channel 64 x 64 latent (89 GiB a step at batch 128 before), and no input resizes its fixed layers.
    own = preset_stats("dcgan")
    assert preset_stats("dcgan", input_shape=[3, 64, 64]) == own
    assert preset_stats("dcgan", input_shape=[100, 1, 1]) == own
    for shape in ([3, 128, 128], [100, 64, 64]):
        with pytest.raises(SpecError) as caught:
            preset_stats("dcgan", input_shape=shape)
        assert caught.value.field == "model.input_shape"
        assert "generates 3 x 64 x 64 images" in caught.value.reason


def test_a_language_model_refuses_an_input_shape() -> None:
    with pytest.raises(SpecError, match="sequence_length"):
        preset_stats("gpt2", input_shape=[3, 224, 224])


@pytest.mark.parametrize(
    ("alias", "name"),
    [
        ("ResNet-50", "resnet50"),
        ("gpt2_small", "gpt2"),
        ("bert", "bert-base"),
        ("vit_b_16", "vit-b16"),
        ("ViT-B/16", "vit-b16"),  # the paper's name, as people write it
        ("dqn", "dqn-atari"),
    ],
)
def test_aliases_resolve_to_presets(alias: str, name: str) -> None:
    assert find_preset(alias).name == name


def test_unknown_preset_suggests_the_closest_names() -> None:
    with pytest.raises(UnknownNameError) as caught:
        preset_stats("rsnet50")
    assert caught.value.field == "model.preset"
    assert "resnet50" in caught.value.suggestions


def test_preset_names_and_aliases_do_not_collide() -> None:
    names = list(preset_names())
    aliases = [a for p in PRESETS.values() for a in p.aliases]
    assert len(set(names + aliases)) == len(names) + len(aliases)


@pytest.mark.parametrize(("name", "count", "kv_heads"), [
    ("llama2-13b", 13_015_864_320, 40), ("llama3-70b", 70_553_706_496, 8), ("mistral-7b", 7_241_732_096, 8)])
def test_the_common_fine_tuning_bases_have_their_checkpoints_parameter_counts(name: str, count: int,
                                                                              kv_heads: int) -> None:
    """The layers give the Hugging Face checkpoint's count exactly (a shape slip, say a tied head or full K/V
    heads on a grouped-query model, moves it by millions)."""
    assert preset_stats(name).parameters == count
    assert {layer.get("kv_heads") for layer in preset_layers(name) if layer["type"] == "transformer_block"} \
        == {kv_heads}
    assert find_preset(name.replace("llama3-70b", "llama-3.1-70b")).name == name


@pytest.mark.parametrize(("name", "published", "depth", "hidden", "kv_width"), [
    ("qwen2.5-7b", 7.61e9, 28, 3584, 512), ("qwen2.5-14b", 14.7e9, 48, 5120, 1024),
    ("qwen2.5-72b", 72.7e9, 80, 8192, 1024)])
def test_qwen25_presets_have_their_model_cards_size_with_biases_on_q_k_v_alone(
        name: str, published: float, depth: int, hidden: int, kv_width: int) -> None:
    stats = preset_stats(name)
    assert within(stats.parameters, published, 0.005)
    layers = preset_layers(name)
    no_bias = [{**layer, "qkv_bias": False} if layer["type"] == "transformer_block" else layer for layer in layers]
    _, job = load_job({"model": {"layers": no_bias}, "training": {"batch_size": 1, "sequence_length": 8192}})
    assert stats.parameters - job.model.parameters == depth * (hidden + 2 * kv_width)  # Q, K and V biases only
    assert find_preset(f"{name}-instruct").name == name


def test_llama_405b_has_its_papers_size_and_the_kv_heads_of_its_family() -> None:
    stats = preset_stats("llama3.1-405b")
    assert within(stats.parameters, 405e9, 0.005)  # 405,853,388,800 as its layers count them
    assert {layer.get("kv_heads") for layer in preset_layers("405b") if layer["type"] == "transformer_block"} == {8}
    assert find_preset("llama-3.1-405b").name == "llama3.1-405b"


def test_a_vit_at_another_resolution_has_its_position_table_resampled_to_it() -> None:
    # ViT-B/16 fine-tuned at 384 x 384 (the ViT paper's fine-tuning size): 24 x 24 patches + the class token, 577
    # learned positions (timm and torchvision resample the 224 table), not a refusal at 197
    at_384 = preset_stats("vit-b16", input_shape=(3, 384, 384))
    assert at_384.parameters == 86_567_656 + (577 - 197) * 768
    assert preset_stats("vit-b16").parameters == 86_567_656  # torchvision's count at 224
    # a language model's table is its context: a longer sequence is still refused, naming the field
    with pytest.raises(ShapeError, match="exceeds the model's 512 learned positions"):
        preset_stats("bert-base", sequence_length=1024)
