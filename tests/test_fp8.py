"""fp8-mixed: the linear layers' products at the FP8 rate on Ada, Hopper and Blackwell, with their casts;
bf16-mixed elsewhere; checked against MosaicML's H100 FP8 and bf16 runs of the same configurations."""

from __future__ import annotations

import statistics
from dataclasses import replace

import pytest
from sizing_fixtures import gpu, mlp, resnet50, training, transformer

from catalog.gpus import gpus_by_slug
from workers.accuracy.strategies import compare_strategy_record, load_strategy_records
from workers.schemas import JobSpecSchema
from workers.schemas.specs import load_job
from workers.sizing.advice import gpu_warnings
from workers.sizing.estimate import estimate_requirements
from workers.sizing.fp8 import fp8_warning
from workers.sizing.memory import estimate_memory
from workers.sizing.spec import JobSpec, Precision
from workers.sizing.throughput import effective_precision, has_fp8
from workers.sizing.timing import estimate_iteration_ms, training_flops
from workers.slack.grammar import parse_command

FP8, BF16 = Precision.FP8_MIXED, Precision.BF16_MIXED


def test_fp8_tensor_cores_are_ada_hopper_and_blackwell_only() -> None:
    assert all(has_fp8(gpu(slug)) for slug in ("rtx-4090", "l4", "l40s", "h100-sxm", "b200"))
    assert not any(has_fp8(gpu(slug)) for slug in ("a100-80gb", "rtx-3090", "v100-32gb", "t4", "gtx-1080-ti"))
    # off them, fp8 recipes fall back: bf16 on Ampere, and (like bf16) fp32 before it
    assert effective_precision(FP8, gpu("a100-80gb")) is BF16
    assert effective_precision(FP8, gpu("v100-32gb")) is Precision.FP32
    assert effective_precision(FP8, gpu("h100-sxm")) is FP8


def test_a_linear_model_gains_on_h100_but_less_than_twice_and_not_at_all_on_an_a100() -> None:
    model = mlp(width=8192, depth=8)
    h100, a100 = gpu("h100-sxm"), gpu("a100-80gb")
    bf16 = estimate_iteration_ms(model, training(batch_size=4096, precision=BF16), h100)
    fp8 = estimate_iteration_ms(model, training(batch_size=4096, precision=FP8), h100)
    # the products run twice as fast; the casts (memory-bound, their own kernels) take some of it back
    assert 1.3 < bf16.total_ms / fp8.total_ms < 2.0
    assert fp8.compute_ms == pytest.approx(bf16.compute_ms / 2, rel=0.02)
    assert fp8.memory_ms > bf16.memory_ms
    on_a100 = [estimate_iteration_ms(model, training(batch_size=4096, precision=p), a100).total_ms for p in (BF16, FP8)]
    assert on_a100[0] == on_a100[1]
    # the work counted is the same: FP8 changes the rate, not the FLOPs
    assert training_flops(model, training(precision=FP8)) == training_flops(model, training(precision=BF16))


def test_convolutions_and_attention_stay_in_bf16() -> None:
    h100 = gpu("h100-sxm")
    cnn = [estimate_iteration_ms(resnet50(), training(batch_size=256, precision=p), h100).total_ms for p in (BF16, FP8)]
    assert cnn[1] / cnn[0] > 0.95  # only ResNet-50's one linear layer changes
    long = transformer(seq=8192, hidden=1024, heads=16, blocks=4)
    short = transformer(seq=512, hidden=1024, heads=16, blocks=4)

    def gain(model: object, batch: int) -> float:
        times = [estimate_iteration_ms(model, training(batch_size=batch, precision=p), h100).total_ms
                 for p in (BF16, FP8)]
        return times[0] / times[1]

    # 16 x 512 and 1 x 8,192 tokens a step: the attention core's share grows with the sequence
    assert gain(short, 16) > gain(long, 1) > 1.0
    # a step of 1,024 tokens through 1,024-wide layers: the casts (weights included) cost what FP8 saves
    assert gain(short, 2) < 1.05


def test_memory_is_sized_as_bf16_mixed() -> None:
    model = transformer(seq=1024)
    h100 = gpu("h100-sxm")
    fp8 = estimate_memory(model, training(batch_size=8, precision=FP8), gpu=h100)
    bf16 = estimate_memory(model, training(batch_size=8, precision=BF16), gpu=h100)
    assert fp8.total_bytes == bf16.total_bytes


def test_the_warning_names_the_card_and_the_fallback() -> None:
    job = JobSpec(model=mlp(), training=training(precision=FP8))
    from test_advice import _time  # the advice tests' iteration

    def codes(slug: str) -> dict[str, str]:
        found = gpu_warnings(job, gpu(slug), time=_time(), training_hours=10.0, fits=True, gpu_memory_bytes=1,
                             usable_bytes=2, gpu_count=1)
        return {w.code: w.message for w in found}

    assert "fp8-unsupported" not in codes("h100-sxm")
    a100 = codes("a100-80gb")
    assert "a100-80gb" in a100["fp8-unsupported"] and "bf16-mixed" in a100["fp8-unsupported"]
    v100 = codes("v100-32gb")
    assert "fp32" in v100["fp8-unsupported"] and "bf16-unsupported" in v100


