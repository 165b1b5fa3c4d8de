"""Warnings: each rule of thumb fires at its threshold and not below, and names its inputs."""

from __future__ import annotations

from dataclasses import replace

import pytest
from sizing_fixtures import GIB, gpu, mlp, resnet50, stats_only, training

from catalog.loader import load_catalog
from workers.schemas.specs import load_job
from workers.sizing.advice import (
    cpu_warning,
    gpu_warnings,
    machine_warnings,
    memory_warnings,
    merge_warnings,
    model_warnings,
)
from workers.sizing.estimate import estimate_requirements
from workers.sizing.machine import REFERENCE_CPU_SINGLE_THREAD_SCORE, MachineNeeds
from workers.sizing.memory import baseline_formula_bytes, estimate_memory, sharded_memory
from workers.sizing.requirements import CodedWarning, MemoryBreakdown
from workers.sizing.rules import SHARDING_WORTH_SHARE
from workers.sizing.spec import Dataset, Framework, JobSpec, Precision
from workers.sizing.timing import IterationTime


def _time(total_ms: float = 100.0, *, layers: int = 0, tiny: int = 0, overhead_ms: float = 1.0,
          speedup: float = 1.0) -> IterationTime:
    return IterationTime(compute_ms=total_ms - overhead_ms, memory_ms=0.0, allreduce_ms=0.0,
                         overhead_ms=overhead_ms, total_ms=total_ms, bottleneck="compute",
                         single_gpu_ms=total_ms, forward_ms=total_ms / 3, speedup_vs_one_gpu=speedup,
                         layer_count=layers, tiny_layer_count=tiny)


def _codes(job: JobSpec, slug: str = "v100-16gb", *, time: IterationTime | None = None, hours: float = 10.0,
           fits: bool = True, gpu_count: int = 1) -> list[str]:
    found = gpu_warnings(job, gpu(slug), time=time or _time(), training_hours=hours, fits=fits,
                         gpu_memory_bytes=GIB, usable_bytes=2 * GIB, gpu_count=gpu_count)
    return [w.code for w in found]


JOB = JobSpec(resnet50(), training(), Dataset(samples=1000))


def test_short_iteration_fires_under_10_ms_and_not_at_10() -> None:
    assert "short-iteration" in _codes(JOB, time=_time(9.99))
    assert "short-iteration" not in _codes(JOB, time=_time(10.0))


def test_short_run_fires_under_10_minutes_and_not_at_10() -> None:
    assert "short-run" in _codes(JOB, hours=9.9 / 60)
    assert "short-run" not in _codes(JOB, hours=10 / 60)
    assert "short-run" not in _codes(JOB, hours=0.0)  # unknown, not short


def test_tiny_layers_fire_with_many_layers_mostly_tiny_where_launches_are_a_quarter_of_the_step() -> None:
    launch_bound = {"total_ms": 8.0, "overhead_ms": 2.0}
    assert "tiny-layers" in _codes(JOB, time=_time(layers=50, tiny=45, **launch_bound))
    assert "tiny-layers" not in _codes(JOB, time=_time(layers=50, tiny=44, **launch_bound))
    assert "tiny-layers" not in _codes(JOB, time=_time(layers=49, tiny=49, **launch_bound))
    # Short layers on a fast GPU that still does the work (launches 5% of the step): no warning.
    assert "tiny-layers" not in _codes(JOB, time=_time(40.0, layers=128, tiny=116, overhead_ms=2.0))
    assert "tiny-layers" not in _codes(JOB, time=_time(8.0, layers=50, tiny=50, overhead_ms=1.99))


def test_vit_on_a_b200_is_not_called_launch_bound_and_resnet18_on_cifar_on_a_t4_is() -> None:
    cifar = load_job({"model": {"preset": "resnet18", "input_shape": [3, 32, 32]},
                      "training": {"batch_size": 128, "precision": "fp16-mixed", "optimizer": "momentum"},
                      "dataset": {"samples": 50_000}})[1]
    vit = load_job({"model": {"preset": "vit-b16"},
                    "training": {"batch_size": 128, "precision": "bf16-mixed", "optimizer": "adamw"},
                    "dataset": {"samples": 1_281_167}})[1]
    known = {g.slug: g for g in load_catalog().gpus}

    def codes(job: JobSpec, slug: str, count: int) -> list[str]:
        req = estimate_requirements(job, gpus=(known[slug],), gpu_count=count, known_gpus=known)
        return [w.code for w in req.warnings]

    assert "tiny-layers" not in codes(vit, "b200", 8)
    assert "tiny-layers" in codes(cifar, "t4", 1)


