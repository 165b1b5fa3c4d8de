"""Image inputs whose host CPU cost the job does not state: what decoding and augmenting them would cost.

`dataset.preprocess_ms_per_sample` defaults to 0: no CPU time is counted for the loader, and the ranking's
CPU stretch (machine.iteration_ms_with_cpu) has nothing to stretch with. For a model that reads photographs
(3 x 224 x 224 for ImageNet) that is rarely true: a PyTorch DataLoader worker decodes each JPEG and crops,
resizes and flips it on a host core. The job is not changed (the images may be pre-decoded, or decoded on
the GPU); the requirements say what the common case would cost, with the figure measured here.

IMAGE_PIPELINE_MS: `python -m validation.measure.image_pipeline` (validation/image_pipeline.json, 2026-12-03)
timed NVIDIA DeepLearningExamples' PyTorch ResNet-50 loader path on one core of this machine (AMD EPYC,
family 25 model 1: Zen 3; PIL 13.0.0): decode and convert("RGB"), RandomResizedCrop(224) resized
bilinearly, flip, the uint8 CHW copy, on 48 synthetic 1/f-noise JPEGs of 0.25 megapixels and 129 kB on
average (ImageNet's mean file is 115 kB): 3.14-3.23 ms an image in two runs, decode alone 1.9-2.0 ms.
On the reference core's scale (machine.REFERENCE_CPU_SINGLE_THREAD_SCORE, 2,000), taking this core at the
catalog's Zen 3 score (catalog/cpu_scores.py, EPYC 7R13: 2,450, itself recalled): 3.2 x 2,450 / 2,000 =
3.9 ms. That is one image at a time on an idle machine: DeepLearningExamples' own full-machine tables
deliver about half that rate per worker (README, "Multi-GPU speed-up"), so treat it as a floor.
"""

from __future__ import annotations

from typing import NamedTuple

from workers.sizing.machine import REFERENCE_CPU_SINGLE_THREAD_SCORE
from workers.sizing.presets.detect import YOLO_NAMES
from workers.sizing.requirements import CodedWarning
from workers.sizing.spec import JobSpec
from workers.sizing.stats import ModelStats

IMAGE_PIPELINE_MS = 3.9  # per image on one reference core; see the module docstring
IMAGE_PIPELINE_SOURCE = "measured 2026-12-03, validation/image_pipeline.json"
MIN_IMAGE_SIDE = 96  # smaller inputs (MNIST, CIFAR) are usually held decoded in memory
# Small colour images held decoded in memory (CIFAR-10/100 through torchvision's CIFAR10 dataset) still pass
# a DataLoader worker's augmentation one sample at a time: Image.fromarray, RandomCrop(32, padding=4), flip,
# ToTensor, Normalize and the batch's collate. `python -m validation.measure.image_pipeline --cifar-only`
# timed that at 0.024-0.026 of the `dle` JPEG pipeline on one core (three runs, 2026-12-03, an Intel host
# whose single-thread score is not known, so the figure goes to the reference scale through that ratio):
# 0.025 x 3.9 ms = 0.10 ms. Python overhead per sample, not pixels: it hardly changes from 16 to 95 px.
SMALL_IMAGE_PIPELINE_MS = 0.1
# Ultralytics' YOLO loader (mosaic of four images, random affine, HSV, flip at 640 px; OpenCV, one thread):
# `python -m validation.measure.mosaic_pipeline` (validation/mosaic_pipeline.json, 2026-12-07) timed 17.3 ms a
# sample on one core of this machine (Zen 3; decoding the four JPEGs 11.0 of it), 17.3 x 2,450 / 2,000 = 21.2 ms
# on the reference scale, as IMAGE_PIPELINE_MS is taken there. Five times an ImageNet image's: four decodes.
MOSAIC_PIPELINE_MS = 21.2
MOSAIC_PIPELINE_SOURCE = "measured 2026-12-07, validation/mosaic_pipeline.json"
SMALL_IMAGE_MIN_SIDE = 16
IMAGE_CHANNELS = (1, 3, 4)
WARN_AT_CORES = 2.0  # below two reference cores per GPU any host keeps up; nothing to say


# Images this small are trained on a ResNet in the CIFAR layout (presets "resnetNN-cifar": a 3x3 stride-1 stem, no
# max-pool, as kuangliu/pytorch-cifar builds it); torchvision's ImageNet stem shrinks 32 px to 8 before the first stage.
CIFAR_SIDE = 64
TORCHVISION_RESNETS = frozenset(f"resnet{depth}" for depth in (18, 34, 50, 101, 152))


def imagenet_stem_warning(model: ModelStats) -> CodedWarning | None:
    """Return `imagenet-stem` where a torchvision ResNet is sized at CIFAR_SIDE pixels or fewer."""
    given = model.batch_input
    if model.name not in TORCHVISION_RESNETS or given is None or len(given.shape) != 3:
        return None
    _, height, width = given.shape
    if min(height, width) > CIFAR_SIDE:
        return None
    return CodedWarning("imagenet-stem", (
        f"{model.name} at {height} x {width} keeps torchvision's ImageNet stem (a 7x7 stride-2 convolution and a "
        f"max-pool): its first stage runs at {height // 4} x {width // 4}, about a sixteenth of the work of the "
        f"layout CIFAR recipes train (a 3x3 stride-1 stem, no max-pool; kuangliu/pytorch-cifar). If the run uses "
        f"that layout, say model.preset {model.name}-cifar."))


