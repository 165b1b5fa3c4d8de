"""The rules of thumb of domain.md sections 2-6 as named thresholds; warnings and advice quote them."""

from __future__ import annotations

from catalog.units import GIB
from workers.sizing.spec import Framework

# domain.md §2: "bytes = neurons x batch x 2 (data and gradient) x 4 + parameters x 2 x 4".
BASELINE_COPIES = 2
BASELINE_BYTES_PER_VALUE = 4
# Our own threshold: say the baseline understates when the realistic peak is this many times larger.
BASELINE_UNDERSTATES_RATIO = 1.2

# domain.md §4: "an iteration under about 10 ms, or a whole run under about 10 minutes".
SHORT_ITERATION_MS = 10.0
SHORT_RUN_MINUTES = 10.0
# domain.md §4: "each layer's forward or backward under about 0.1 ms, with a huge number of layers".
# "Huge" is ours: at least TINY_LAYERS_MIN_COUNT layers; "each" we read as 90% of them that short (a
# ResNet-50 at batch 128 on an A100 has half its layers under 0.1 ms yet is not launch-bound).
TINY_LAYER_MS = 0.1
TINY_LAYERS_MIN_COUNT = 50
TINY_LAYERS_MIN_SHARE = 0.9
# The rule's "GPU gains little" is about launch overhead (§4's first case too): short layers whose launches
# the iteration's own timing shows as a small share are short because the GPU is fast, and it still does
# the work. Ours: the warning needs launches to be at least this share of the iteration (ViT-B/16 at batch
# 128 on a B200: 116 of 128 layers under 0.1 ms, launches 5% of 23.6 ms; ResNet-18 on CIFAR on a T4: 37%).
TINY_LAYERS_MIN_OVERHEAD_SHARE = 0.25
# domain.md §4: "multiply-adds at most about 10x the parameter count ... multi-GPU helps little".
PARAMETER_EXCHANGE_RATIO = 10.0

# domain.md §4: multi-GPU speed-up on 4 GPUs by framework, from the survey the notes cite:
# PyTorch about 3.6-3.8x (we take 3.7), TensorFlow 2-3x (2.5), "close to linear for one framework"
# (we read it as CNTK, 3.9x). JAX is not in the survey: we treat it like PyTorch (both all-reduce
# gradients with NCCL as the backward pass runs).
SPEEDUP_ON_4_GPUS: dict[Framework, float] = {
    Framework.PYTORCH: 3.7,
    Framework.TENSORFLOW: 2.5,
    Framework.JAX: 3.7,
    Framework.CNTK: 3.9,
}

# domain.md §6: "Under 4 GB is only for toys; 3 GB cards are not recommended"; the 1050 Ti (4 GB)
# is "for play". We flag cards of 4 GiB and less, and say "not recommended" at 3 GiB and less.
SMALL_GPU_MEMORY_BYTES = 4 * GIB
NOT_RECOMMENDED_GPU_MEMORY_BYTES = 3 * GIB
# domain.md §6 tiers: 6-8 GB for an individual's work, 32-64 GB for company research.
INDIVIDUAL_TIER_BYTES = 8 * GIB
RESEARCH_TIER_BYTES = 32 * GIB
# Sharding (ZeRO-2) is only worth naming where it saves at least this share of a GPU's peak [rule of
# thumb: a fifth]; ResNet-50 on 8 GPUs would save 3% (7.3 -> 7.1 GiB), no reason to change strategy.
SHARDING_WORTH_SHARE = 0.2

# domain.md §6: "Older architectures are slow or unsupported by cuDNN" (cuDNN 9 dropped Kepler and
# Maxwell; current PyTorch wheels no longer ship their kernels).
OLD_ARCHITECTURES = frozenset({"kepler", "maxwell"})
# CNTK's last release, 2.7 (MicrosoftDocs/cognitive-toolkit-docs articles/ReleaseNotes/CNTK_2_7_Release_Notes.md,
# ms.date 2019-04-01: "Today's 2.7 release will be the last main release of CNTK"), is built on CUDA 10
# (microsoft/CNTK Documentation/current_iteration.md: "Moved to CUDA 10 for both Windows and Linux"), and
# Ampere and later GPUs need CUDA 11 or newer (discuss.pytorch.org/t/120235/6, a PyTorch maintainer: "Ampere
# GPUs need CUDA>=11.0"; cuDNN's support matrix): CNTK cannot use these architectures.
CUDA11_ARCHITECTURES = frozenset({"ampere", "ada", "hopper", "blackwell"})
TENSOR_CORE_ARCHITECTURES = frozenset({"volta", "turing", "ampere", "ada", "hopper", "blackwell"})
BF16_ARCHITECTURES = frozenset({"ampere", "ada", "hopper", "blackwell"})
# FP8 tensor cores: Ada (sm89), Hopper (sm90) and Blackwell (sm100/sm120); NVIDIA's Ada, Hopper and Blackwell
# architecture papers (recalled, not re-read) give their dense FP8 rate at twice the dense FP16 one, on every card.
FP8_ARCHITECTURES = frozenset({"ada", "hopper", "blackwell"})
FP8_TO_FP16_TENSOR_RATE = 2.0
# domain.md §6: "Top-end cards pay off only on large networks". Ours: a card of at least this dense
# fp16 tensor rate is top-end, and it is wasted when launch overhead is half of its iteration.
TOP_END_FP16_TFLOPS = 300.0
TOP_END_WASTED_OVERHEAD_SHARE = 0.5

# domain.md §6: "Storage: at least 3 to 4 times the data size."
STORAGE_MIN_FACTOR = 3
STORAGE_MAX_FACTOR = 4
# Ours: the model's own files (a checkpoint, a fine-tune's base weights) are worth a warning from this
# size, when they also outgrow the data's storage (advice.model_storage_warning); below it any disk holds them.
MODEL_STORAGE_WARN_BYTES = 10 * 10**9

# domain.md §6: "an old CPU can halve what a new GPU delivers"; we warn as soon as the CPU, not the
# GPU, sets the pace.
CPU_BOUND_RATIO = 1.0

# domain.md §7: "a grid over at most about 3 parameters ... random search beyond that".
GRID_SEARCH_MAX_PARAMETERS = 3
