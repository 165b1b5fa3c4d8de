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
