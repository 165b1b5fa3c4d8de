"""bitsandbytes' AdamW8bit (`training.optimizer: adamw_8bit`): Adam's two states in 1 byte each, no foreach copy, one
kernel per tensor; what a full fine-tune of a 1-2B model on one 24 GB card is often run with (the HF Trainer's
optim "adamw_bnb_8bit", Unsloth's "adamw_8bit").

The rows are written from bitsandbytes' source (Optimizer8bit.init_state: uint8 state1 and state2; one kernel per
tensor in its Python loop), not measured: bitsandbytes' CUDA kernels do not run on this machine's CPU build.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from catalog.gpus import load_gpus
from service.cli import main
from tests.test_slack_phrases import parse
from workers.schemas.specs import load_job
from workers.sizing.checkpoint import checkpoint_bytes
from workers.sizing.efficiency import KERNEL_LAUNCH_MS
from workers.sizing.estimate import estimate_on_gpus
from workers.sizing.memory import step_peak
from workers.sizing.optimizer_time import optimizer_step_ms, tensor_count
from workers.sizing.spec import Framework, Optimizer, Precision
from workers.sizing.step_trace import Trace, persistent_tensors
from workers.sizing.strategies.parallelism import Layout, ParameterCounts, model_state_bytes
from workers.sizing.strategies.types import DataParallel, Offload
from workers.slack.grammar import CommandError

GPUS = load_gpus()


def _job(optimizer: str, preset: str = "mlp-mnist", **training: Any) -> Any:
    _, job = load_job({"model": {"preset": preset}, "dataset": {"samples": 60000},
                       "training": {"batch_size": 64, "optimizer": optimizer, **training}})
    return job


def test_the_8bit_states_are_a_quarter_of_adamws_and_no_update_copy() -> None:
    adamw, eight = _job("adamw"), _job("adamw_8bit")
    trainable = adamw.model.parameters
    assert eight.training.optimizer is Optimizer.ADAMW_8BIT
    full = step_peak(adamw.model, adamw.training)
    small = step_peak(eight.model, eight.training)
    assert full.breakdown.optimizer_state_bytes == 12 * trainable  # two fp32 moments and foreach's copy
    # two uint8 states held through the step; the MLP's peak moves to backward, where they are already made
    assert small.breakdown.optimizer_state_bytes == 2 * trainable
    tensors = {name: peak.breakdown.total_bytes - peak.breakdown.framework_reserve_bytes
               for name, peak in (("adamw", full), ("8bit", small))}
    assert tensors["8bit"] < tensors["adamw"] - 8 * trainable
    # said fused or foreach, bitsandbytes' update makes no copy: the same peak
    fused = _job("adamw_8bit", optimizer_implementation="fused")
    assert step_peak(fused.model, fused.training).breakdown.total_bytes == small.breakdown.total_bytes


def test_the_allocator_sees_two_one_byte_state_tensors_a_weight() -> None:
    job = _job("adamw_8bit")
    trace = Trace()
    shards = type("Shards", (), {"parameters": 1, "optimizer_state": 1})()
    persistent_tensors(trace, job.model, job.training, shards, buckets=0)
    rows = [row.parameters for row in job.model.layers if row.parameters]
    assert sorted(trace.state) == sorted([p for p in rows for _ in range(2)])  # 1 byte a weight, two of them
    adamw = _job("adamw")
    trace = Trace()
    persistent_tensors(trace, adamw.model, adamw.training, shards, buckets=0)
    assert sorted(trace.state) == sorted([4 * p for p in rows for _ in range(2)])


def test_the_update_reads_16_bytes_a_weight_one_kernel_per_tensor() -> None:
    job = _job("adamw_8bit", preset="gpt2")
    ms_per_byte = 1e-9
    traffic, idle = optimizer_step_ms(job.model, job.training, precision=Precision.FP32, ms_per_byte=ms_per_byte)
    assert traffic == pytest.approx(job.model.parameters * 16 * ms_per_byte)
    launches = tensor_count(job.model) * KERNEL_LAUNCH_MS[Framework.PYTORCH]
    assert idle == pytest.approx(max(0.0, launches - traffic))
    adamw = _job("adamw", preset="gpt2", optimizer_implementation="fused")
    fused_traffic, _ = optimizer_step_ms(adamw.model, adamw.training, precision=Precision.FP32, ms_per_byte=ms_per_byte)
    assert traffic == pytest.approx(fused_traffic * 16 / 28)


def test_a_checkpoint_keeps_the_fp32_weights_and_two_bytes_of_state() -> None:
    assert checkpoint_bytes(parameters=1_000_000, optimizer="adamw_8bit") == 6_000_000
    assert checkpoint_bytes(parameters=1_000_000, optimizer="adamw") == 12_000_000


def test_the_cli_sizes_a_fine_tunes_state_at_a_quarter_of_adamws(
        capsys: pytest.CaptureFixture[str]) -> None:
    fits = {}
    for optimizer in ("adamw", "adamw_8bit"):
        assert main(["estimate", "qwen2.5-0.5b", "--pretrained", "--seq", "1024", "--batch", "4", "--precision",
                     "bf16-mixed", "--optimizer", optimizer, "--optimizer-impl", "fused", "--gpu", "t4", "--json"]) == 0
        result = json.loads(capsys.readouterr().out)
        fits[optimizer] = result["gpu_memory_breakdown"]["optimizer_state"]
    assert fits["adamw_8bit"] * 4 == pytest.approx(fits["adamw"], rel=0.01)


@pytest.mark.parametrize("text", ["fine-tune qwen2.5 1.5b with 8-bit adam",
                                  "fine-tune qwen2.5 1.5b with adamw 8bit",
                                  "fine-tune qwen2.5 1.5b with paged adamw 8bit",
                                  "fine-tune qwen2.5 1.5b adamw_bnb_8bit",
                                  "fine-tune qwen2.5 1.5b with an 8 bit optimizer",
                                  "fine-tune qwen2.5 1.5b adamw8bit"])
def test_slack_reads_the_8bit_optimizer_as_people_say_it(text: str) -> None:
    training = parse(text).spec["training"]
    assert training["optimizer"] == "adamw_8bit"
    assert training["gradient_clipping"] == "global"  # the Trainer clips whichever optimizer is said (it did not)


def test_an_8bit_base_is_still_refused_with_what_to_ask_instead() -> None:
    with pytest.raises(CommandError, match=r"LLM\.int8"):
        parse("fine-tune llama 7b in 8-bit")


def _estimate(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    assert main(["estimate", *args, "--json"]) == 0
    result: dict[str, Any] = json.loads(capsys.readouterr().out)
    return result


def test_a_full_fine_tune_whose_adam_states_weigh_is_told_what_8bit_states_need(
        capsys: pytest.CaptureFixture[str]) -> None:
    job = ["qwen2.5-1.5b", "--pretrained", "--seq", "1024", "--batch", "4", "--precision", "bf16-mixed",
           "--optimizer-impl", "fused"]
    given = _estimate(capsys, *job)
    told = [w["message"] for w in given["warnings"] if w["code"] == "optimizer-8bit"]
    eight = _estimate(capsys, *job, "--optimizer", "adamw_8bit")
    assert len(told) == 1 and f"{eight['gpu_memory_bytes'] / 2**30:.1f} GiB per GPU" in told[0]
    assert eight["gpu_memory_bytes"] < 0.9 * given["gpu_memory_bytes"]
    assert not [w for w in eight["warnings"] if w["code"] == "optimizer-8bit"]  # said already
    # an adapter's few trained weights, and a job that every card holds either way, are not told
    for quiet in (["qwen2.5-1.5b", "--pretrained", "--seq", "1024", "--batch", "4", "--adapter", "lora"],
                  ["examples/bert-finetune.json"]):
        assert not [w for w in _estimate(capsys, *quiet)["warnings"] if w["code"] == "optimizer-8bit"]
    print(f"\nqwen2.5-1.5b full fine-tune: {given['gpu_memory_bytes'] / 2**30:.1f} GiB with AdamW, "
          f"{eight['gpu_memory_bytes'] / 2**30:.1f} GiB with 8-bit states")


def test_an_offloaded_optimizer_is_deepspeeds_cpu_adam_with_fp32_states_and_no_gpu_state() -> None:
    counts = ParameterCounts(trainable=1_000_000_000, frozen=0, largest_unit=50_000_000)
    plain = Layout(data_parallel=DataParallel.PLAIN, gpu_count=1, gpus_per_node=1)
    offloaded = replace(plain, offload=Offload(optimizer=True))
    held = {o: model_state_bytes(counts, plain, precision=Precision.BF16_MIXED, optimizer=o, ddp_bucket=True)
            for o in (Optimizer.ADAMW, Optimizer.ADAMW_8BIT)}
    assert held[Optimizer.ADAMW_8BIT].optimizer_state * 4 == held[Optimizer.ADAMW].optimizer_state == 8 * 10**9
    hosts = {o: model_state_bytes(counts, offloaded, precision=Precision.BF16_MIXED, optimizer=o, ddp_bucket=True)
             for o in (Optimizer.ADAMW, Optimizer.ADAMW_8BIT)}
    # offload swaps the update for CPU Adam: the host holds fp32 states (it held 2 bytes a weight, the 8-bit states)
    assert hosts[Optimizer.ADAMW_8BIT].host_bytes == hosts[Optimizer.ADAMW].host_bytes
    assert hosts[Optimizer.ADAMW_8BIT].optimizer_state == 0


def test_an_8bit_optimizer_outside_pytorch_is_refused_naming_the_field(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["estimate", "mlp", "--batch", "64", "--optimizer", "adamw_8bit", "--framework", "tensorflow"]) == 2
    assert "training.optimizer: adamw_8bit is bitsandbytes' optimizer" in capsys.readouterr().err


def test_dreambooth_on_a_16gb_gpu_fits_with_checkpointing_and_8bit_adam_as_diffusers_readme_says(
        capsys: pytest.CaptureFixture[str]) -> None:
    # huggingface/diffusers examples/dreambooth/README.md (@fe8cecae, read 2026-12-07), "Training on a 16GB GPU":
    # "With the help of gradient checkpointing and the 8-bit optimizer from bitsandbytes it's possible to run train
    # dreambooth on a 16GB GPU": SD v1-4's U-Net, 512 px, train_batch_size 1 with prior preservation (one class image
    # beside each instance image: 2 a step), gradient_accumulation_steps 2, no --mixed_precision (fp32)
    spec = {"model": {"preset": "stable-diffusion-1.5"}, "dataset": {"samples": 3200},
            "training": {"from_pretrained": True, "batch_size": 2, "update_interval": 2, "recompute": True,
                         "precision": "fp32", "optimizer": "adamw_8bit", "gradient_clipping": "global"}}
    _, job = load_job(spec)
    rows = {row.gpu: row for row in estimate_on_gpus(job, GPUS, slugs=["v100-16gb", "t4"]).per_gpu}
    _, adamw = load_job({**spec, "training": {**spec["training"], "optimizer": "adamw"}})
    plain = estimate_on_gpus(adamw, GPUS, slugs=["v100-16gb"]).per_gpu[0]
    print(f"\nDreamBooth SD 1.x, fp32, checkpointing: {rows['t4'].gpu_memory_bytes / 2**30:.1f} GiB with 8-bit Adam, "
          f"{plain.gpu_memory_bytes / 2**30:.1f} GiB with foreach AdamW")
    assert rows["v100-16gb"].fits and rows["t4"].fits
    assert plain.gpu_memory_bytes > rows["t4"].gpu_memory_bytes + 6 * 2**30  # 6 bytes a U-Net weight and the copy


def test_advice_sized_on_several_gpus_says_so_beside_the_one_gpu_headline() -> None:
    # "full fine-tune llama 3 70b on 8 h100" headed 1131.1 GiB per GPU (the job as given, one GPU) and advised on
    # "the 1413.4 GiB per GPU" of the plan's 8 GPUs (plain data parallel keeps DDP's gradient buckets) unexplained
    _, job = load_job({"model": {"preset": "qwen2.5-1.5b"}, "dataset": {"samples": 1000},
                       "training": {"batch_size": 4, "sequence_length": 1024, "precision": "bf16-mixed",
                                    "optimizer": "adamw", "from_pretrained": True}})
    one = {w.code: w.message for w in estimate_on_gpus(job, GPUS, slugs=["h100-sxm"], gpu_count=1).warnings}
    eight = {w.code: w.message for w in estimate_on_gpus(job, GPUS, slugs=["h100-sxm"], gpu_count=8).warnings}
    assert one["optimizer-8bit"].startswith("Adam")  # one GPU: the headline's own figure, unprefixed
    assert eight["optimizer-8bit"].startswith("Sized on 8 GPUs (plain data parallel, no checkpointing): Adam")
