"""Measure the host memory a PyTorch DataLoader's workers hold: `python -m validation.measure.loader_memory`.

For each case a DataLoader (map-style dataset, default `prefetch_factor` 2, workers forked) serves a few
batches and is then left idle for a moment so that every worker fills its prefetch queue. Measured from
/proc: the shared memory the batches occupy (/dev/shm use, where PyTorch's collate puts each batch it hands
to the main process) and each worker's unique memory (USS: Private_Clean + Private_Dirty of
/proc/PID/smaps_rollup; the libraries it shares with the main process count there, not here). Writes
validation/loader_memory.json, which tests/test_loader_memory.py compares with workers/sizing/machine.py.
Needs the `measure` extra (torch 2.13.0, the CPU build; a GPU run adds the main process's pinned copy).
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import torch
from torch.utils.data import DataLoader, Dataset

OUT = Path(__file__).resolve().parents[2] / "validation" / "loader_memory.json"
METHOD = ("torch.utils.data.DataLoader, map-style dataset returning one float32 (or int64) tensor and an int "
          "label per sample, default collate, prefetch_factor 2, persistent fork workers, pin_memory off; "
          "4 batches taken, then 3 s idle; shared memory = /dev/shm use above the start, with the main "
          "process still holding the last batch; worker memory = median USS (Private_Clean + Private_Dirty "
          "of /proc/PID/smaps_rollup) of the workers")
# (id, workers, batch, per-sample shape, dtype)
CASES: tuple[tuple[str, int, int, tuple[int, ...], str], ...] = (
    ("image224-b128-w1", 1, 128, (3, 224, 224), "float32"),
    ("image224-b128-w2", 2, 128, (3, 224, 224), "float32"),
    ("image224-b128-w4", 4, 128, (3, 224, 224), "float32"),
    ("image224-b32-w2", 2, 32, (3, 224, 224), "float32"),
    ("image224-b32-w4", 4, 32, (3, 224, 224), "float32"),
    ("image32-b128-w2", 2, 128, (3, 32, 32), "float32"),
    ("tokens2048-b8-w2", 2, 8, (2048,), "int64"),
)


class _Samples(Dataset[Any]):
    def __init__(self, shape: tuple[int, ...], dtype: str) -> None:
        self.shape, self.dtype = shape, dtype

    def __len__(self) -> int:
        return 1_000_000

    def __getitem__(self, i: int) -> tuple[torch.Tensor, int]:
        if self.dtype == "int64":
            return torch.randint(0, 32000, self.shape), i % 1000
        return torch.randn(self.shape), i % 1000


def _smaps_kib(pid: int, keys: tuple[str, ...]) -> int:
    total = 0
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            if line.startswith(keys):
                total += int(line.split()[1])
    return total


def _shm_bytes() -> int:
    st = os.statvfs("/dev/shm")
    return (st.f_blocks - st.f_bfree) * st.f_frsize


def _children(pid: int) -> list[int]:
    kids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    if f.read().rsplit(")", 1)[1].split()[1] == str(pid):
                        kids.append(int(entry))
            except OSError:
                continue
    return kids


def measure_case(workers: int, batch: int, shape: tuple[int, ...], dtype: str) -> dict[str, Any]:
    """Return one case's measured shared memory and worker USS, in bytes."""
    start = _shm_bytes()
    loader = DataLoader(_Samples(shape, dtype), batch_size=batch, num_workers=workers, prefetch_factor=2,
                        persistent_workers=True, multiprocessing_context="fork")
    batches = iter(loader)
    held = None
    for _ in range(4):
        held = next(batches)
    time.sleep(3.0)
    uss = [_smaps_kib(pid, ("Private_Clean:", "Private_Dirty:")) * 1024 for pid in _children(os.getpid())]
    shared = _shm_bytes() - start
    del held, batches, loader
    return {"shared_memory_bytes": shared, "worker_uss_bytes_median": int(statistics.median(uss)),
            "workers_seen": len(uss)}


def main() -> int:
    torch.set_num_threads(1)
    records = []
    for case_id, workers, batch, shape, dtype in CASES:
        item = 8 if dtype == "int64" else 4
        batch_bytes = batch * item * math.prod(shape) + batch * 8  # + the labels (int64)
        got = measure_case(workers, batch, shape, dtype)
        records.append({"id": case_id, "workers": workers, "batch_size": batch, "sample_shape": list(shape),
                        "dtype": dtype, "batch_bytes": batch_bytes, **got})
        print(case_id, got, flush=True)
    OUT.write_text(json.dumps({
        "method": METHOD, "torch": torch.__version__, "python": platform.python_version(),
        "measured_on": dt.date.today().isoformat(), "machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
        "records": records}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
