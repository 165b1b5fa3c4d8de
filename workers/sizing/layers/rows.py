"""A layer part's statistics row, what it keeps for backward, and the names of its tensors."""

from __future__ import annotations

from collections.abc import Sequence

from workers.sizing.layers.fields import Part, Shape, size
from workers.sizing.stats import LayerStats


def view_refs_of(view_refs: list[tuple[int, int]], j: int) -> int:
    """Return where part j's output lives: the part or source a view part shares, else part j itself."""
    for k, ref in view_refs:
        if k == j:
            return ref
    return j


def part_ids(layer_name: str, parts: Sequence[Part]) -> list[str]:
    """Return the tensor names of a layer's parts: the last is the layer's, the others "<name>.<part>"."""
    last = len(parts) - 1
    return [layer_name if k == last else f"{layer_name}.{part.suffix or k}" for k, part in enumerate(parts)]


def count_kept_values(
    part: Part,
    input_id: str,
    input_shape: Shape,
    part_id: str,
    kept: set[str],
    *,
    output_values: int | None = None,
) -> int:
    """Count the values a part keeps for backward, skipping tensors an earlier layer already keeps."""
    values = part.extra_saved_values
    if part.keeps_input and input_id not in kept:
        kept.add(input_id)
        values += size(input_shape)
    if part.keeps_output and part_id not in kept:
        kept.add(part_id)
        values += size(part.output_shape) if output_values is None else output_values
    return values


def part_row(part: Part, layer_name: str, *, params: int, saved: int, repeat: int, frozen: bool,
             passes: int = 1, shared: int = 0, autocast_extra: int = 0) -> LayerStats:
    """Build one statistics row, scaled by the layer's repeat count."""
    neurons = size(part.output_shape) if part.neurons < 0 else part.neurons
    fused = -1
    if part.fused_extra_saved_values >= 0 and not frozen:
        fused = saved - part.extra_saved_values + part.fused_extra_saved_values
    fused_mask = -1 if part.fused_mask_bytes < 0 or frozen else part.fused_mask_bytes
    return LayerStats(
        name=f"{layer_name}.{part.suffix}" if part.suffix else layer_name,
        type=part.type,
        output_shape=part.output_shape,
        neurons=neurons * repeat,
        parameters=params,
        multiply_adds=part.multiply_adds * repeat,
        kind=part.kind,
        saved_values=saved * repeat,
        saved_mask_bytes=0 if frozen else part.saved_mask_bytes * repeat,
        traffic_values=part.traffic_values * repeat,
        passes=passes,
        kernel_positions=part.kernel_positions,
        fused_saved_values=-1 if fused < 0 else fused * repeat,
        fused_saved_mask_bytes=-1 if fused_mask < 0 else fused_mask * repeat,
        fused_multiply_adds=-1 if part.fused_multiply_adds < 0 else part.fused_multiply_adds * repeat,
        shared_parameters=shared,
        frozen=frozen,
        frozen_parameters=part.parameters if frozen else 0,
        autocast_extra_bytes=0 if frozen else autocast_extra * repeat,
    )
