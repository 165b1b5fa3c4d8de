"""Measure the host CPU Ultralytics' YOLO loader costs a sample: `python -m validation.measure.mosaic_pipeline`.

What one Ultralytics DataLoader worker does for one training sample at imgsz 640 with its default hyperparameters
(ultralytics/cfg/default.yaml: mosaic 1.0, mixup 0, translate 0.1, scale 0.5, degrees/shear/perspective 0,
hsv_h/s/v 0.015/0.7/0.4, fliplr 0.5; ultralytics/data/augment.py and base.py, read in public copies 2026-12-07),
written here from that description with OpenCV, as Ultralytics does, one thread (it sets cv2.setNumThreads(0)):

- four images decoded (cv2.imdecode of the JPEG bytes; Ultralytics' imread reads the file the same way) and each
  resized so that its long side is 640 (cv2.resize, INTER_LINEAR: the loader augments);
- the 2 x 2 mosaic: a 1280 x 1280 canvas of grey 114, the four placed around a random centre;
- the random affine (scale 0.5-1.5, translate 0.1) warped back to 640 x 640 (cv2.warpAffine, linear, grey border);
- the HSV jitter (cvtColor to HSV, one lookup table a channel, back to BGR) and a horizontal flip half the time;
- the HWC BGR -> CHW RGB contiguous copy and torch.from_numpy, and the batch's collate (torch.stack of 16).
Labels (a few boxes a sample) are left out: numpy work on tens of values.

`decode` times the four decodes alone. The images are the seeded 1/f-noise JPEGs of image_pipeline.py at COCO's
common shapes (640 x 480 and its kin), encoded at the quality whose mean file is nearest COCO train2017's mean
(18.0 GB / 118,287 images, 152 kB; cocodataset.org's download page gives the archive as 18GB). Writes
validation/mosaic_pipeline.json; tests/test_detectors.py reads it and workers/sizing/image_input.py quotes it.
Needs the `measure` extra (torch 2.13.0, CPU; opencv-python-headless).
"""

from __future__ import annotations

import datetime as dt
import json
import random
import statistics
import sys
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import torch

from validation.measure.image_pipeline import _host, natural_image, time_ms_per_image

OUT = Path(__file__).resolve().parents[2] / "validation" / "mosaic_pipeline.json"
COCO_MEAN_BYTES = 18.0e9 / 118_287
SHAPES = ((640, 480), (480, 640), (640, 427), (427, 640), (640, 360), (612, 612))
IMAGES_PER_SHAPE = 8
IMAGE = 640
BATCH = 16  # Ultralytics' default.yaml batch
GREY = 114


def _corpus(quality: int, seed: int = 0) -> list[bytes]:
    rng = np.random.default_rng(seed)
    out = []
    for w, h in SHAPES:
        for _ in range(IMAGES_PER_SHAPE):
            ok, buf = cv2.imencode(".jpg", natural_image(w, h, rng), [cv2.IMWRITE_JPEG_QUALITY, quality])
            assert ok
            out.append(buf.tobytes())
    return out


def _load(data: bytes) -> np.ndarray:
    img = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    h, w = img.shape[:2]
    r = IMAGE / max(h, w)
    if r != 1:
        img = cv2.resize(img, (min(round(w * r), IMAGE), min(round(h * r), IMAGE)), interpolation=cv2.INTER_LINEAR)
    return img


