"""Machines in a fixed order with what judging a shape reads of them, as NumPy arrays: one element a machine.

No job changes a machine's GPU, host memory, vCPUs, CPU score, local disk, plan group or billing, so
the table of a catalog's machines in a scope is built once (CatalogIndex.scoped) and every job's
judging (judge_arrays.py) reads it instead of each machine's attributes in turn. Figures that
depend on the job are looked up once per distinct key the table names (a (GPU model, count) pair,
a (vCPUs, GPU count) loader split, a plan group), never per machine.
NumPy is imported inside, so that a CLI that never ranks does not load it.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from catalog.types import Pricing, Provider
from workers.ranking.runcost import (
    BILLING_GRANULARITY_S,
    BILLING_MINIMUM_S,
    PROVISIONING_S,
    boot_seconds,
    storage_write_mb_per_s,
)

if TYPE_CHECKING:
    from workers.ranking.catalog_index import Machine

# runcost's billing rules by provider name (an Enum's hash is a Python call; a name's is cached)
GRANULARITY_S = {p.value: BILLING_GRANULARITY_S.get(p, 0.0) for p in Provider}
MINIMUM_S = {p.value: BILLING_MINIMUM_S.get(p, 0.0) for p in Provider}


def _ids(keys: Sequence[Any]) -> tuple[list[int], list[Any]]:
    """Return each key's number (in order of first appearance) and the distinct keys."""
    numbers: dict[Any, int] = {}
    ids = [numbers.setdefault(k, len(numbers)) for k in keys]
    return ids, list(numbers)


