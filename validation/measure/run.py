"""Regenerate the step measurements: `python -m validation.measure.run [--only ID-PART] [--no-onnx]`.

Measures every case of cases.py (two warm-up steps, then one step under the profiler and one under
the storage tracker), writes workers/accuracy/data/step_measurements.json (package data, beside the public records) and
validation/step_kept_bytes.json (bytes autograd keeps, per layer),
and exports the ONNX fixtures to tests/fixtures/onnx/. Needs the `measure` extra (torch 2.13.0).
Runs single-threaded so that CPU kernels pick the same paths on every machine; about 10 minutes.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import torch

from validation.measure.cases import CASES, NETS, SPECIAL, Case, build_trainer, family
from validation.measure.measure import StepMeasurement, measure
from validation.measure.onnx_fixtures import FIXTURES, VARIANTS, export_all

ROOT = Path(__file__).resolve().parents[2]
RECORDS = ROOT / "workers" / "accuracy" / "data" / "step_measurements.json"
KEPT = ROOT / "validation" / "step_kept_bytes.json"
METHOD = ("intrinsic peak of live tensor bytes over one training step after two warm-up steps: "
          "torch.profiler memory timeline (MemoryProfile, as export_memory_timeline), cross-checked by a "
          "TorchDispatchMode tracking live storages; foreach optimizers, zero_grad(set_to_none=True), "
          "dropout keeping a bool mask (native_dropout) as CUDA does; bf16 runs use CPU autocast")
VARIANT_NOTES = {
    "output-dropped": "the loop does not keep the logits in a local: loss = loss_fn(model(x), y)",
    "gelu-tanh-fused": "GELU as the fused F.gelu(approximate='tanh') instead of Hugging Face's gelu_new primitives",
    "sdpa": "attention by F.scaled_dot_product_attention (the CPU flash kernel: no scores kept)",
    "accumulate-2": "gradient accumulation: two forward and backward passes of the batch (micro-batches, each loss "
                    "halved), then one optimizer step; the second micro-batch runs beside the first's gradients",
    "fused": "the fused Adam/AdamW update (torch.optim.Adam/AdamW(fused=True)), not foreach: "
             "training.optimizer_implementation fused",
    "native-cell": "oneDNN off (torch.backends.mkldnn.flags(enabled=False)): the LSTM runs ATen's own cell, "
                   "not mkldnn_rnn with its workspace",
}

UNSEEN_NOTE = ("unseen: an architecture added after the step walk and the ONNX importer were built, to check "
               "that they generalise (issue 11); split holdout; unseen_set 1: its misses led to fixes, 2: "
               "measured after them; 3: Hugging Face decoders from their config.json, whose misses led to the "
               "composed-RMSNorm and K/V-repeat rows; 4: measured after those; 5: parallel-residual decoders "
               "(GPT-NeoX, Phi) from their config.json, measured before the core had their blocks; 6: layouts with no "
               "preset (an encoder-decoder, a diffusion U-Net, a one-stage detector) through ONNX, measured before "
               "any change to the core")


def _parameters(trainer: Any) -> tuple[int, int]:
    seen: set[int] = set()
    total = trainable = 0
    for module in trainer.modules:
        for p in module.parameters():
            if id(p) in seen:
                continue
            seen.add(id(p))
            total += p.numel()
            trainable += p.numel() if p.requires_grad else 0
    return total, trainable


def record(case: Case, m: StepMeasurement, parameters: tuple[int, int], today: str) -> dict[str, Any]:
    """Build one validation record from a measurement."""
    net = NETS.get(case.net)
    preset = SPECIAL.get(case.net) or (net.preset if net else None)
    rec: dict[str, Any] = {
        "id": case.id,
        "model": preset or case.net,
    }
    if net is not None and net.hf_config is not None:
        rec["hf_config"] = net.hf_config
    elif preset is None and net is not None:
        rec["stats"] = {"parameters": parameters[1], "multiply_adds": None, "neurons": None,
                        "derivation": f"counted from the PyTorch module: {net.description}"}
        rec["onnx"] = {label: f"tests/fixtures/onnx/{case.net}.{label}.onnx" for label, _t, _d in VARIANTS}
    kept_total = sum(v for k, v in m.kept_by_layer.items() if k != "weights")
    rec.update({
        "family": family(case),
        "variant": case.variant,
        "gpu": None,
        "device": "cpu",
        "gpu_count": 1,
        "batch_size": case.batch_size,
        "sequence_length": net.sequence_length if net else None,
        "input_shape": list(net.input_shape) if net and net.input_shape else None,
        "update_interval": case.update_interval,
        "recompute": False,
        "precision": case.precision,
        "optimizer": case.optimizer,
        **({"optimizer_implementation": "fused"} if case.variant == "fused" else {}),
        "framework": "pytorch",
        "measured": {
            "peak_memory_bytes": m.peak_bytes,
            "memory_kind": "intrinsic_live_tensors",
            "peak_phase": m.peak_phase,
            "phase_peak_bytes": m.phase_peaks,
            "peak_by_category": m.by_category,
            "tracker_peak_bytes": m.tracker_peak_bytes,
            "tracker_peak_phase": m.tracker_peak_phase,
            "kept_bytes": kept_total,
            "parameters": parameters[0],
            "trainable_parameters": parameters[1],
        },
        "method": METHOD,
        "source": f"measured here, torch {torch.__version__} CPU, {today}",
        "quote": "python -m validation.measure.run (validation/measure/)",
        "source_date": today,
        "notes": UNSEEN_NOTE if net is not None and net.unseen else VARIANT_NOTES.get(case.variant, ""),
        "split": "holdout" if net is not None and net.unseen else "fit",
    })
    if net is not None and net.unseen:
        rec["unseen_set"] = net.unseen
    if net is not None and net.loss_kind != "cross_entropy":
        rec["loss"] = net.loss_kind
    if m.attention_kernels:  # the kernel the step's scaled_dot_product_attention ran: the spec's training.attention
        rec["attention"] = m.attention_kernels[0] if len(m.attention_kernels) == 1 else "math"
    return rec


def main(argv: list[str] | None = None) -> int:
    """Measure the cases (all, or those whose id contains --only) and write the records."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--only", default="",
                        help="measure only cases whose id contains this (or one of these, comma-separated)")
    parser.add_argument("--no-onnx", action="store_true", help="do not re-export the ONNX fixtures")
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    torch.set_num_threads(1)
    today = dt.date.today().isoformat()
    old = {r["id"]: r for r in json.loads(RECORDS.read_text())} if RECORDS.exists() else {}
    old_kept = json.loads(KEPT.read_text()) if KEPT.exists() else {}
    if not args.no_onnx:
        nets = None if not args.only else {c.net for c in CASES if _selected(c, args.only)}
        export_all(nets)
        print(f"ONNX fixtures written to {FIXTURES}")
    records, kept = dict(old), dict(old_kept)
    failed = 0
    for case in CASES:
        if args.only and not _selected(case, args.only):
            continue
        start = time.perf_counter()
        try:
            trainer = build_trainer(case)
            m = measure(trainer)
        except RuntimeError as error:  # one case's failure must not lose the others' records
            print(f"{case.id}: FAILED: {str(error).splitlines()[0]}", flush=True)
            failed += 1
            continue
        records[case.id] = record(case, m, _parameters(trainer), today)
        kept[case.id] = dict(sorted(m.kept_by_layer.items(), key=lambda kv: -kv[1]))
        gap = m.tracker_peak_bytes / m.peak_bytes - 1
        print(f"{case.id:55s} {m.peak_bytes / 2**20:9.1f} MiB {m.peak_phase:15s} tracker {gap:+.1%} "
              f"{time.perf_counter() - start:5.1f} s", flush=True)
        del trainer
        _write(records, kept)
    return 1 if failed else 0


def _selected(case: Case, only: str) -> bool:
    """Say whether a case's id contains one of the comma-separated parts of --only."""
    return any(part and part in case.id for part in only.split(","))


def _write(records: dict[str, Any], kept: dict[str, Any]) -> None:
    """Write the records of the current cases, in case order (after every case: a crash keeps them)."""
    order = {c.id: i for i, c in enumerate(CASES)}
    rows = sorted((r for r in records.values() if r["id"] in order), key=lambda r: order[r["id"]])
    RECORDS.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    KEPT.write_text(json.dumps({k: kept[k] for k in order if k in kept}, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
