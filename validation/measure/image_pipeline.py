"""Measure the host CPU an ImageNet-style training input pipeline costs: `python -m validation.measure.image_pipeline`.

`--cifar-only` adds the `cifar` case (below) to the existing record, timed beside `dle` on the host it runs on.

What a PyTorch loader worker does for one training image, timed on one core of this machine, one image at a
time (a worker is one process; DataLoader parallelism is across workers, not inside one):

- `dle`: NVIDIA DeepLearningExamples' ResNet-50 loader with `data_backend: pytorch` (what its scaling tables
  ran): PIL decode and convert("RGB") (torchvision's pil_loader), RandomResizedCrop(224) (torchvision's
  algorithm: scale 0.08-1, ratio 3/4-4/3, ten tries, then the central crop) resized bilinearly by PIL,
  RandomHorizontalFlip, and the uint8 HWC -> CHW copy of its fast_collate; normalisation runs on the GPU.
- `reference`: the PyTorch ImageNet example's transform (the same crop and flip, then ToTensor's float
  division and Normalize on the CPU).
- `decode`: PIL decode and convert alone.
- `cifar`: torchvision's CIFAR-10 recipe on 32 x 32 images held decoded in memory, as its `CIFAR10` dataset
  holds them: `Image.fromarray`, RandomCrop(32, padding=4) (torchvision pads a PIL image with
  `ImageOps.expand`, then crops), RandomHorizontalFlip, ToTensor, Normalize (which builds its mean and std
  tensors on every call), and the DataLoader's default_collate of a batch of 128 (torch.stack), per image.

The images are synthetic and seeded: 1/f ("natural image") noise in three channels at ImageNet's common
shapes, JPEG-encoded by PIL at the quality whose mean size is nearest ImageNet's mean file size
(146.9 GB / 1,281,167 images = 114.7 kB, the figures of examples/resnet50-imagenet.json). They stand in
for real photographs, which are not on this machine; decode time follows pixels and compressed bytes.

Writes validation/image_pipeline.json. tests/test_image_pipeline.py reads it; workers/sizing/machine.py's
IMAGE_PIPELINE_MS quotes it on the reference core's scale. Needs the `measure` extra (torch 2.13.0, CPU).
"""

from __future__ import annotations

import datetime as dt
import io
import json
import math
import os
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch
from PIL import Image

from service.probe.loader_time import host_cpu_model

OUT = Path(__file__).resolve().parents[2] / "validation" / "image_pipeline.json"
IMAGENET_MEAN_BYTES = 146_900_000_000 / 1_281_167
# (width, height) of the generated photographs: landscape and portrait 4:3 and 3:2 at 500 px on the long
# side, the size most ILSVRC-2012 images were stored at [recalled, not re-read], plus larger ones so that
# the corpus's mean file size can reach ImageNet's.
SHAPES: tuple[tuple[int, int], ...] = ((500, 375), (375, 500), (500, 333), (500, 400), (640, 480), (800, 600))
IMAGES_PER_SHAPE = 8
SIZE = 224
MEAN = np.array([0.485, 0.456, 0.406], dtype=np.float32).reshape(3, 1, 1)
STD = np.array([0.229, 0.224, 0.225], dtype=np.float32).reshape(3, 1, 1)