def test_parameter_exchange_fires_at_10x_parameters_and_not_above() -> None:
    at = JobSpec(stats_only(neurons=10, parameters=1000, multiply_adds=10_000), training())
    above = JobSpec(stats_only(neurons=10, parameters=1000, multiply_adds=10_001), training())
    found = [w for w in model_warnings(at, gpu_count=4) if w.code == "parameter-exchange-bound"]
    assert found and "10.0x the parameters" in found[0].message and "4 GPUs" in found[0].message
    assert not [w for w in model_warnings(above, gpu_count=4) if w.code == "parameter-exchange-bound"]


@pytest.mark.parametrize(("slug", "fires", "words"), [
    ("gtx-1060-3gb", True, "not recommended"), ("gtx-1050-ti", True, "toys"), ("gtx-1060-6gb", False, ""),
])
def test_small_gpu_memory_fires_at_4_gb_and_below(slug: str, fires: bool, words: str) -> None:
    found = [w for w in gpu_warnings(JOB, gpu(slug), time=_time(), training_hours=1.0, fits=True,
                                     gpu_memory_bytes=GIB, usable_bytes=2 * GIB, gpu_count=1)
             if w.code == "small-gpu-memory"]
    assert bool(found) == fires
    if fires:
        assert words in found[0].message


def test_old_architectures_are_flagged() -> None:
    for slug in ("k80", "m60", "gtx-970", "titan-x-maxwell"):
        assert "old-architecture" in _codes(JOB, slug)
    assert "old-architecture" not in _codes(JOB, "p100-16gb")


def test_mixed_precision_without_tensor_cores_is_flagged() -> None:
    mixed = replace(JOB, training=training(precision=Precision.FP16_MIXED))
    assert "no-tensor-cores-for-mixed-precision" in _codes(mixed, "gtx-1080-ti")
    assert "no-tensor-cores-for-mixed-precision" not in _codes(mixed, "v100-16gb")
    assert "no-tensor-cores-for-mixed-precision" not in _codes(JOB, "gtx-1080-ti")


def test_bf16_before_ampere_is_flagged() -> None:
    bf16 = replace(JOB, training=training(precision=Precision.BF16_MIXED))
    assert "bf16-unsupported" in _codes(bf16, "v100-16gb")
    assert "bf16-unsupported" not in _codes(bf16, "a100-40gb")


def test_does_not_fit_names_the_card_and_its_usable_memory() -> None:
    found = gpu_warnings(JOB, gpu("gtx-1080"), time=_time(), training_hours=1.0, fits=False,
                         gpu_memory_bytes=20 * GIB, usable_bytes=7 * GIB, gpu_count=1)
    message = next(w.message for w in found if w.code == "does-not-fit")
    assert "20.0 GiB" in message and "gtx-1080" in message and "7.0 GiB" in message


def test_top_end_card_on_a_small_network_is_flagged() -> None:
    assert "top-end-underused" in _codes(JOB, "h100-sxm", time=_time(4.0, overhead_ms=2.0))
    assert "top-end-underused" not in _codes(JOB, "h100-sxm", time=_time(100.0, overhead_ms=2.0))
    assert "top-end-underused" not in _codes(JOB, "t4", time=_time(4.0, overhead_ms=2.0))


def test_poor_scaling_suggests_parallel_trials() -> None:
    assert "run-trials-in-parallel" in _codes(JOB, time=_time(speedup=2.9), gpu_count=4)
    assert "run-trials-in-parallel" not in _codes(JOB, time=_time(speedup=3.0), gpu_count=4)


def test_baseline_understates_when_the_realistic_peak_is_over_1_2_times_it() -> None:
    model = mlp()
    job = JobSpec(model, training(batch_size=1))
    memory = estimate_memory(model, job.training)
    assert memory.total_bytes <= 8 * GIB  # below the memory tier, so only the baseline rule speaks
    low = memory.total_bytes / 1.2
    assert [w.code for w in memory_warnings(job, memory=memory, baseline_bytes=int(low) - 1, gpu_count=1,
                                            sharded=None)] == ["baseline-formula-understates"]
    assert memory_warnings(job, memory=memory, baseline_bytes=int(low) + 1, gpu_count=1, sharded=None) == []
    assert baseline_formula_bytes(model, 1) < memory.total_bytes  # Adam and the reserve push it past


def test_memory_tier_fires_above_the_individual_tier_of_8_gib() -> None:
    job = JobSpec(mlp(), training())
    tiny = MemoryBreakdown(8 * GIB, 0, 0, 0, 0)
    assert memory_warnings(job, memory=tiny, baseline_bytes=8 * GIB, gpu_count=1, sharded=None) == []
    over = MemoryBreakdown(8 * GIB + 1, 0, 0, 0, 0)
    found = memory_warnings(job, memory=over, baseline_bytes=8 * GIB, gpu_count=1, sharded=None)
    assert [w.code for w in found] == ["memory-tier"] and "32-64 GB" in found[0].message


