"""`gpugauge probe BUILDER --input-shape ...`: measure a few training steps of your own PyTorch model.

Needs PyTorch (`pip install 'gpugauge[probe]'`, or your own torch). Prints the Profile phases (data
loading, forward, loss, backward, update), the intrinsic peak of live tensor bytes and what each
layer keeps for backward; `--spec FILE` writes a job spec whose `training.measured_memory` carries
the measured tensor memory (and, on a GPU named with `--gpu`, `training.profile` the measured
iteration time), which the estimator then scales to every GPU. `--sample FUNCTION` times the user's own
loading of one sample on one core (service/probe/loader_time.py) and writes it as the spec's
`dataset.preprocess_ms_per_sample`.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import yaml
from rich.table import Table

from service.commands.common import console as make_console
from service.commands.common import fail, shape_parts
from workers.render import fmt_bytes

TOP_LAYERS = 15


def _shape(text: str) -> tuple[int, ...]:
    try:
        dims = tuple(int(d) for d in shape_parts(text) if d)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: give sizes like 3,224,224") from None
    if not dims or any(d < 1 for d in dims):
        raise argparse.ArgumentTypeError(f"{text!r}: sizes must be positive, like 3,224,224")
    return dims


def register(subparsers: Any) -> None:
    """Add the `probe` subcommand."""
    p = subparsers.add_parser("probe", help="measure a few training steps of your PyTorch model (needs torch)")
    p.add_argument("builder", help="the function that builds your model: module:function or file.py:function")
    p.add_argument("--input-shape", type=_shape, required=True, help="one sample's shape, e.g. 3,224,224")
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--steps", type=int, default=3, help="measured steps after two warm-up steps")
    p.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N")
    p.add_argument("--optimizer", default="adam", choices=("sgd", "momentum", "adam", "adamw", "rmsprop"))
    p.add_argument("--optimizer-impl", default="foreach", choices=("foreach", "per_tensor", "fused"),
                   help="how your code runs the update: foreach (torch.optim's CUDA default), fused (fused=True; the "
                        "HF Trainer's default on torch 2.8 and later) or per_tensor (foreach=False); written to the "
                        "spec as training.optimizer_implementation")
    p.add_argument("--precision", default="fp32", choices=("fp32", "fp16-mixed", "bf16-mixed"))
    p.add_argument("--vocab", type=int, help="the input is token ids below this (a language model)")
    p.add_argument("--gpu", help="the catalog slug of the GPU you ran on (for the spec's time profile)")
    p.add_argument("--spec", help="write a job spec (JSON or YAML by suffix) calibrated by this run")
    p.add_argument("--sample", metavar="FUNCTION", help="your function that loads and pre-processes one training "
                   "sample given its index (module:function or file.py:function): timed on one core, it gives "
                   "the spec's dataset.preprocess_ms_per_sample")
    p.add_argument("--sample-count", type=int, default=32, metavar="N", help="samples to time (default 32)")
    p.add_argument("--json", action="store_true", help="print the measurement as JSON")
    p.set_defaults(func=run)


def spec_from_probe(result: Any, *, precision: str, optimizer: str, gpu: str | None,
                    preprocess_ms: float | None = None, optimizer_implementation: str = "foreach") -> dict[str, Any]:
    """Return a job spec with the model's totals, the measured memory, (on a named GPU) its time and (with
    --sample) one sample's pre-processing on the reference core."""
    training: dict[str, Any] = {
        "batch_size": result.batch_size, "precision": precision, "optimizer": optimizer,
        "measured_memory": {"tensor_memory_bytes": result.peak_bytes, "batch_size": result.batch_size},
    }
    if optimizer_implementation != "foreach":  # the spec's default stays unsaid
        training["optimizer_implementation"] = optimizer_implementation
    if gpu and result.device.startswith("cuda"):
        training["profile"] = {"gpu": gpu, "iteration_ms": round(result.iteration_ms, 3)}
    spec: dict[str, Any] = {
        "model": {"stats": {"neurons": max(1, result.neurons), "parameters": result.parameters,
                            "multiply_adds": result.multiply_adds}},
        "training": training,
    }
    if preprocess_ms is not None:
        spec["dataset"] = {"preprocess_ms_per_sample": round(preprocess_ms, 4)}
    return spec