def test_a_job_fp8_cannot_speed_up_is_told_so_and_one_it_speeds_up_is_not() -> None:
    narrow = JobSpec(model=transformer(seq=512, hidden=768, heads=12, blocks=4), training=training(
        batch_size=2, precision=FP8))
    warning = fp8_warning(narrow, gpu("l40s"))
    assert warning is not None and warning.code == "fp8-no-gain"
    assert "l40s" in warning.message and "bf16-mixed" in warning.message and "batch 2" in warning.message
    wide = JobSpec(model=mlp(width=8192, depth=8), training=training(batch_size=4096, precision=FP8))
    assert fp8_warning(wide, gpu("h100-sxm")) is None
    # not an fp8 job: nothing said
    assert fp8_warning(replace(wide, training=training(batch_size=4096, precision=BF16)), gpu("a100-80gb")) is None


def test_qlora_products_stay_in_bf16_while_lora_ones_go_fp8() -> None:
    # bitsandbytes expands each NF4 base weight to bf16 for its product: a QLoRA job gains nothing from FP8
    def iteration_ms(kind: str, precision: str) -> float:
        spec = {"model": {"preset": "llama3-8b"}, "training": {
            "batch_size": 2, "sequence_length": 2048, "precision": precision, "from_pretrained": True,
            "parallelism": {"adapter": {"kind": kind}}}}
        _, job = load_job(spec)
        known = gpus_by_slug()
        return estimate_requirements(job, known_gpus=known, gpus=[known["h100-sxm"]]).per_gpu[0].iteration_ms

    assert iteration_ms("qlora", "fp8-mixed") == pytest.approx(iteration_ms("qlora", "bf16-mixed"))
    _, qlora = load_job({"model": {"preset": "llama3-8b"}, "training": {
        "batch_size": 2, "sequence_length": 2048, "precision": "fp8-mixed", "from_pretrained": True,
        "parallelism": {"adapter": {"kind": "qlora"}}}})
    warning = fp8_warning(qlora, gpu("h100-sxm"))
    assert warning is not None and warning.code == "fp8-no-gain" and "QLoRA" in warning.message
    assert iteration_ms("lora", "fp8-mixed") < 0.9 * iteration_ms("lora", "bf16-mixed")


def test_the_spec_the_cli_and_the_slack_grammar_take_fp8() -> None:
    spec = {"model": {"preset": "gpt2"}, "training": {"batch_size": 8, "precision": "fp8-mixed"}}
    assert JobSpecSchema().load(spec)["training"]["precision"] == "fp8-mixed"
    for text in ("gpt2 fp8 batch=8", "gpt2 precision=fp8 batch=8", "gpt2 precision=fp8-mixed batch=8"):
        command = parse_command(text, presets=("gpt2",), gpus=("h100-sxm",))
        assert command.spec["training"]["precision"] == "fp8-mixed"
        JobSpecSchema().load(command.spec)


@pytest.fixture(scope="module")
def mosaic_rows() -> dict[str, tuple[float, float]]:
    gpus = gpus_by_slug()
    records = [r for r in load_strategy_records() if r["id"].startswith("mptn-") and "-h100-8-s" in r["id"]]
    rows = {}
    for record in records:
        row = next(r for r in compare_strategy_record(record, gpus) if r.metric == "throughput")
        rows[record["id"]] = (row.predicted, row.measured)
    return rows


def test_mosaicml_fp8_runs_against_their_bf16_twins(mosaic_rows: dict[str, tuple[float, float]]) -> None:
    fp8 = {k: v for k, v in mosaic_rows.items() if k.endswith("-fp8")}
    assert len(fp8) == 10
    for rid, (predicted, measured) in sorted(mosaic_rows.items()):
        print(f"{rid:30s} predicted {predicted:9.2f}/s measured {measured:9.2f}/s {predicted / measured - 1:+.1%}")
    pairs = [(k[:-4], mosaic_rows[k[:-4] + "fp8"], mosaic_rows[k]) for k in mosaic_rows if k.endswith("-bf16")]
    assert len(pairs) == 6
    gains = {}
    for base, (pf, mf), (pb, mb) in pairs:
        gains[base] = (pf / pb, mf / mb)
        print(f"{base:26s} fp8/bf16 predicted {pf / pb:.2f} measured {mf / mb:.2f}")
        assert 1.0 < pf / pb < 1.6  # faster, never by the products' 2x
    # the gain falls with the sequence (the attention core, in bf16, takes a larger share), as measured
    for size in ("1b", "3b"):
        seqs = [f"mptn-{size}-h100-8-s{s}-" for s in (512, 8192, 32768)]
        assert gains[seqs[0]][0] > gains[seqs[1]][0] > gains[seqs[2]][0]
        assert gains[seqs[0]][1] > gains[seqs[1]][1] > gains[seqs[2]][1]
        assert abs(gains[seqs[0]][0] - gains[seqs[0]][1]) < 0.1  # short sequences: within 0.1 of the measured gain
    # at 2,048 tokens or fewer the runs' attention kernel matters little: FP8 throughput within 15%
    short = [abs(p / m - 1) for k, (p, m) in fp8.items() if int(k.split("-s")[1].split("-")[0]) <= 2048]
    assert len(short) == 4 and max(short) < 0.15, short
    print(f"fp8, <= 2,048 tokens: median |error| {statistics.median(short):.1%}")