class MachineTable:
    """What judging reads of each machine, in the machines' order; the distinct keys it looks figures up by."""

    def __init__(self, machines: Sequence[Machine]) -> None:
        import numpy as np

        self.machines = tuple(machines)
        ms = self.machines
        pair_ids, self.pairs = _ids([(m.gpu, m.gpu_count) for m in ms])  # (GPU model, count): PerGpu
        self.pair_ids = pair_ids  # as a list too: the per-shape estimate is handed out from it
        self.pair_id = np.array(pair_ids, dtype=np.intp)
        loader_ids, self.loader_keys = _ids([(m.vcpus, m.gpu_count, m.threads_per_core) for m in ms])  # loaders
        self.loader_id = np.array(loader_ids, dtype=np.intp)
        host_ids, self.host_keys = _ids([(m.gpu, m.gpu_count, m.vcpus, m.cpu_score, m.threads_per_core)
                                         for m in ms])  # host memory need (shapes.host_key)
        self.host_id = np.array(host_ids, dtype=np.intp)
        self.cpu_score = np.array([m.cpu_score for m in ms], dtype=float)
        self.host_memory_bytes = np.array([m.host_memory_bytes for m in ms], dtype=np.int64)
        self.storage_bytes = np.array([m.storage_bytes for m in ms], dtype=np.int64)
        self.onprem = np.array([m.provider is Provider.ONPREM for m in ms], dtype=bool)
        self.plan_group = np.array([m.plan_group for m in ms], dtype=np.int64)
        cap_ids, self.caps = _ids([m.transfer.cap_mb_per_s if m.transfer else 0.0 for m in ms])
        self.cap_id = np.array(cap_ids, dtype=np.int64)
        self.egress_rate = np.array([m.transfer.usd_per_gb if m.transfer is not None else 0.0 for m in ms],
                                    dtype=float)  # USD per GB moved into the machine's regions
        # What a run's start-up and checkpoints read of the machine (runcost.start_up, runplan.machine_parts).
        onprem = Provider.ONPREM
        self.provisioning_s = np.array([0.0 if m.provider is onprem else PROVISIONING_S.get(m.provider, 60.0)
                                        for m in ms], dtype=float)
        self.boot_s = np.array([0.0 if m.provider is onprem else boot_seconds(m.family, m.gpu_count)
                                for m in ms], dtype=float)
        self.block_write_mb_per_s = np.array([storage_write_mb_per_s(m.provider, local_disk_holds_data=False)
                                              for m in ms], dtype=float)
        self.network_mb_per_s = np.array([m.network_gbit_per_s * 1000.0 / 8.0 if m.network_gbit_per_s > 0
                                          else math.nan for m in ms], dtype=float)  # NaN: none stated
        self.staging_cap_mb_per_s = np.array(self.caps, dtype=float)[self.cap_id]
        self.spot = np.array([m.pricing is Pricing.SPOT and m.rate is not None for m in ms], dtype=bool)
        self.mtbi_hours = np.array([m.rate.mtbi_hours if m.pricing is Pricing.SPOT and m.rate is not None else 1.0
                                    for m in ms], dtype=float)
        self.granularity_s = np.array([GRANULARITY_S[m.provider_name] for m in ms], dtype=float)
        self.minimum_s = np.array([MINIMUM_S[m.provider_name] for m in ms], dtype=float)
        self.term = np.array([m.term_hours if m.term_hours is not None else math.nan for m in ms], dtype=float)
        self.providers = [m.provider for m in ms]
        pricing_ids, self.pricings = _ids([m.pricing for m in ms])
        self.pricing_id = np.array(pricing_ids, dtype=np.intp)
        self.block_rates_complete = np.array([m.block_rates_complete for m in ms], dtype=bool)
        self._offers: tuple[Any, ...] | None = None
        self._names: tuple[Any, int] | None = None
        self._rejected: tuple[Any, list[tuple[str, str, str]], Any] | None = None

    def name_ids(self) -> tuple[Any, int]:
        """Return each machine's number by (provider, instance type), as an array, and how many there are; built on
        first use (a machine's copies by pricing kind, interruption band or data move share one)."""
        if self._names is None:
            import numpy as np

            ids, names = _ids([(m.provider_name, m.instance_type) for m in self.machines])
            self._names = (np.array(ids, dtype=np.intp), len(names))
        return self._names

    def offer_arrays(self) -> tuple[Any, ...]:
        """Return every machine's offers in one run, as arrays: prices, block storage rates (0.0 where unknown),
        and each machine's first offer and count of offers; built on first use."""
        if self._offers is None:
            import numpy as np

            counts = np.array([len(m.prices) for m in self.machines], dtype=np.int64)
            total = int(counts.sum())
            prices = np.fromiter(itertools.chain.from_iterable(m.prices for m in self.machines), dtype=float,
                                 count=total)
            rates = np.fromiter(itertools.chain.from_iterable(m.block_rates if m.block_rates else (0.0,) * len(m.prices)
                                                              for m in self.machines), dtype=float, count=total)
            self._offers = (prices, rates, np.cumsum(counts) - counts, counts)
        return self._offers


    def rejected_ids(self) -> tuple[Any, list[tuple[str, str, str]], Any]:
        """Return how the ranking lists the machines it rejects, as arrays built on first use: each machine's group
        number, the groups ((provider, family, GPU)), and its place in the order of listing keys (GPUs, vCPUs, host
        memory, instance type; equal keys, equal places)."""
        if self._rejected is None:
            import numpy as np

            ids, groups = _ids([m.rejected_group for m in self.machines])
            keys = [m.listing_key for m in self.machines]
            place = {k: n for n, k in enumerate(sorted(set(keys)))}
            self._rejected = (np.array(ids, dtype=np.intp), groups,
                              np.array([place[k] for k in keys], dtype=np.intp))
        return self._rejected


class Judged:
    """A job's shapes as judge_arrays left them, in arrays over the shapes that passed the first checks.

    `at`: their positions in the table (and the shapes' list); over those, `ok` (no reason to reject),
    and each one's cost multiplier, block storage factor, egress, time metric and budget scale, as the
    shapes hold them: what candidates.collect_candidates reads to cost their offers at once.
    """

    def __init__(self, table: MachineTable, *, at: Any, ok: Any, cost_mult: Any, block_factor: Any, egress_usd: Any,
                 time_metric: Any, budget_scale: Any) -> None:
        self.table, self.at, self.ok = table, at, ok
        self.cost_mult, self.block_factor, self.egress_usd = cost_mult, block_factor, egress_usd
        self.time_metric, self.budget_scale = time_metric, budget_scale
        # Set by judge_in_arrays: every machine's reason as a code (judge_arrays.CODES), and over `at` whether
        # the run is on spot and its checked hours (NaN: late on its expected hours); what judge_arrays.fill_shape
        # sets on one shape.
        self.reject_codes: Any = None
        self.is_spot_run: Any = None
        self.checked_hours: Any = None
        self.at_list: list[int] = []
        self._fill: Any = None