def run(args: argparse.Namespace) -> int:
    """Measure the model and print (or write) what was measured."""
    if args.batch_size < 1 or args.steps < 1:
        return fail("--batch-size and --steps must be at least 1")
    if args.vocab is not None and args.vocab < 1:
        return fail("--vocab must be at least 1")
    if args.sample_count < 1:
        return fail("--sample-count must be at least 1")
    if args.optimizer == "rmsprop" and args.optimizer_impl == "fused":  # the probe would measure foreach
        return fail("--optimizer-impl fused: torch has no fused RMSprop kernel to measure; use foreach or per_tensor")
    try:
        from service.probe.run import ProbeError, load_callable, probe
    except ModuleNotFoundError as exc:
        return fail(f"gpugauge probe needs PyTorch ({exc.name} is not installed): pip install 'gpugauge[probe]'")
    try:
        result = probe(load_callable(args.builder), input_shape=args.input_shape, batch_size=args.batch_size,
                       steps=args.steps, device=args.device, optimizer=args.optimizer,
                       precision=args.precision, token_vocab=args.vocab,
                       optimizer_implementation=args.optimizer_impl)
    except ProbeError as exc:
        return fail(str(exc))
    loading = None
    if args.sample:
        from service.probe.loader_time import LoaderError, time_samples
        try:
            loading = time_samples(load_callable(args.sample), samples=args.sample_count)  # type: ignore[arg-type]
        except (ProbeError, LoaderError) as exc:
            return fail(str(exc))
    if args.spec:
        spec = spec_from_probe(result, precision=args.precision, optimizer=args.optimizer, gpu=args.gpu,
                               preprocess_ms=loading.ms_reference if loading is not None else None,
                               optimizer_implementation=args.optimizer_impl)
        path = Path(args.spec)
        text = json.dumps(spec, indent=2) if path.suffix == ".json" else yaml.safe_dump(spec, sort_keys=False)
        path.write_text(text + ("\n" if path.suffix == ".json" else ""), encoding="utf-8")
    if args.json:
        print(json.dumps({**result.__dict__, "kept_by_layer": dict(result.kept_by_layer),
                          **({"loading": loading.__dict__} if loading is not None else {})}, indent=2))
        return 0
    _print(result, spec=args.spec, loading=loading)
    return 0


def _print(result: Any, *, spec: str | None, loading: Any = None) -> None:
    """Print the phase times, the peak and the layers that keep the most."""
    console = make_console()
    phases = Table(title=f"{result.steps} measured step(s) on {result.device}, batch {result.batch_size}")
    phases.add_column("phase")
    phases.add_column("ms", justify="right")
    for name, ms in result.phase_ms.items():
        phases.add_row(name, f"{ms:.2f}")
    phases.add_row("iteration", f"{result.iteration_ms:.2f}")
    console.print(phases)
    console.print(f"intrinsic peak of live tensors: {fmt_bytes(result.peak_bytes)} (in {result.peak_phase})")
    if result.cuda_max_allocated_bytes is not None:
        console.print(f"torch.cuda.max_memory_allocated: {fmt_bytes(result.cuda_max_allocated_bytes)}")
    console.print(f"trainable parameters {result.parameters:,}, frozen {result.frozen_parameters:,}; per sample "
                  f"{result.neurons:,} output values, {result.multiply_adds:,} multiply-adds")
    layers = Table(title="kept for backward, by layer (whole batch)")
    layers.add_column("layer")
    layers.add_column("kept", justify="right")
    for name, kept in result.kept_by_layer[:TOP_LAYERS]:
        layers.add_row(name or "(model)", fmt_bytes(kept))
    console.print(layers)
    if loading is not None:
        from service.probe.loader_time import describe
        console.print(describe(loading))
    if spec:
        console.print(f"wrote {spec}: size it with `gpugauge estimate {spec}`")
