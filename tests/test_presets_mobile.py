"""MobileNetV2 and EfficientNet-B0 presets: torchvision's published counts, the ONNX exports the harness
measured, the `multiply` layer their squeeze-and-excitation needs, and how a user names them."""

from __future__ import annotations

from pathlib import Path

import pytest

from service.slack.intake import preset_words
from tests.test_slack_phrases import parse
from workers.modelimport.onnx_import import onnx_model_stats
from workers.sizing.errors import ShapeError
from workers.sizing.layers.build import compute_model_stats
from workers.sizing.presets.mobile import efficientnet_b0_layers, mobilenet_v2_layers
from workers.sizing.presets.registry import find_preset, preset_stats
from workers.slack.grammar import parse_command

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "onnx"

# torchvision model docs (pytorch.org/vision/stable/models), IMAGENET1K_V1: num_params exactly, and GFLOPS
# (multiply-adds) printed to two decimals, so within half of the last printed digit.
TORCHVISION = {"mobilenet-v2": (3_504_872, 0.30e9), "efficientnet-b0": (5_288_548, 0.39e9)}


@pytest.mark.parametrize("name", sorted(TORCHVISION))
def test_the_presets_have_torchvisions_parameters_and_multiply_adds(name: str) -> None:
    params, macs = TORCHVISION[name]
    stats = preset_stats(name)
    assert stats.parameters == params
    assert abs(stats.multiply_adds - macs) <= 0.005e9


@pytest.mark.parametrize(("net", "build"), [("mobilenetv2-64", mobilenet_v2_layers),
                                            ("efficientnet-b0-64", efficientnet_b0_layers)])
def test_the_layer_lists_keep_what_the_measured_networks_onnx_export_keeps(net: str, build: object) -> None:
    """The measurement harness ran these networks (validation/measure/nets_vision.py) and their ONNX exports
    match the measured steps within 0.6% (README, "Tensor memory against training steps measured here"); the
    presets' layer lists at the same 64 x 64 input give the same weights and multiply-adds and keep within 1%."""
    imported = onnx_model_stats((FIXTURES / f"{net}.train.onnx").read_bytes(), name=net)
    listed = compute_model_stats(build(), input_shape=(3, 64, 64), sequence_length=None)  # type: ignore[operator]
    assert listed.parameters == imported.parameters
    assert listed.multiply_adds == imported.multiply_adds
    kept = sum(r.saved_values for r in listed.layers)
    measured_path = sum(r.saved_values for r in imported.layers)
    print(f"{net}: kept values a sample, layer list {kept:,} against ONNX {measured_path:,} "
          f"({kept / measured_path - 1:+.2%})")
    assert abs(kept / measured_path - 1) <= 0.01


def test_squeeze_and_excitation_keeps_the_gated_tensor_and_its_gate() -> None:
    layers = [
        {"type": "conv2d", "name": "c", "out_channels": 8, "kernel": 3, "padding": 1},
        {"type": "silu", "name": "a"},
        {"type": "global_avg_pool", "name": "p"},
        {"type": "dense", "name": "f", "out_features": 8},
        {"type": "sigmoid", "name": "g"},
        {"type": "mul", "name": "se", "inputs": ["a", "g"]},
    ]
    stats = compute_model_stats(layers, input_shape=(3, 4, 4), sequence_length=None)
    rows = {r.name: r for r in stats.layers}
    se = rows["se"]
    # the SiLU's output (8 x 4 x 4) is kept once, by the pool (adaptive_avg_pool2d's backward reads it), though the
    # product needs it too; the product adds the 8 gate values
    assert se.type == "multiply" and se.output_shape == (8, 4, 4) and se.saved_values == 8
    assert rows["p"].saved_values == 8 * 16 and se.multiply_adds == 0 and se.parameters == 0
    # without the pool before it (a gate from elsewhere) the product keeps the tensor itself
    alone = compute_model_stats([*layers[:2], {"type": "conv2d", "name": "g", "inputs": ["input"], "out_channels": 8,
                                               "kernel": 4},
                                 {"type": "multiply", "name": "se", "inputs": ["a", "g"]}],
                                input_shape=(3, 4, 4), sequence_length=None)
    assert next(r for r in alone.layers if r.name == "se").saved_values == 8 * 16 + 8


