"""Adapter layouts: a frozen linear keeps no input for backward; a LoRA-adapted one keeps it for A's gradient.

Measured with validation/measure on torch 2.13.0 (CPU): a linear whose weight is frozen saves no input
(autograd saves `mm`'s input only for the weight's gradient); a LoRA A matrix beside it saves it.
"""

from __future__ import annotations

from workers.sizing.layers.attention import Attention
from workers.sizing.presets.registry import preset_stats
from workers.sizing.spec import Optimizer, Precision, Training
from workers.sizing.step_walk import kept_per_row
from workers.sizing.strategies.adapters import block_of
from workers.sizing.strategies.retention import EVERY_LINEAR, layout_retention
from workers.sizing.strategies.types import Checkpointing

TRAINING = Training(batch_size=2, precision=Precision.BF16_MIXED, optimizer=Optimizer.ADAMW)


def _retention(adapted: tuple[str, ...] | None, mode: Checkpointing = Checkpointing.NONE):
    return layout_retention(preset_stats("gpt2"), TRAINING, precision=Precision.BF16_MIXED,
                            attention=Attention.FLASH, mode=mode, adapted=adapted)


def test_frozen_dense_rows_keep_nothing_and_adapted_ones_keep_their_input() -> None:
    model = preset_stats("gpt2")
    base = kept_per_row(model, TRAINING, precision=Precision.BF16_MIXED, attention=Attention.FLASH)
    retention = _retention(("q", "v"))
    assert retention is not None
    dense = [i for i, row in enumerate(model.layers) if row.type == "dense"]
    adapted = [i for i in dense if block_of(model.layers[i]) and model.layers[i].name.endswith(".qkv")]
    assert adapted and any(base[i] > 0 for i in set(dense) - set(adapted))
    for i in dense:
        assert retention.kept[i] == (base[i] if i in adapted else 0), model.layers[i].name
    for i, row in enumerate(model.layers):
        if row.type != "dense":
            assert retention.kept[i] == base[i], row.name
    assert sum(retention.kept) < sum(base)


def test_adapting_the_mlp_keeps_its_inputs_again() -> None:
    qv, all_targets = _retention(("q", "v")), _retention(("q", "k", "v", "o", "mlp"))
    assert qv is not None and all_targets is not None
    assert sum(all_targets.kept) > sum(qv.kept)


def test_without_adapters_the_walk_keeps_its_own_rows() -> None:
    assert _retention(None) is None
    full = _retention(None, Checkpointing.FULL)
    frozen_full = _retention(("q", "v"), Checkpointing.FULL)
    assert full is not None and frozen_full is not None
    assert sum(frozen_full.recomputed) < sum(full.recomputed)  # the recomputed block keeps less too


def test_qlora_under_bitsandbytes_before_0_44_keeps_every_4bit_linears_input() -> None:
    # bitsandbytes 0.42.0 MatMul4Bit.forward saved (A, B) for backward; 0.44.0 saves (None, B) (#1270).
    from catalog.loader import load_catalog
    from workers.sizing.spec import JobSpec
    from workers.sizing.strategies.footprint import layout_memory
    from workers.sizing.strategies.parallelism import Layout
    from workers.sizing.strategies.types import Adapter, AdapterKind, DataParallel

    model = preset_stats("llama-7b", sequence_length=512)
    job = JobSpec(model=model, training=TRAINING)
    gpu = next(g for g in load_catalog().gpus if g.slug == "a10g")

    def activations(adapter: Adapter) -> int:
        layout = Layout(DataParallel.PLAIN, gpu_count=1, gpus_per_node=1, adapter=adapter)
        return layout_memory(job, layout, gpu=gpu, batch_size=2).breakdown.activations_bytes

    qlora = Adapter(kind=AdapterKind.QLORA, rank=32, double_quantization=False)
    older = Adapter(kind=AdapterKind.QLORA, rank=32, double_quantization=False, quantized_inputs_kept=True)
    lora, lora_flag = Adapter(rank=32), Adapter(rank=32, quantized_inputs_kept=True)
    # Per block at least the MLP down projection's input (ffn wide) and the MLP's input (d_model) in bf16.
    shape_floor = 32 * 2 * 512 * (11008 + 4096) * 2
    assert activations(older) - activations(qlora) >= shape_floor
    assert activations(lora_flag) == activations(lora)  # a 16-bit frozen linear is torch's own: keeps none
    assert _retention(EVERY_LINEAR) is not None
    base = kept_per_row(preset_stats("gpt2"), TRAINING, precision=Precision.BF16_MIXED, attention=Attention.FLASH)
    assert list(_retention(EVERY_LINEAR).kept) == base
