"""Stable Diffusion presets: diffusers' text-to-image training step as a layer list (the U-Net trained, the VAE encoder
and the CLIP text encoders frozen), checked against diffusers' own modules: their parameters and multiply-adds
counted here, and training steps of narrowed configs measured with the harness (validation/diffusion_steps.json,
`python -m validation.measure.diffusion_check`). Before 2026-12-07 "fine-tune stable diffusion" was refused as a
family without a preset."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient

from catalog.types import Catalog
from tests.service_helpers import contract_check, wait_for_job
from tests.test_slack_phrases import parse
from workers.sizing.errors import ShapeError, SizingError
from workers.sizing.layers.attention import Attention
from workers.sizing.layers.build import compute_model_stats
from workers.sizing.layers.loss import Loss, with_loss
from workers.sizing.memory import step_peak, usable_memory_bytes
from workers.sizing.presets.diffusion import SD_COUNTS, TextEncoder, UNetConfig, diffusion_step_layers
from workers.sizing.presets.registry import find_preset, preset_stats
from workers.sizing.spec import Optimizer, Precision, Training
from workers.sizing.strategies.adapters import lora_parameters, transformer_shape
from workers.slack.grammar import CommandError

MEASURED = json.loads((Path(__file__).parents[1] / "validation" / "diffusion_steps.json").read_text())["records"]
GIB = 1 << 30
# Counted here with diffusers 0.42.1 and Transformers 5.18.0 on the meta device, 2026-12-07: AutoencoderKL's encoder
# and quant_conv (SD 1.x, 2.x and SDXL share it), CLIPTextModel of openai/clip-vit-large-patch14, OpenCLIP ViT-H's
# text model as SD 2's text_encoder/config.json has it (23 blocks), and OpenCLIP bigG's with its projection (SDXL's).
VAE_ENCODER, CLIP_L, OPENCLIP_H, OPENCLIP_BIGG = 34_163_664, 123_060_480, 340_387_840, 694_659_840
FROZEN = {"stable-diffusion-1.5": VAE_ENCODER + CLIP_L, "stable-diffusion-2.1": VAE_ENCODER + OPENCLIP_H,
          "stable-diffusion-2.1-base": VAE_ENCODER + OPENCLIP_H, "sdxl": VAE_ENCODER + CLIP_L + OPENCLIP_BIGG}


@pytest.mark.parametrize("name", sorted(SD_COUNTS))
def test_each_preset_trains_its_unet_and_holds_its_frozen_encoders(name: str) -> None:
    model = preset_stats(name)
    assert model.parameters == SD_COUNTS[name]  # diffusers' own UNet2DConditionModel from the checkpoint's config
    assert model.frozen_parameters == FROZEN[name]
    assert model.layers[-1].name == "unet.conv_out" and model.layers[-1].output_shape[0] == 4


def test_the_multiply_adds_are_torchs_own_flop_count() -> None:
    """torch.utils.flop_counter.FlopCounterMode over diffusers' modules at 512 x 512 (64 x 64 latents), counted here:
    the U-Net 401.64 G multiply-adds a forward pass, the VAE encoder 558.33 G."""
    rows = preset_stats("stable-diffusion-1.5").layers
    unet = sum(r.multiply_adds for r in rows if r.name.startswith(("unet.", "time.")))
    vae = sum(r.multiply_adds for r in rows if r.name.startswith("vae."))
    assert unet == pytest.approx(401.64e9, rel=1e-3) and vae == pytest.approx(558.33e9, rel=1e-3)


def _narrowed(record: dict[str, Any]) -> Any:
    config, text = record["unet_config"], record["text_encoder"]
    xl = config.get("addition_embed_type") == "text_time"
    encoder = TextEncoder(text["hidden"], text["blocks"], text["heads"], text["ffn"], penultimate=xl)
    encoders = (encoder, encoder._replace(projection=True)) if xl else (encoder,)
    depth = tuple(d if kind.startswith("CrossAttn") else 0
                  for d, kind in zip(config["transformer_layers_per_block"], config["down_block_types"], strict=True))
    unet = UNetConfig(tuple(config["block_out_channels"]), depth, tuple(config["attention_head_dim"]),
                      config["use_linear_projection"], encoders, record["image"], xl)
    layers = diffusion_step_layers(unet, vae=tuple(record["vae_channels"]), vocab=record["vocab"],
                                   time_ids=config.get("addition_time_embed_dim", 256))
    return compute_model_stats(layers, input_shape=(3, record["image"], record["image"]), sequence_length=None,
                               name=record["model"])


def test_diffusers_training_steps_are_predicted_from_their_config() -> None:
    errors = {}
    for record in MEASURED:
        model = _narrowed(record)
        assert (model.parameters, model.frozen_parameters) == (record["trainable_parameters"],
                                                               record["frozen_parameters"]), record["id"]
        training = Training(batch_size=record["batch_size"], precision=Precision(record["precision"]),
                            optimizer=Optimizer(record["optimizer"]), attention=Attention(record["attention"]),
                            loss=Loss.MSE)
        peak = step_peak(with_loss(model, Loss.MSE), training)
        predicted = peak.breakdown.total_bytes - peak.breakdown.framework_reserve_bytes
        errors[record["id"]] = predicted / record["measured"]["peak_memory_bytes"] - 1
        print(f"{record['id']:44s} {errors[record['id']]:+.1%} ({peak.phase.value}, measured "
              f"{record['measured']['peak_phase']})")
    assert len(errors) == 6
    # measured -1.2% to +2.2% but SDXL's bf16 step, -5.4% (its storage tracker's peak reads 23 MB under the
    # profiler's: autocast's casts of the frozen encoders' weights, made anew each call, which the core leaves out).
    # The bf16 and SDXL steps peak at the end of the forward pass where the walk puts the peak early in backward:
    # the same bytes within those errors, not asserted.
    assert all(abs(e) <= 0.06 for e in errors.values()), errors


def test_lora_adapts_every_attention_of_the_unet_and_no_frozen_encoder() -> None:
    """diffusers' train_text_to_image_lora.py (rank 4 on to_q, to_k, to_v, to_out of every attention, self and cross)
    on SD 1.5 trains 797,184 weights: its README's "only 3 MB" of LoRA weights (fp32). A decoder block's
    cross-attention is adapted too (PEFT's q and v match it): FLAN-T5 base at r=8 on q and v trains
    8 x 2 x 1,536 x (12 + 12 + 12) attentions = 884,736."""
    sd = transformer_shape(preset_stats("stable-diffusion-1.5"))
    assert sd is not None and lora_parameters(sd, rank=4, targets=("q", "k", "v", "o")) == 797_184
    t5 = transformer_shape(preset_stats("flan-t5-base"))
    assert t5 is not None and lora_parameters(t5, rank=8, targets=("q", "v")) == 8 * 2 * 1536 * 36


def _peak(name: str, **fields: Any) -> float:
    training = Training(**{"batch_size": 1, "precision": Precision.FP16_MIXED, "optimizer": Optimizer.ADAMW,
                           "loss": Loss.MSE, **fields})
    peak = step_peak(with_loss(preset_stats(name), Loss.MSE), training)
    return peak.breakdown.total_bytes / GIB


def test_the_readmes_hardware_notes_hold() -> None:
    """diffusers' examples/text_to_image/README.md: with gradient checkpointing and mixed precision the full fine-tune
    "should be possible" on "a single 24GB GPU" (batch 1, --use_ema: an fp32 copy of the U-Net, training.ema): the
    peak, torch's foreach AdamW update, is at 24 GB within the frozen encoders' fp32 count (0.29 GiB over the
    16-bit copies the script holds); "for higher batch_size and faster training" (the script's batch 16, no
    checkpointing) "GPUs with >30GB"; LoRA runs "in consumer GPUs like T4 or V100"."""
    from catalog.loader import load_catalog
    from workers.schemas.specs import load_job
    from workers.sizing.estimate import estimate_on_gpus

    with_ema = _peak("stable-diffusion-1.5", recompute=True, ema=True)
    model, training = with_loss(preset_stats("sd15"), Loss.MSE), Training(batch_size=1, ema=True)
    grown = step_peak(model, training).breakdown.optimizer_state_bytes - step_peak(
        model, Training(batch_size=1)).breakdown.optimizer_state_bytes
    assert grown == SD_COUNTS["stable-diffusion-1.5"] * 4  # one fp32 copy of the U-Net
    assert 24e9 / GIB - 1 < with_ema < 24e9 / GIB + FROZEN["stable-diffusion-1.5"] * 2 / GIB
    assert _peak("stable-diffusion-1.5", batch_size=16) > 30
    lora = {"kind": "lora", "rank": 4, "targets": ["q", "k", "v", "o"]}
    _, job = load_job({"model": {"preset": "sd15"}, "training": {"batch_size": 1, "precision": "fp16-mixed",
                                                                "parallelism": {"adapter": lora}}})
    (t4,) = estimate_on_gpus(job, load_catalog().gpus, slugs=["t4"]).per_gpu
    assert t4.fits and t4.gpu_memory_bytes < 8 * GIB


def test_the_preset_computes_the_mse_on_the_noise_unless_the_spec_names_a_loss() -> None:
    from workers.schemas.spec import JobSpecSchema

    spec = {"model": {"preset": "sd15"}, "training": {"batch_size": 4}}
    assert JobSpecSchema().load(spec)["training"]["loss"] == "mse"
    named = {**spec, "training": {"batch_size": 4, "loss": "none"}}
    assert JobSpecSchema().load(named)["training"]["loss"] == "none"
    assert JobSpecSchema().load({"model": {"preset": "resnet50"}, "training": {"batch_size": 4}})["training"][
        "loss"] == "cross_entropy"


def test_a_larger_image_costs_more_and_a_side_that_is_not_a_multiple_of_8_is_refused() -> None:
    small, large = preset_stats("stable-diffusion-1.5"), preset_stats("stable-diffusion-1.5", input_shape=[3, 768, 768])
    assert large.multiply_adds > 2 * small.multiply_adds and large.parameters == small.parameters
    with pytest.raises(ShapeError) as raised:
        preset_stats("stable-diffusion-1.5", input_shape=[3, 500, 500])
    assert raised.value.field == "model.input_shape" and "sides a multiple of 64" in raised.value.reason


@pytest.mark.parametrize(("layers", "field", "words"), [
    ([{"type": "groupnorm", "groups": 5}], "model.layers[0]", "5 groups must divide the 64 channels"),
    ([{"type": "model_input", "shape": [0]}], "model.layers[0].shape[0]", "at least 1"),
    ([{"type": "to_sequence", "name": "s"}, {"type": "to_feature_map", "inputs": ["s", "s"]}],
     "model.layers[1]", "the second input names a feature map"),
    ([{"type": "to_sequence", "name": "s"}, {"type": "maxpool2d", "kernel": 2, "inputs": ["input"], "name": "p"},
      {"type": "to_feature_map", "inputs": ["s", "p"]}], "model.layers[2]", "does not fill the 4 x 4 map"),
    ([{"type": "chunk", "chunks": 3}], "model.layers[0]", "equal pieces"),
    ([{"type": "conv2d", "out_channels": 8, "kernel": 1, "name": "c"}, {"type": "add", "inputs": ["input", "c"]}],
     "model.layers[1]", "one value per channel"),
])
def test_the_new_layers_refuse_what_does_not_fit_by_field(layers: list[dict[str, Any]], field: str,
                                                           words: str) -> None:
    with pytest.raises(SizingError) as raised:
        compute_model_stats(layers, input_shape=(64, 8, 8), sequence_length=None)
    assert raised.value.field == field and words in raised.value.reason


def test_a_per_channel_add_and_a_second_input_build() -> None:
    layers = [{"type": "conv2d", "out_channels": 64, "kernel": 3, "padding": 1, "name": "c"},
              {"type": "model_input", "shape": [32], "name": "t"}, {"type": "dense", "out_features": 64, "name": "p"},
              {"type": "add", "inputs": ["c", "p"]}, {"type": "groupnorm"}]
    model = compute_model_stats(layers, input_shape=(64, 8, 8), sequence_length=None)
    assert model.layers[3].output_shape == (64, 8, 8) and model.parameters == 64 * 64 * 9 + 64 + 32 * 64 + 64 + 128


def test_slack_sizes_a_stable_diffusion_fine_tune_as_diffusers_readme_launches_it() -> None:
    # The READMEs' commands, not the scripts' argparse defaults: "fine-tune sdxl with lora on 1000 images" was sized
    # at the script's batch 16 and 100 epochs (96.5 GiB, an H100 first, 1.5 h) where README_sdxl.md runs batch 1 for
    # 2 epochs; the full fine-tune at batch 16 without checkpointing where README.md runs batch 1 x 4, checkpointed.
    command = parse("fine-tune stable diffusion 1.5 on 10k images")
    training = command.spec["training"]
    assert command.spec["model"] == {"preset": "stable-diffusion-1.5"} and command.spec["dataset"]["samples"] == 10_000
    assert (training["batch_size"], training["update_interval"], training["epochs"], training["precision"]) == (
        1, 4, 100, "fp16-mixed")
    assert training["recompute"] is True and training["ema"] is True  # --gradient_checkpointing --use_ema
    assert training["optimizer"] == "adamw" and training["gradient_clipping"] == "global"
    assert "Trainer" not in " ".join(command.defaults_used)  # transformers' Trainer's epochs are not diffusers'
    lora = parse("sdxl lora on 1000 images 10 epochs").spec["training"]
    assert lora["parallelism"]["adapter"] == {"kind": "lora", "rank": 4, "targets": ["q", "k", "v", "o"]}
    assert lora["epochs"] == 10 and lora["batch_size"] == 1 and "recompute" not in lora and "ema" not in lora
    for said in ("fine-tune sdxl with lora on 1000 images", "sd-xl lora on 500 images"):  # an alias is the model
        assert parse(said).spec["training"]["epochs"] == 2  # README_sdxl.md's
    assert parse("sd 1.5 lora on 833 images").spec["training"]["epochs"] == 100  # README.md's LoRA command's
    full_xl = parse("fine-tune sdxl on 1000 images").spec["training"]
    assert (full_xl["batch_size"], full_xl["update_interval"], full_xl["optimizer"]) == (1, 4, "adamw_8bit")
    assert parse("fine-tune sd-xl on 500 images").spec["training"]["optimizer"] == "adamw_8bit"
    assert full_xl["recompute"] is True and "ema" not in full_xl  # --use_8bit_adam, no --use_ema
    own = parse("fine-tune sd 1.5 batch 8 accum 2 on 1000 images").spec["training"]  # the words' own accumulation
    assert (own["batch_size"], own["update_interval"]) == (8, 2) and "recompute" not in own and "ema" not in own


def test_the_readme_runs_fit_the_cards_the_readmes_name(shipped: Catalog) -> None:
    from workers.schemas.specs import load_job
    from workers.sizing.estimate import estimate_on_gpus

    def peak(text: str, gpu: str) -> float:
        _, job = load_job(parse(text).spec)
        (row,) = estimate_on_gpus(job, shipped.gpus, slugs=[gpu]).per_gpu
        return row.gpu_memory_bytes / GIB

    xl_lora = peak("fine-tune sdxl with lora on 1000 images", "t4")
    full = peak("fine-tune stable diffusion 1.5 on 10k images", "a10g")
    print(f"\nsdxl lora {xl_lora:.1f} GiB on a t4, sd 1.5 full {full:.1f} GiB")
    assert xl_lora < usable_memory_bytes(next(g for g in shipped.gpus if g.slug == "t4")) / GIB
    assert full < 24e9 / GIB  # README.md: "a single 24GB GPU" with gradient checkpointing and mixed precision


@pytest.mark.parametrize(("text", "twin"), [
    ("train stable diffusion unet on 1m images", "stable-diffusion-unet"),  # was "one model a command"
    ("train the unet of stable diffusion on 1m images", "stable-diffusion-unet"),
    ("unet for sdxl on 1m images", "sdxl-unet"), ("train sdxl unet on 1m images", "sdxl-unet")])
def test_slack_reads_a_stable_diffusion_unet_as_its_twin_with_the_scripts_recipe(text: str, twin: str) -> None:
    command = parse(text)
    training, told = command.spec["training"], " ".join(command.defaults_used)
    assert command.spec["model"] == {"preset": twin}
    assert find_preset(twin).input_shape[0] == 4  # the U-Net alone, over latents: no VAE, no text encoder
    # diffusers' script's recipe, not one pass in bf16 ("sdxl unet" was 1 epoch; "sdxl" 100)
    assert (training["batch_size"], training["epochs"], training["precision"]) == (16, 100, "fp16-mixed")
    assert training["optimizer"] == "adamw" and f"say `{twin.removesuffix('-unet')}` to size the VAE" in told
    with pytest.raises(CommandError, match="one model a command"):  # two models are still two
        parse("compare unet and resnet50")


def test_the_api_recommends_for_a_lora_fine_tune_of_sdxl(embedded_client: FlaskClient) -> None:
    spec = {"model": {"preset": "sdxl"}, "dataset": {"samples": 2000},
            "training": {"batch_size": 4, "epochs": 10, "precision": "bf16-mixed", "recompute": True,
                         "parallelism": {"adapter": {"kind": "lora", "rank": 4, "targets": ["q", "k", "v", "o"]}}}}
    answer = embedded_client.post("/v1/recommendations", json=spec)
    assert answer.status_code == 202, answer.get_json()
    job = wait_for_job(embedded_client, answer.headers["Location"], timeout_s=60)
    assert job["status"] == "done", job
    assert contract_check().contract_result(job["result"]) == []
    memory = job["result"]["requirements"]["gpu_memory_bytes"]
    assert 6 * GIB < memory < 40 * GIB and job["result"]["options"]


THROUGHPUT = json.loads((Path(__file__).parents[1] / "validation" / "diffusion_throughput.json").read_text())["records"]


def test_the_unet_time_against_public_stable_diffusion_runs() -> None:
    """MLPerf Training's SD 2 base runs (NeMo's compiled U-Net) and MosaicML's (Composer, eager), neither diffusers'
    eager script (validation/diffusion_throughput.json): only what must hold is asserted (within 2x); the errors are
    printed and reported in the README: -39% to +13% against MLPerf, +51% against MosaicML's A100s."""
    from catalog.loader import load_catalog
    from workers.schemas.specs import load_job
    from workers.sizing.estimate import estimate_on_gpus

    gpus = load_catalog().gpus
    for record in THROUGHPUT:
        training = {k: record[k] for k in ("batch_size", "precision", "optimizer", "optimizer_implementation",
                                           "update_interval") if k in record}
        _, job = load_job({"model": {"preset": record["model"]}, "training": training})
        row = estimate_on_gpus(job, gpus, slugs=[record["gpu"]], gpu_count=record["gpu_count"]).per_gpu[0]
        ratio = row.throughput_samples_per_s / record["measured"]["throughput_samples_per_s"]
        print(f"{record['id']:28s} {row.throughput_samples_per_s:8.1f}/s against "
              f"{record['measured']['throughput_samples_per_s']:8.1f}/s: {ratio - 1:+.1%}")
        assert 0.5 < ratio < 2, record["id"]