def image_input(model: ModelStats) -> tuple[int, int, int] | None:
    """Return the model's per-sample input as (channels, height, width) when it reads images of 96 px or more."""
    given = model.batch_input
    if given is None or len(given.shape) != 3:
        return None
    channels, height, width = given.shape
    if channels not in IMAGE_CHANNELS or min(height, width) < MIN_IMAGE_SIDE:
        return None
    return channels, height, width


def small_image_input(model: ModelStats) -> tuple[int, int, int] | None:
    """Return the model's per-sample input when it reads small colour images (3 channels, 16 to 95 px)."""
    given = model.batch_input
    if given is None or len(given.shape) != 3:
        return None
    channels, height, width = given.shape
    if channels != 3 or not SMALL_IMAGE_MIN_SIDE <= min(height, width) < MIN_IMAGE_SIDE:
        return None
    return channels, height, width


class Loader(NamedTuple):
    """The host loader an image model is assumed to run when its job states none: its cost a sample, the source, the
    words that describe it and what one sample is ("image", or "sample" for a mosaic of four)."""

    ms: float
    source: str
    words: str
    unit: str = "image"


def assumed_loader(model: ModelStats) -> Loader:
    """Return the loader a photograph model's job most likely runs: Ultralytics' mosaic for YOLO, else a JPEG one."""
    if model.name in YOLO_NAMES:
        return Loader(MOSAIC_PIPELINE_MS, MOSAIC_PIPELINE_SOURCE,
                      "fed through Ultralytics' YOLO loader (four JPEGs decoded for each mosaic, random affine, "
                      "HSV, flip)", "sample")
    return Loader(IMAGE_PIPELINE_MS, IMAGE_PIPELINE_SOURCE,
                  "JPEG files decoded and augmented in DataLoader workers (PIL: decode, random resized crop, flip)")


def image_preprocess_warning(job: JobSpec, model: ModelStats, *, gpu: str, iteration_ms: float,
                             gpu_count: int = 1) -> CodedWarning | None:
    """Return `image-preprocess-not-given` where an image model's loader cost is left out and would matter.

    Fires when the job gives no `preprocess_ms_per_sample`, the model reads images (image_input), and a
    JPEG pipeline at IMAGE_PIPELINE_MS would need WARN_AT_CORES reference cores or more per GPU at this
    GPU's pace (`iteration_ms` for one batch of `training.batch_size`; `gpu` its slug); for small colour
    images (small_image_input), the in-memory CIFAR recipe at SMALL_IMAGE_PIPELINE_MS.
    """
    dataset = job.dataset
    if dataset.preprocess_ms_per_sample > 0 or iteration_ms <= 0:
        return None
    small = small_image_input(model) is not None
    if not small and image_input(model) is None:
        return None
    rate = job.training.batch_size * 1000.0 / iteration_ms
    loader = assumed_loader(model)
    ms = SMALL_IMAGE_PIPELINE_MS if small else loader.ms
    cores = rate * ms / 1000.0
    if cores < WARN_AT_CORES:
        return None
    machine = f", {cores * gpu_count:,.0f} for {gpu_count} GPUs" if gpu_count > 1 else ""
    unit = "image" if small else loader.unit
    score = f"{REFERENCE_CPU_SINGLE_THREAD_SCORE:,.0f}"
    core = f"{ms} ms {'an' if unit == 'image' else 'a'} {unit} on one core of single-thread score {score}"
    need = f"at {rate:,.0f} images/s per {gpu} that is {cores:.1f} such cores per GPU{machine}"
    if small:
        return CodedWarning("image-preprocess-not-given", (
            f"dataset.preprocess_ms_per_sample is not given, so no host CPU time is counted for the images. Small "
            f"images held in memory and augmented one at a time in DataLoader workers, as torchvision's CIFAR "
            f"recipe does (RandomCrop with padding, flip, ToTensor, Normalize, then the batch's collate), cost "
            f"about {core} ({IMAGE_PIPELINE_SOURCE}, case cifar): {need}, beyond what DataLoader's default "
            f"(num_workers=0: the training process itself) gives. Give dataset.preprocess_ms_per_sample (gpugauge "
            f"probe --sample times your loader) and enough workers, or augment on the GPU."))
    return CodedWarning("image-preprocess-not-given", (
        f"dataset.preprocess_ms_per_sample is not given, so no host CPU time is counted for reading the "
        f"images. If they are {loader.words}, that costs about {core} ({loader.source}; one "
        f"{unit} at a time, so a floor): {need}. Give dataset.preprocess_ms_per_sample (gpugauge probe --sample "
        f"times your loader on one core) so that each machine's CPU is counted, or decode on the GPU (NVIDIA DALI) "
        f"or from pre-decoded data."))
