"""CLIP presets (workers/sizing/presets/clip.py): both towers of OpenAI's checkpoints to the weight, the image tower
the same ViT the torchvision preset is, open_clip's recipe in Slack, and one public throughput figure beside the
prediction (printed: NeMo's CLIP g/14 on DGX A100 and H100). Before 2026-12-07 "train clip" said the family had no
preset."""

from __future__ import annotations

import pytest

from catalog.loader import load_catalog
from tests.test_slack_phrases import parse
from workers.schemas.specs import load_job
from workers.sizing.estimate import estimate_on_gpus
from workers.sizing.presets import clip
from workers.sizing.presets.registry import find_preset, preset_stats
from workers.slack.grammar import CommandError

# NVIDIA NeMo Framework user guide, CLIP performance (docs.nvidia.com/nemo-framework/user-guide/latest/multimodalmodels/
# visionlanguagefoundation/clip/perf.html, stored copy read 2026-12-07): CLIP g/14 on one DGX A100 80GB node 559
# samples/s, on one DGX H100 node 935 (8 GPUs each; its micro-batch and checkpointing are not in the stored excerpt)
NEMO_G14 = {"a100-80gb": 559 / 8, "h100-sxm": 935 / 8}


@pytest.mark.parametrize("name", sorted(clip.CLIP_CONFIGS))
def test_each_clip_has_openais_parameters_less_the_temperature(name: str) -> None:
    assert preset_stats(name).parameters == find_preset(name).published.parameters - 1


def test_the_image_tower_is_the_vit_the_torchvision_preset_is() -> None:
    towers = preset_stats("clip-vit-b32").layers
    image = sum(row.multiply_adds for row in towers if row.name.startswith("visual."))
    vit = sum(row.multiply_adds for row in preset_stats("vit-b32").layers if row.name != "head")
    assert image == pytest.approx(vit, rel=0.01)  # ~4.4 GMACs at 224 x 224 either way
    text = sum(row.multiply_adds for row in towers if row.name.startswith("text."))
    assert 2.8e9 < text < 3.1e9  # 77 tokens through 12 blocks of 512 and the projection


def test_slack_sizes_clip_as_open_clip_trains_it() -> None:
    command = parse("train clip on 1m image-text pairs")  # was "unknown preset 'clip'; no preset of that family"
    training = command.spec["training"]
    assert find_preset(command.spec["model"]["preset"]).name == "clip-vit-b32"
    assert (training["batch_size"], training["epochs"], training["precision"]) == (64, 32, "bf16-mixed")
    assert command.spec["dataset"]["samples"] == 1_000_000
    assert any(d.startswith("clip: sized as clip-vit-b32") for d in command.defaults_used)
    assert parse("fine-tune clip vit-b/16 on 50k pairs").spec["model"]["preset"] == "clip-vit-b16"  # one model
    with pytest.raises(CommandError, match="one model a command"):
        parse("compare clip and resnet50")


def test_clip_g14_throughput_beside_nemos_published_figures(capsys: pytest.CaptureFixture[str]) -> None:
    # open_clip's ViT-g-14.json: width 1,408, 40 blocks, heads 16, mlp_ratio 4.3637 (6,144); text 1,024 x 24
    layers = clip.clip_layers(clip.ClipConfig(14, 1408, 40, 16, 1024, 24, 16, 1024, 0, mlp=6144))
    _, job = load_job({"model": {"layers": layers, "input_shape": [3, 224, 224]},
                       "training": {"batch_size": 64, "precision": "bf16-mixed", "optimizer": "adamw", "loss": "mse"},
                       "dataset": {"samples": 1_000_000}})
    assert 1.36e9 < job.model.parameters < 1.37e9  # open_clip lists ViT-g-14 at 1,366.68M
    rows = estimate_on_gpus(job, load_catalog().gpus, slugs=list(NEMO_G14)).per_gpu
    with capsys.disabled():
        for row in rows:
            error = row.throughput_samples_per_s / NEMO_G14[row.gpu] - 1
            print(f"\n  CLIP g/14 {row.gpu}: {row.throughput_samples_per_s:.1f} samples/s a GPU predicted at batch 64, "
                  f"NeMo {NEMO_G14[row.gpu]:.1f}: {error:+.0%}")
            assert 0.5 < 1 + error < 2.5  # the same order: a missing pass or a wrong rate would be off by far more