def test_data_parallel_full_copy_offers_the_sharded_figure() -> None:
    model = mlp()
    job = JobSpec(model, training())
    memory = estimate_memory(model, job.training, gpu_count=4)
    sharded = sharded_memory(model, job.training, gpu_count=4)
    found = memory_warnings(job, memory=memory, baseline_bytes=memory.total_bytes, gpu_count=4,
                            sharded=sharded)
    assert [w.code for w in found if w.code != "memory-tier"] == ["data-parallel-full-copy"]
    assert f"{sharded.total_bytes / GIB:.1f} GiB" in found[0].message


def test_cpu_bound_fires_above_the_cores_score_and_not_at_it() -> None:
    assert cpu_warning(REFERENCE_CPU_SINGLE_THREAD_SCORE, gpu="a100-80gb") is None
    warning = cpu_warning(2 * REFERENCE_CPU_SINGLE_THREAD_SCORE, gpu="a100-80gb")
    assert warning is not None and warning.code == "cpu-bound" and "2.0x longer" in warning.message
    assert cpu_warning(3000.0, gpu="t4", cpu_single_thread_score=3500.0) is None


def test_cpu_bound_fix_counts_workers_on_cores_of_their_own_where_the_machines_workers_share_cores() -> None:
    # YOLOv8n on a T4 machine of 8 vCPUs (4 cores, 2 threads each): 7 workers on shared cores each need 1,879; the
    # fix said 8 workers (7 x 1,879 / 1,800) where 5 on cores of their own do (the batch's whole need, 8,550 / 1,800)
    spec = {"model": {"preset": "yolov8n"}, "dataset": {"samples": 10000, "preprocess_ms_per_sample": 21.2},
            "training": {"batch_size": 16, "precision": "fp16-mixed"}}
    _, job = load_job(spec)
    known = {g.slug: g for g in load_catalog().gpus}
    req = estimate_requirements(job, gpus=(known["t4"],), known_gpus=known, vcpus=8, cpu_single_thread_score=1800.0,
                                threads_per_core=2)
    [cpu] = [w for w in req.warnings if w.code == "cpu-bound"]
    row = req.per_gpu[0]
    whole = REFERENCE_CPU_SINGLE_THREAD_SCORE * 16 * 21.2 / row.iteration_ms  # one batch's work a GPU iteration
    need = -(-whole // 1800.0)
    print(f"\n{cpu.message}")
    assert f"Fix: {need:.0f} loader workers per GPU on these cores" in cpu.message
    assert f"({(need + 1) * 2:.0f} vCPUs, {need + 1:.0f} cores per GPU)" in cpu.message


def test_host_memory_and_storage_short() -> None:
    needs = MachineNeeds(host_memory_bytes=64 * GIB, storage_min_bytes=300 * GIB, storage_max_bytes=400 * GIB)
    codes = [w.code for w in machine_warnings(needs, host_memory_bytes=32 * GIB, storage_bytes=100 * GIB)]
    assert codes == ["host-memory-short", "storage-short"]
    assert machine_warnings(needs, host_memory_bytes=64 * GIB, storage_bytes=300 * GIB) == []
    assert machine_warnings(needs) == []


def test_model_warnings_for_unknown_size_operators_and_preallocating_frameworks() -> None:
    model = replace(resnet50(), unknown_operators=("GridSample",))
    job = JobSpec(model, training(framework=Framework.TENSORFLOW))
    codes = [w.code for w in model_warnings(job, gpu_count=1)]
    assert codes == ["unknown-dataset-size", "unknown-operators", "framework-preallocates"]
    assert model_warnings(JOB, gpu_count=1) == []


def test_one_warning_per_code_names_every_card_it_holds_on() -> None:
    merged = merge_warnings([
        ("gtx-1080-ti", CodedWarning("short-iteration", "One iteration takes 1.0 ms on gtx-1080-ti.")),
        ("", CodedWarning("cpu-bound", "x")),
        ("gtx-1080", CodedWarning("short-iteration", "One iteration takes 0.5 ms on gtx-1080.")),
    ])
    assert [w.code for w in merged] == ["short-iteration", "cpu-bound"]
    assert merged[0].message == "One iteration takes 1.0 ms on gtx-1080-ti. The same holds on gtx-1080."


def test_breakdown_sum_is_the_peak() -> None:
    memory = MemoryBreakdown(1, 2, 3, 4, 5)
    assert memory.total_bytes == 15


def test_data_parallel_full_copy_stays_quiet_where_sharding_saves_little() -> None:
    # ResNet-50 on 8 GPUs: the activations dominate; sharding optimizer state and gradients saves ~3%.
    job = JobSpec(resnet50(), training(batch_size=128))
    memory = estimate_memory(job.model, job.training, gpu_count=8)
    sharded = sharded_memory(job.model, job.training, gpu_count=8)
    assert sharded.total_bytes > (1 - SHARDING_WORTH_SHARE) * memory.total_bytes
    found = memory_warnings(job, memory=memory, baseline_bytes=memory.total_bytes, gpu_count=8, sharded=sharded)
    assert "data-parallel-full-copy" not in [w.code for w in found]