def _mosaic(images: list[np.ndarray], rng: random.Random) -> np.ndarray:
    s = IMAGE
    yc, xc = (int(rng.uniform(s // 2, 3 * s // 2)) for _ in range(2))
    canvas = np.full((2 * s, 2 * s, 3), GREY, dtype=np.uint8)
    for i, img in enumerate(images):
        h, w = img.shape[:2]
        x1 = max(xc - w, 0) if i in (0, 2) else xc
        y1 = max(yc - h, 0) if i in (0, 1) else yc
        x2 = xc if i in (0, 2) else min(xc + w, 2 * s)
        y2 = yc if i in (0, 1) else min(yc + h, 2 * s)
        sx = w - (x2 - x1) if i in (0, 2) else 0
        sy = h - (y2 - y1) if i in (0, 1) else 0
        canvas[y1:y2, x1:x2] = img[sy:sy + (y2 - y1), sx:sx + (x2 - x1)]
    return canvas


def _affine(canvas: np.ndarray, rng: random.Random) -> np.ndarray:
    scale = rng.uniform(0.5, 1.5)
    m = np.array([[scale, 0, 0], [0, scale, 0]], dtype=np.float64)
    m[:, 2] = -np.array([canvas.shape[1] / 2, canvas.shape[0] / 2]) * scale  # centre, then translate
    m[0, 2] += rng.uniform(0.4, 0.6) * IMAGE
    m[1, 2] += rng.uniform(0.4, 0.6) * IMAGE
    return cv2.warpAffine(canvas, m, dsize=(IMAGE, IMAGE), borderValue=(GREY, GREY, GREY))


def _hsv_flip(img: np.ndarray, rng: random.Random) -> np.ndarray:
    gains = [rng.uniform(-1, 1) * g + 1 for g in (0.015, 0.7, 0.4)]
    hue, sat, val = cv2.split(cv2.cvtColor(img, cv2.COLOR_BGR2HSV))
    x = np.arange(0, 256, dtype=np.int16)
    luts = (((x * gains[0]) % 180).astype(np.uint8), np.clip(x * gains[1], 0, 255).astype(np.uint8),
            np.clip(x * gains[2], 0, 255).astype(np.uint8))
    hsv = cv2.merge((cv2.LUT(hue, luts[0]), cv2.LUT(sat, luts[1]), cv2.LUT(val, luts[2])))
    img = cv2.cvtColor(hsv, cv2.COLOR_HSV2BGR)
    return np.fliplr(img) if rng.random() < 0.5 else img


def _sample(corpus: list[bytes], data: bytes, rng: random.Random) -> Any:
    images = [_load(data), *(_load(corpus[rng.randrange(len(corpus))]) for _ in range(3))]
    img = _hsv_flip(_affine(_mosaic(images, rng), rng), rng)
    return torch.from_numpy(np.ascontiguousarray(img.transpose(2, 0, 1)[::-1]))


def _decode_four(corpus: list[bytes], data: bytes, rng: random.Random) -> Any:
    return [cv2.imdecode(np.frombuffer(d, np.uint8), cv2.IMREAD_COLOR)
            for d in (data, *(corpus[rng.randrange(len(corpus))] for _ in range(3)))]


def _collate_ms(corpus: list[bytes], rounds: int) -> list[float]:
    rng = random.Random(1)
    batch = [_sample(corpus, corpus[i], rng) for i in range(BATCH)]
    return [min(time_ms_per_image(lambda _d, _r: torch.stack(batch), corpus[:1], 1)) / BATCH for _ in range(rounds)]


def main(argv: list[str] | None = None) -> int:
    del argv
    rounds = 7
    torch.set_num_threads(1)
    cv2.setNumThreads(0)
    qualities = {q: _corpus(q) for q in (75, 85, 90, 95)}
    quality = min(qualities, key=lambda q: abs(statistics.fmean(map(len, qualities[q])) - COCO_MEAN_BYTES))
    corpus = qualities[quality]
    cases: dict[str, Any] = {}
    for name, fn in (("decode", _decode_four), ("mosaic", _sample)):
        runs = time_ms_per_image(lambda data, rng, fn=fn: fn(corpus, data, rng), corpus, rounds)
        cases[name] = {"ms_per_sample": round(statistics.median(runs), 3), "rounds_ms": [round(r, 3) for r in runs]}
        print(f"{name:8s} {statistics.median(runs):6.2f} ms/sample (rounds {min(runs):.2f}-{max(runs):.2f})")
    collate = _collate_ms(corpus, rounds)
    cases["collate"] = {"ms_per_sample": round(statistics.median(collate), 4), "batch": BATCH}
    record = {
        "method": ("one process, one thread (torch.set_num_threads(1), cv2.setNumThreads(0)); each case's per-sample "
                   f"mean over the {len(corpus)}-image corpus (each sample reads its image and three drawn at "
                   f"random), {rounds} rounds, the median round reported; the JPEGs held in memory (no disk read)"),
        "measured_at": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d"),
        "host": {**_host(), "opencv": cv2.__version__},
        "corpus": {"images": len(corpus), "shapes": [list(s) for s in SHAPES], "jpeg_quality": quality,
                   "mean_bytes": round(statistics.fmean(map(len, corpus))), "coco_mean_bytes": round(COCO_MEAN_BYTES)},
        "cases": cases,
    }
    OUT.write_text(json.dumps(record, indent=1) + "\n")
    print(f"corpus: quality {quality}, mean {record['corpus']['mean_bytes']:,} bytes "
          f"(COCO {round(COCO_MEAN_BYTES):,}); wrote {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