@pytest.mark.parametrize(("gate", "then"), [
    ({"out_channels": 4, "kernel": 4}, {"type": "flatten"}),  # [4]: not one value per channel of 8
    ({"out_channels": 8, "kernel": 3}, None),  # [8, 2, 2]: neither the tensor's shape nor per channel
    ({"out_channels": 16, "kernel": 4}, {"type": "reshape", "shape": [2, 8]}),
])
def test_a_gate_that_does_not_match_the_tensor_is_refused_with_both_shapes(gate: dict[str, object],
                                                                          then: dict[str, object] | None) -> None:
    layers = [{"type": "conv2d", "name": "c", "out_channels": 8, "kernel": 1},
              {"type": "conv2d", "name": "g", "inputs": ["input"], **gate},
              *([{**then, "name": "gv"}] if then else []),
              {"type": "multiply", "name": "m", "inputs": ["c", "gv" if then else "g"]}]
    with pytest.raises(ShapeError, match=r"multiply needs a gate of the tensor's shape \[8, 4, 4\]"):
        compute_model_stats(layers, input_shape=(3, 4, 4), sequence_length=None)


def test_users_name_them_as_they_say_them() -> None:
    assert find_preset("efficientnet").name == "efficientnet-b0"
    assert find_preset("mobilenet_v2").name == "mobilenet-v2"
    tuned = parse("fine-tune efficientnet on 20000 images")
    assert find_preset(tuned.spec["model"]["preset"]).name == "efficientnet-b0"
    assert tuned.spec["training"]["epochs"] == 3
    # a family's word is one of its models: which one is told back
    assert any(d.startswith("efficientnet: sized as efficientnet-b0, EfficientNet-B0") for d in tuned.defaults_used)
    # torchvision's own MobileNetV2 recipe on ImageNet: 300 epochs, told back
    recipe = parse("train mobilenet on imagenet")
    assert recipe.spec["training"]["epochs"] == 300
    assert "epochs=300 (torchvision's mobilenet_v2 recipe: --epochs 300)" in recipe.defaults_used


def test_a_gate_named_first_is_refused_with_the_order_to_give() -> None:
    layers = [{"type": "conv2d", "name": "c", "out_channels": 8, "kernel": 1},
              {"type": "global_avg_pool", "name": "g"},
              {"type": "multiply", "name": "m", "inputs": ["g", "c"]}]
    with pytest.raises(ShapeError, match=r"the tensor first: got \[8\] then the larger \[8, 4, 4\]; swap"):
        compute_model_stats(layers, input_shape=(3, 4, 4), sequence_length=None)


def test_a_cnn_said_generically_is_a_resnet18_told_back_and_coco_is_its_training_images() -> None:
    cifar = parse("train a cnn on cifar10")  # the CIFAR recipes' ResNet-18, at their 200 epochs and batch 128
    assert cifar.spec["model"]["preset"] == "resnet18-cifar" and cifar.defaults_used[0].startswith(
        "cnn: sized as resnet18-cifar (CIFAR recipes' layout")
    photos = parse("train a cnn on 50k 224x224 images")
    assert find_preset(photos.spec["model"]["preset"]).name == "resnet18"
    assert photos.defaults_used[0].startswith("cnn: sized as resnet18, ResNet-18")
    # "train yolov8 on coco" named two unknown presets; COCO 2017's train split is 118,287 images
    assert parse("yolox params=3.2m neurons=40m madds=4.4g on coco").spec["dataset"]["samples"] == 118_287


@pytest.mark.parametrize(("said", "preset", "parameters"), [
    ("fine-tune gemma 7b with lora", "gemma-7b", 8_537_680_896),
    ("fine-tune gemma 2b", "gemma-2b", 2_506_172_416),
    ("fine-tune qwen 2.5 32b with lora", "qwen2.5-32b", 32_763_876_352),
    ("fine-tune mistral nemo 12b with lora", "mistral-nemo-12b", 12_247_782_400),
    ("fine-tune deepseek r1 distill 8b", "llama3-8b", 8_030_261_248),  # DeepSeek's distillation into Llama 3.1 8B
    ("fine-tune deepseek r1 distill llama 8b with qlora", "llama3-8b", 8_030_261_248),
    ("fine-tune deepseek-r1-distill-qwen-32b with qlora", "qwen2.5-32b", 32_763_876_352),
])
def test_the_decoders_teams_fine_tune_today_are_named(said: str, preset: str, parameters: int) -> None:
    # each was refused as an unknown preset (2026-12-07); the counts are their layers' (the published 8.54B, 2.51B,
    # 32.8B on the Hub and 12.2B), and a DeepSeek distillation is its base model's layers
    command = parse_command(said, presets=preset_words(), gpus=("t4",))
    assert find_preset(command.spec["model"]["preset"]).name == preset
    assert preset_stats(preset).parameters == parameters
