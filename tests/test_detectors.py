"""YOLOv8, YOLO11 and YOLOv5 presets (workers/sizing/presets/detect.py): Ultralytics' own parameter counts, the batch
sizes YOLOv5's README gives for a 16 GB V100, its training times (printed, with the signed error), Ultralytics'
loader cost (validation/mosaic_pipeline.json) and how a Slack user names them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from catalog.cpu_scores import CPU_SCORES
from catalog.gpus import gpus_by_slug
from tests.test_slack_phrases import parse
from workers.schemas.specs import load_job
from workers.sizing.errors import ShapeError
from workers.sizing.estimate import estimate_requirements
from workers.sizing.image_input import MOSAIC_PIPELINE_MS, assumed_loader
from workers.sizing.largest_batch import largest_batch
from workers.sizing.layers.build import compute_model_stats
from workers.sizing.machine import REFERENCE_CPU_SINGLE_THREAD_SCORE
from workers.sizing.presets.detect import SCALES, V5_SCALES, V11_SCALES
from workers.sizing.presets.registry import find_preset, preset_stats

ROOT = Path(__file__).resolve().parents[1]
KNOWN = gpus_by_slug()
COCO = 118_287
# ultralytics/yolov5 README.md, Training: "Training times for YOLOv5n/s/m/l/x are 1/2/4/6/8 days on a V100 GPU ...
# Batch sizes shown for V100-16GB" (--batch-size 128, 64, 40, 24, 16; the COCO commands' 300 epochs; public copies
# read 2026-12-07). Its train.py trains with AMP and SGD (momentum 0.937), keeps an EMA and validates every epoch.
README = {"n": (128, 1.0), "s": (64, 2.0), "m": (40, 4.0), "l": (24, 6.0), "x": (16, 8.0)}


def _job(name: str, batch: int, **training: Any) -> Any:
    return load_job({"model": {"preset": name},
                     "training": {"batch_size": batch, "precision": "fp16-mixed", "optimizer": "momentum",
                                  "epochs": 300, "ema": True, "eval_every_epochs": 1, **training},
                     "dataset": {"samples": COCO}})[1]


@pytest.mark.parametrize("scale", list(SCALES))
def test_yolov8_has_the_yaml_summarys_trained_parameters_and_its_multiply_adds(scale: str) -> None:
    stats, published = preset_stats(f"yolov8{scale}"), find_preset(f"yolov8{scale}").published
    # the summary's "gradients" are its parameters less the DFL's 16 fixed weights, which the list leaves out
    assert stats.parameters == published.parameters - 16
    # the summary's GFLOPs count batchnorm before fusing; the list's convolutions alone are within 2% below
    assert 0.97 * published.multiply_adds < stats.multiply_adds <= published.multiply_adds


@pytest.mark.parametrize("scale", list(V11_SCALES))
def test_yolo11_has_the_yaml_summarys_trained_parameters_and_its_multiply_adds(scale: str) -> None:
    stats, published = preset_stats(f"yolo11{scale}"), find_preset(f"yolo11{scale}").published
    assert stats.parameters == published.parameters - 16  # exact: C3k2, C2PSA and the depthwise class branch
    assert 0.98 * published.multiply_adds < stats.multiply_adds <= published.multiply_adds
    names = [layer.name for layer in stats.layers]
    # parse_model gives every C3k2 of the m, l and x scales C3k blocks; n and s keep them in the deep stages alone
    assert any(n.startswith("b2.m0.m0") for n in names) == (scale in "mlx")
    assert any(n.startswith("b8.m0.m0") for n in names)
    cores = [layer for layer in stats.layers if layer.name.endswith(".attn.core")]  # C2PSA over the 20 x 20 map
    assert len(cores) == (2 if scale in "lx" else 1) and cores[0].output_shape[0] == 400


@pytest.mark.parametrize("scale", list(V5_SCALES))
def test_yolov5_has_its_logged_parameters_and_the_readmes_flops(scale: str) -> None:
    stats, published = preset_stats(f"yolov5{scale}"), find_preset(f"yolov5{scale}").published
    exact = scale in ("n", "s", "l")  # train.py's summary lines; m and x from the README's 0.1M-rounded table
    assert stats.parameters == published.parameters if exact else abs(stats.parameters - published.parameters) < 5e4
    # the README's FLOPs (convolutions with batchnorm fused, to 0.1 GFLOPs; thop also counts pooling and the adds)
    readme = V5_SCALES[scale][3]
    assert abs(stats.multiply_adds * 2 / 1e9 - readme) < max(0.1, 0.003 * readme)


def test_the_predictions_cover_every_anchor_and_the_input_must_be_a_multiple_of_32() -> None:
    rows = preset_stats("yolov8n").layers
    assert rows[-1].output_shape == (144, 8400)  # 64 box bins + 80 classes at 80^2 + 40^2 + 20^2 anchors
    assert preset_stats("yolov5s").layers[-1].output_shape == (255, 8400)  # 3 anchors x 85 at each position
    assert preset_stats("yolov8n", input_shape=[3, 1280, 1280]).layers[-1].output_shape == (144, 33600)
    with pytest.raises(ShapeError) as caught:
        preset_stats("yolov8s", input_shape=[3, 650, 650])
    assert "multiple of 32" in caught.value.reason


def test_the_attention_core_keeps_its_probabilities_and_refuses_a_width_its_heads_do_not_make() -> None:
    core = {"type": "attention_core", "heads": 2, "key_dim": 32, "head_dim": 64}
    stats = compute_model_stats([{"type": "to_sequence"}, core], input_shape=(256, 20, 20), sequence_length=None)
    row = stats.layers[-1]
    assert row.output_shape == (400, 128) and row.multiply_adds == 2 * 400 * 400 * (32 + 64)
    assert row.saved_values == 400 * 256 + 2 * 400 * 400  # q, k and v (its input) and the softmax's probabilities
    with pytest.raises(ShapeError) as caught:
        compute_model_stats([{"type": "to_sequence"}, core], input_shape=(200, 20, 20), sequence_length=None)
    assert caught.value.field == "model.layers[1]" and "take 256 features a position" in caught.value.reason


@pytest.mark.parametrize("scale", list(README))
def test_the_readmes_v100_batch_is_about_the_largest_that_fits_a_16_gb_v100(scale: str) -> None:
    batch, _ = README[scale]
    job = _job(f"yolov5{scale}", batch)
    largest = largest_batch(job, list(KNOWN.values()), slug="v100-16gb")
    peak = estimate_requirements(job, gpus=(KNOWN["v100-16gb"],), known_gpus=KNOWN).gpu_memory_bytes
    print(f"yolov5{scale}: README batch {batch}, largest predicted {largest}, peak {peak / 2**30:.1f} GiB")
    # "Use the largest --batch-size possible ... Batch sizes shown for V100-16GB": within a tenth of what fits (with
    # the core's headroom), and the README's batch under the card's whole 16 GiB
    assert 0.9 * batch <= largest <= 1.15 * batch and peak < 16 * 2**30


def test_the_readmes_training_days_are_printed_and_the_step_alone_is_faster() -> None:
    errors = {}
    for scale, (batch, days) in README.items():
        req = estimate_requirements(_job(f"yolov5{scale}", batch), gpus=(KNOWN["v100-16gb"],), known_gpus=KNOWN)
        errors[scale] = req.per_gpu[0].training_hours / 24 / days - 1
    print({scale: f"{error:+.0%}" for scale, error in errors.items()})
    # The README's days include the loader, the validation's NMS and the loss's Python target building, which the
    # core's run does not count (README "Object detectors"): -46% to -23%, largest for the smaller models.
    assert all(-0.6 < e < 0 for e in errors.values())
    assert errors["x"] > errors["n"]


def test_the_mosaic_loader_figure_is_the_measurement_on_the_reference_scale() -> None:
    measured = json.loads((ROOT / "validation" / "mosaic_pipeline.json").read_text())
    cases = measured["cases"]
    assert 0 < cases["decode"]["ms_per_sample"] < cases["mosaic"]["ms_per_sample"]  # four decodes are part of it
    assert abs(measured["corpus"]["mean_bytes"] / measured["corpus"]["coco_mean_bytes"] - 1) < 0.25
    zen3 = next(s for s in CPU_SCORES if "7R13" in s.cpu_model)  # the measuring core's generation
    scaled = cases["mosaic"]["ms_per_sample"] * zen3.single_thread_score / REFERENCE_CPU_SINGLE_THREAD_SCORE
    assert abs(MOSAIC_PIPELINE_MS / scaled - 1) < 0.15
    assert assumed_loader(preset_stats("yolov8m")).ms == MOSAIC_PIPELINE_MS
    assert assumed_loader(preset_stats("resnet50")).ms < MOSAIC_PIPELINE_MS / 4


def test_a_yolo_estimate_names_the_mosaic_loaders_cores() -> None:
    req = estimate_requirements(_job("yolov8n", 16), gpus=(KNOWN["a100-80gb"],), known_gpus=KNOWN)
    said = next(w.message for w in req.warnings if w.code == "image-preprocess-not-given")
    rate = 16 * 1000.0 / req.per_gpu[0].iteration_ms
    assert "Ultralytics' YOLO loader" in said and f"{rate * MOSAIC_PIPELINE_MS / 1000:.1f} such cores" in said


@pytest.mark.parametrize(("text", "preset", "epochs"), [("train yolov8 on coco", "yolov8n", 100),
                                                        ("train yolov5 on coco", "yolov5s", 300),
                                                        ("train yolov8x on coco", "yolov8x", 100),
                                                        ("train yolo11 on coco", "yolo11n", 100),  # was no preset
                                                        ("train yolov11m on coco", "yolo11m", 100)])
def test_slack_sizes_yolo_as_ultralytics_trains_it(text: str, preset: str, epochs: int) -> None:
    command = parse(text)  # was "unknown preset 'yolov8'; no preset of that family"
    spec = command.spec
    assert find_preset(spec["model"]["preset"]).name == preset and spec["dataset"]["samples"] == COCO
    assert spec["training"]["epochs"] == epochs and spec["training"]["batch_size"] == 16
    assert spec["training"]["precision"] == "fp16-mixed"  # Ultralytics' AMP
    generic = text.split()[1] in ("yolov8", "yolov5", "yolo11")
    assert any(d.startswith(f"{text.split()[1]}: sized as {preset}") for d in command.defaults_used) == generic


def test_slack_takes_ultralytics_imgsz_as_a_square_input() -> None:
    spec = parse("train yolov8l on coco imgsz=1280").spec  # was "unknown word 'imgsz'"
    assert spec["model"]["input_shape"] == [3, 1280, 1280]
    assert parse("train yolov8l on coco input=960").spec["model"]["input_shape"] == [3, 960, 960]
    assert parse("train yolov8l on coco input=3x640x480").spec["model"]["input_shape"] == [3, 640, 480]


@pytest.mark.parametrize("text", ["fine-tune yolov8m on 5k images", "train yolov5s on 20k images"])
def test_yolo_on_other_data_takes_ultralytics_default_epochs(text: str) -> None:
    command = parse(text)  # "fine-tune": 3 epochs "as transformers' Trainer"; "train": one pass
    assert command.spec["training"]["epochs"] == 100
    assert any(d.startswith("epochs=100 (Ultralytics' default") for d in command.defaults_used)


def test_slack_counts_ultralytics_loader_unless_a_loader_cost_is_said() -> None:
    command = parse("train yolov8 on coco")  # ranked a T4 on 2 vCPUs first, which the mosaic loader cannot feed
    assert command.spec["dataset"]["preprocess_ms_per_sample"] == MOSAIC_PIPELINE_MS
    assert any(d.startswith(f"loader={MOSAIC_PIPELINE_MS} ms a sample") for d in command.defaults_used)
    cached = parse("train yolov8 on coco loader=0")  # images cached decoded (Ultralytics' cache=ram) or DALI
    assert cached.spec["dataset"]["preprocess_ms_per_sample"] == 0
    assert not any(d.startswith("loader=") for d in cached.defaults_used)
    assert "preprocess_ms_per_sample" not in parse("train resnet50 on imagenet").spec["dataset"]


@pytest.mark.parametrize(("text", "optimizer"), [("train yolov8 on coco", "momentum"),  # 1,849 x 100 iterations
                                                 ("fine-tune yolov8s on 2000 images", "adamw"),  # 32 x 100: AdamW
                                                 ("train yolov5s on 5k images", "momentum"),  # train.py's SGD
                                                 ("train yolov8n on coco with adam", "adam")])  # said: kept
def test_slack_takes_ultralytics_optimizer_and_ema(text: str, optimizer: str) -> None:
    training = parse(text).spec["training"]  # was the schema's Adam, without the EMA both trainers keep
    assert training["optimizer"] == optimizer and training["ema"] is True
    assert training["eval_every_epochs"] == 1  # Ultralytics validates after every epoch (val=True)
