"""An option whose host cannot load the pre-trained weights gives way to one on the same GPUs at about its price.

`host-memory-loading` (reasons.loading_warning) is a warning, not a rejection: a streaming load (safetensors with a
device_map, FSDP's cpu_ram_efficient_loading) runs on the smaller host. But where the answer holds an option of the
same GPUs within LOADING_TIE_SHARE of its cost and of its time whose host holds the usual load, a careful engineer
takes that one: "fine-tune sdxl with lora on 1000 images" ranked gcp n1-standard-2 + T4 (7.5 GiB of host memory; the
load needs 10.9 GiB) first at $0.09 and n1-highmem-2 + T4 (13 GiB) third at the same price and time. The list keeps
its options; the one that loads moves ahead of the one that does not, whose warning says so.
"""

from __future__ import annotations

from dataclasses import replace

from workers.ranking.recommendation import RankedOption, Recommendation
from workers.ranking.wider import option_text

# Within a tenth of the cost and of the time, two options are the same choice but for the host [rule of thumb: the
# spread of one machine's spot prices across regions in the catalog is wider than that].
LOADING_TIE_SHARE = 0.10
CODE = "host-memory-loading"


def _short(option: RankedOption) -> bool:
    return any(w.code == CODE for w in option.warnings)


def _gpus(option: RankedOption) -> tuple[str, int]:
    return option.gpu, option.gpu_count * option.nodes


def _as_good(loads: RankedOption, short: RankedOption) -> bool:
    """Say whether `loads` runs the same GPUs within the tie share of `short`'s cost and time."""
    limit = 1.0 + LOADING_TIE_SHARE
    return (_gpus(loads) == _gpus(short) and loads.training_cost_usd <= short.training_cost_usd * limit
            and loads.training_hours <= short.training_hours * limit)


def host_loading_first(rec: Recommendation) -> Recommendation:
    """Return the answer with each option whose host cannot hold the weights' load behind the first later option of
    the same GPUs, about as cheap and as fast, whose host can; ranks renumbered, the moved option's warning naming
    it."""
    options = list(rec.options)
    if not any(_short(o) for o in options):
        return rec
    i = 0
    while i < len(options):
        short = options[i]
        j = next((j for j in range(i + 1, len(options)) if not _short(options[j]) and _as_good(options[j], short)),
                 None) if _short(short) else None
        if j is None:
            i += 1
            continue
        loads = options.pop(j)
        more = loads.training_cost_usd / short.training_cost_usd - 1.0 if short.training_cost_usd > 0 else 0.0
        note = (f"; {loads.provider} {option_text(loads)} ({loads.host_memory_bytes / 2**30:.1f} GiB of host "
                f"memory, {more:+.1%} cost) holds it and is ranked ahead of this one")
        warnings = tuple(replace(w, message=w.message + note) if w.code == CODE else w for w in short.warnings)
        # on the cost/time front where the one it stands in for is: the two differ by less than the tie share
        options[i:i + 1] = [replace(loads, pareto=loads.pareto or short.pareto), replace(short, warnings=warnings)]
        i += 2  # the option that loads takes the place; the one moved down is not moved again
    return replace(rec, options=tuple(replace(o, rank=n) for n, o in enumerate(options, start=1)))