def natural_image(width: int, height: int, rng: np.random.Generator) -> np.ndarray:
    """Return an 8-bit RGB array of 1/f noise (amplitude falling as 1/frequency, as in photographs)."""
    fy = np.fft.fftfreq(height)[:, None]
    fx = np.fft.rfftfreq(width)[None, :]
    f = np.sqrt(fx * fx + fy * fy)
    f[0, 0] = 1.0
    channels = []
    base = rng.standard_normal((height, width // 2 + 1)) + 1j * rng.standard_normal((height, width // 2 + 1))
    for _ in range(3):  # correlated colour channels, as in photographs
        own = rng.standard_normal(base.shape) + 1j * rng.standard_normal(base.shape)
        spectrum = (base + 0.5 * own) / f
        spectrum[0, 0] = 0.0
        img = np.fft.irfft2(spectrum, s=(height, width))
        img = (img - img.mean()) / (img.std() + 1e-9)
        channels.append(img)
    arr = np.stack(channels, axis=-1) * 48.0 + 128.0
    return np.clip(arr, 0, 255).astype(np.uint8)


def _corpus(quality: int, seed: int = 0) -> list[bytes]:
    rng = np.random.default_rng(seed)
    out = []
    for w, h in SHAPES:
        for _ in range(IMAGES_PER_SHAPE):
            buf = io.BytesIO()
            Image.fromarray(natural_image(w, h, rng)).save(buf, format="JPEG", quality=quality)
            out.append(buf.getvalue())
    return out


def _crop_box(width: int, height: int, rng: random.Random) -> tuple[int, int, int, int]:
    """torchvision's RandomResizedCrop.get_params: (left, top, w, h)."""
    area = width * height
    log_ratio = (math.log(3 / 4), math.log(4 / 3))
    for _ in range(10):
        target = area * rng.uniform(0.08, 1.0)
        ratio = math.exp(rng.uniform(*log_ratio))
        w = round(math.sqrt(target * ratio))
        h = round(math.sqrt(target / ratio))
        if 0 < w <= width and 0 < h <= height:
            return rng.randint(0, width - w), rng.randint(0, height - h), w, h
    in_ratio = width / height
    if in_ratio < 3 / 4:
        w, h = width, round(width / (3 / 4))
    elif in_ratio > 4 / 3:
        h, w = height, round(height * (4 / 3))
    else:
        w, h = width, height
    return (width - w) // 2, (height - h) // 2, w, h


def _augmented(data: bytes, rng: random.Random) -> Image.Image:
    img = Image.open(io.BytesIO(data)).convert("RGB")
    left, top, w, h = _crop_box(img.width, img.height, rng)
    img = img.resize((SIZE, SIZE), Image.Resampling.BILINEAR, box=(left, top, left + w, top + h))
    if rng.random() < 0.5:
        img = img.transpose(Image.Transpose.FLIP_LEFT_RIGHT)
    return img


def _dle(data: bytes, rng: random.Random) -> Any:
    arr = np.asarray(_augmented(data, rng), dtype=np.uint8)
    return torch.from_numpy(np.ascontiguousarray(np.rollaxis(arr, 2)))  # fast_collate's CHW uint8 copy


def _reference(data: bytes, rng: random.Random) -> Any:
    arr = np.array(_augmented(data, rng), dtype=np.uint8)  # ToTensor copies the image's bytes too
    t = torch.from_numpy(arr).permute(2, 0, 1).contiguous().float().div_(255.0)  # ToTensor
    return t.sub_(torch.from_numpy(MEAN)).div_(torch.from_numpy(STD))  # Normalize


def _decode(data: bytes, rng: random.Random) -> Any:
    return Image.open(io.BytesIO(data)).convert("RGB")


CIFAR_MEAN = (0.4914, 0.4822, 0.4465)  # the usual CIFAR-10 normalisation constants
CIFAR_STD = (0.2470, 0.2435, 0.2616)
CIFAR_BATCH = 128


def _cifar_sample(arr: np.ndarray, rng: random.Random) -> Any:
    """One training sample as torchvision's CIFAR10 dataset and the standard transform make it."""
    from PIL import ImageOps

    img = Image.fromarray(arr)  # CIFAR10.__getitem__
    img = ImageOps.expand(img, border=4, fill=0)  # RandomCrop(32, padding=4): pad, then crop
    top, left = rng.randint(0, 8), rng.randint(0, 8)
    img = img.crop((left, top, left + 32, top + 32))
    if rng.random() < 0.5:  # RandomHorizontalFlip
        img = img.transpose(Image.Transpose.FLIP_LEFT_RIGHT)
    t = torch.from_numpy(np.array(img, np.uint8, copy=True)).view(32, 32, 3).permute(2, 0, 1).contiguous()
    t = t.to(dtype=torch.float32).div(255)  # ToTensor
    mean = torch.as_tensor(CIFAR_MEAN, dtype=t.dtype)  # Normalize (functional.normalize, not in place)
    std = torch.as_tensor(CIFAR_STD, dtype=t.dtype)
    if (std == 0).any():
        raise ValueError("std has a zero")
    return t.clone().sub_(mean.view(-1, 1, 1)).div_(std.view(-1, 1, 1))


def _cifar_ms(rounds: int) -> list[float]:
    """Return per-image milliseconds of the CIFAR recipe with its batch's collate, one mean per round."""
    rng_np = np.random.default_rng(1)
    images = [natural_image(32, 32, rng_np) for _ in range(CIFAR_BATCH)]
    rng = random.Random(0)
    for arr in images[:8]:
        _cifar_sample(arr, rng)  # warm-up
    out = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(4):  # four batches a round
            batch = [(_cifar_sample(arr, rng), label) for label, arr in enumerate(images)]
            torch.stack([x for x, _ in batch]), torch.tensor([y for _, y in batch])  # default_collate
        out.append((time.perf_counter() - t0) * 1000.0 / (4 * CIFAR_BATCH))
    return out


def time_ms_per_image(fn: Callable[[bytes, random.Random], Any], corpus: list[bytes], rounds: int) -> list[float]:
    """Return per-image milliseconds, one median per round over the whole corpus."""
    rng = random.Random(0)
    for data in corpus[:8]:
        fn(data, rng)  # warm-up
    medians = []
    for _ in range(rounds):
        times = []
        for data in corpus:
            t0 = time.perf_counter()
            fn(data, rng)
            times.append((time.perf_counter() - t0) * 1000.0)
        medians.append(statistics.fmean(times))
    return medians


def _host() -> dict[str, Any]:
    return {"cpu_model": host_cpu_model(), "machine": platform.machine(), "cpus": os.cpu_count(),
            "python": sys.version.split()[0], "torch": torch.__version__,
            "pillow": Image.__version__ if hasattr(Image, "__version__") else "unknown", "numpy": np.__version__}


def cifar_only(rounds: int = 7) -> int:
    """Time the CIFAR recipe beside `dle` on this host and add it to the record, the other cases kept.

    The CIFAR figure is put on the reference core's scale through `dle` timed in the same run: a host
    whose single-thread score is not known still gives the ratio of the two pipelines.
    """
    torch.set_num_threads(1)
    record = json.loads(OUT.read_text())
    dle = statistics.median(time_ms_per_image(_dle, _corpus(record["corpus"]["jpeg_quality"]), rounds))
    runs = _cifar_ms(rounds)
    cifar = statistics.median(runs)
    record["cases"]["cifar"] = {
        "ms_per_image": round(cifar, 4), "rounds_ms": [round(r, 4) for r in runs], "input": [3, 32, 32],
        "batch": CIFAR_BATCH, "dle_ms_per_image_same_host": round(dle, 3), "ratio_to_dle": round(cifar / dle, 4),
        "measured_at": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d"), "host": _host(),
        "method": ("one process, one thread; per round four batches of 128 in-memory 32 x 32 images through the "
                   f"recipe and default_collate, the mean per image; {rounds} rounds, the median reported; `dle` "
                   "re-timed in the same run on the same host"),
    }
    OUT.write_text(json.dumps(record, indent=1) + "\n")
    print(f"cifar {cifar:.4f} ms/image, dle {dle:.3f} ms/image on this host: ratio {cifar / dle:.4f}; wrote {OUT}")
    return 0


def main(argv: list[str] | None = None) -> int:
    if argv is None:
        argv = sys.argv[1:]
    if argv == ["--cifar-only"]:
        return cifar_only()
    rounds = 7
    torch.set_num_threads(1)
    qualities = {q: _corpus(q) for q in (75, 85, 90, 95)}
    quality = min(qualities, key=lambda q: abs(statistics.fmean(map(len, qualities[q])) - IMAGENET_MEAN_BYTES))
    corpus = qualities[quality]
    pixels = statistics.fmean(w * h for w, h in SHAPES)
    cases: dict[str, Any] = {}
    for name, fn in (("decode", _decode), ("dle", _dle), ("reference", _reference)):
        runs = time_ms_per_image(fn, corpus, rounds)
        cases[name] = {"ms_per_image": round(statistics.median(runs), 3),
                       "rounds_ms": [round(r, 3) for r in runs]}
        print(f"{name:10s} {statistics.median(runs):6.2f} ms/image (rounds {min(runs):.2f}-{max(runs):.2f})")
    runs = _cifar_ms(rounds)
    cases["cifar"] = {"ms_per_image": round(statistics.median(runs), 4), "rounds_ms": [round(r, 4) for r in runs],
                      "input": [3, 32, 32], "batch": CIFAR_BATCH}
    print(f"{'cifar':10s} {statistics.median(runs):6.3f} ms/image (rounds {min(runs):.3f}-{max(runs):.3f})")
    record = {
        "method": ("one process, one thread (torch.set_num_threads(1)); each case's per-image mean over the "
                   f"{len(corpus)}-image corpus, {rounds} rounds, the median round reported; the corpus's "
                   "JPEGs held in memory (no disk read)"),
        "measured_at": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d"),
        "host": _host(),
        "corpus": {"images": len(corpus), "shapes": [list(s) for s in SHAPES], "jpeg_quality": quality,
                   "mean_bytes": round(statistics.fmean(map(len, corpus))),
                   "imagenet_mean_bytes": round(IMAGENET_MEAN_BYTES),
                   "mean_megapixels": round(pixels / 1e6, 4),
                   "mean_bytes_by_quality": {str(q): round(statistics.fmean(map(len, c)))
                                             for q, c in qualities.items()}},
        "cases": cases,
    }
    OUT.write_text(json.dumps(record, indent=1) + "\n")
    print(f"corpus: quality {quality}, mean {record['corpus']['mean_bytes']:,} bytes "
          f"(ImageNet {round(IMAGENET_MEAN_BYTES):,}); wrote {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
