"""A LayerNorm written as primitive ops keeps its pieces (LLMs-from-scratch's), like gelu_new does."""

from __future__ import annotations

from workers.sizing.layers.basic import LAYERNORM_PARTS_EXTRA_KEPT
from workers.sizing.layers.build import compute_model_stats


def _kept(layers: list[dict[str, object]], **shape: object) -> int:
    stats = compute_model_stats(layers, input_shape=shape.get("input_shape"),  # type: ignore[arg-type]
                                sequence_length=shape.get("sequence_length"))  # type: ignore[arg-type]
    return sum(row.saved_values for row in stats.layers)


def test_a_layernorm_of_parts_keeps_three_times_its_input() -> None:
    fused = _kept([{"type": "dense", "out_features": 64}, {"type": "layernorm"}], input_shape=[16, 32])
    parts = _kept([{"type": "dense", "out_features": 64}, {"type": "layernorm", "parts": True}], input_shape=[16, 32])
    assert parts - fused == LAYERNORM_PARTS_EXTRA_KEPT * 16 * 64 == 2 * 16 * 64


def test_a_block_with_norms_of_parts_keeps_two_more_hidden_sized_tensors_per_norm() -> None:
    def block(norm: str) -> list[dict[str, object]]:
        return [{"type": "embedding", "vocab": 100, "dim": 64},
                {"type": "transformer_block", "heads": 4, "norm_type": norm}]
    extra = _kept(block("layernorm_parts"), sequence_length=32) - _kept(block("layernorm"), sequence_length=32)
    assert extra == 2 * LAYERNORM_PARTS_EXTRA_KEPT * 32 * 64  # ln1 and ln2


def test_the_llms_from_scratch_record_is_built_with_its_primitive_gelu_and_layernorm() -> None:
    from workers.accuracy.accuracy import load_measurements
    from workers.accuracy.jobs import record_job

    record = next(r for r in load_measurements() if r["id"] == "llmfs-gpt163m-a100-fp32")
    rows = record_job(record).job.model.layers
    assert any(r.type == "layernorm" and r.saved_values > 768 * 1024 for r in rows)
    assert sum(1 for r in rows if r.name.endswith(".act")) == 12


def _traffic(layers: list[dict[str, object]], **shape: object) -> int:
    stats = compute_model_stats(layers, input_shape=shape.get("input_shape"),  # type: ignore[arg-type]
                                sequence_length=shape.get("sequence_length"))  # type: ignore[arg-type]
    return sum(row.traffic_values for row in stats.layers)


def test_composed_ops_move_their_tensor_once_per_primitive_op() -> None:
    from workers.sizing.layers.basic import LAYERNORM_PARTS_TRAFFIC_PER_VALUE
    from workers.sizing.layers.feedforward import GELU_NEW_TRAFFIC_PER_VALUE

    fused = _traffic([{"type": "dense", "out_features": 64}, {"type": "layernorm"}], input_shape=[16, 32])
    parts = _traffic([{"type": "dense", "out_features": 64}, {"type": "layernorm", "parts": True}],
                     input_shape=[16, 32])
    assert parts - fused == (LAYERNORM_PARTS_TRAFFIC_PER_VALUE - 2) * 16 * 64 == 8 * 16 * 64

    def block(activation: str) -> list[dict[str, object]]:
        return [{"type": "embedding", "vocab": 100, "dim": 64},
                {"type": "transformer_block", "heads": 4, "activation": activation}]
    extra = _traffic(block("gelu_new"), sequence_length=32) - _traffic(block("gelu"), sequence_length=32)
    assert extra == (GELU_NEW_TRAFFIC_PER_VALUE - 2) * 32 * 4 * 64 == 16 * 32 * 256  # the 4h-wide activation


def test_composed_ops_make_a_bandwidth_bound_step_slower() -> None:
    from sizing_fixtures import gpu

    from workers.sizing.spec import Training
    from workers.sizing.timing import estimate_iteration_ms

    def ms(activation: str) -> float:
        layers = [{"type": "embedding", "vocab": 1000, "dim": 256},
                  {"type": "transformer_block", "heads": 4, "activation": activation}]
        stats = compute_model_stats(layers, input_shape=None, sequence_length=512)  # type: ignore[arg-type]
        return estimate_iteration_ms(stats, Training(batch_size=8, sequence_length=512), gpu("a100-40gb")).total_ms
    assert ms("gelu_new") > ms("gelu")


def test_flagperf_gpt2_records_run_megatrons_fused_gelu() -> None:
    from workers.accuracy.accuracy import load_measurements
    from workers.accuracy.jobs import record_job

    records = {r["id"]: r for r in load_measurements()}
    megatron = record_job(records["flagperf-gpt2m-a100-40-fp32-1"]).job.model
    acts = [r for r in megatron.layers if r.name.endswith(".act")]
    assert len(acts) == 24 and {r.type for r in acts} == {"gelu"}
    # the same shape from Hugging Face keeps and moves more per activation
    from workers.sizing.presets.registry import preset_stats
    hf = [r for r in preset_stats("gpt2-medium", sequence_length=1024).layers if r.name.endswith(".act")]
    assert hf[0].saved_values > acts[0].saved_values and hf[0].traffic_values > acts[0].traffic_values
