"""Which earlier tensors a layer reads: the previous output, `inputs` / `from`, and a decoder block's `memory`.

A transformer block with `memory` (the name of an earlier layer, the encoder's output) is a decoder block
of an encoder-decoder: its cross-attention reads that tensor beside the block's own stream (cross.py). The
memory is the layer's second source; the rows that read it say so (`Part.reads_memory`).
"""

from __future__ import annotations

from collections.abc import Mapping

from workers.sizing.errors import SpecError, UnknownNameError
from workers.sizing.layers.fields import Rule, Shape, closest

MEMORY = "memory"  # the field of a layer type that reads a second tensor by name (Rule.memory)


def input_names(spec: Mapping[str, object], field: str, rule: Rule, previous: str,
                known: dict[str, Shape]) -> list[str]:
    """Return the tensor names a layer reads, checking that each names an earlier layer; a layer with
    `memory` reads it last."""
    if "inputs" in spec and "from" in spec:
        raise SpecError(f"{field}.from", "give 'inputs' or 'from', not both")
    if "from" in spec:
        source = spec["from"]
        if not isinstance(source, str):
            raise SpecError(f"{field}.from", f"must be the name of an earlier layer, got {source!r}")
        names, where = ([previous, source] if rule.many_inputs else [source]), f"{field}.from"
    elif "inputs" in spec:
        raw = spec["inputs"]
        if isinstance(raw, str):
            raw = [raw]
        if not isinstance(raw, list) or not raw or not all(isinstance(n, str) for n in raw):
            raise SpecError(f"{field}.inputs", f"must be a list of earlier layer names, got {raw!r}")
        names, where = list(raw), f"{field}.inputs"
    else:
        names, where = [previous], ""
    for n in names:
        if n not in known:
            raise UnknownNameError(where, f"no earlier layer is named {n!r}", closest(n, list(known)))
    if not rule.many_inputs and len(names) != 1:
        raise SpecError(where, f"this layer reads one tensor, got {len(names)}: {', '.join(names)}")
    if rule.memory and spec.get(MEMORY) is not None:
        memory = spec[MEMORY]
        if not isinstance(memory, str):
            raise SpecError(f"{field}.{MEMORY}", f"must be the name of an earlier layer (the encoder's output), "
                                                 f"got {memory!r}")
        if memory not in known:
            raise UnknownNameError(f"{field}.{MEMORY}", f"no earlier layer is named {memory!r}",
                                   closest(memory, list(known)))
        names.append(memory)
    return names


def is_wired(spec: Mapping[str, object], rule: Rule) -> bool:
    """Say whether a layer names what it reads (else it reads the previous output alone)."""
    return "inputs" in spec or "from" in spec or (rule.memory and spec.get(MEMORY) is not None)
