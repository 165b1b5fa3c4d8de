"""The GPU table: every agreed slug present, sane figures, and a loader that refuses bad rows."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from catalog.gpus import (
    ARCHITECTURES,
    GPUS_PATH,
    GpuDataError,
    gpu_slugs,
    gpus_by_slug,
    load_gpus,
    parse_gpus,
)

AGREED_SLUGS = (
    "gtx-970", "gtx-980-ti", "titan-x-maxwell", "gtx-1050-ti", "gtx-1060-3gb", "gtx-1060-6gb",
    "gtx-1070", "gtx-1070-ti", "gtx-1080", "gtx-1080-ti", "titan-x-pascal", "titan-xp", "titan-v",
    "rtx-2080-ti", "rtx-3090", "rtx-4090", "k80", "m60", "p4", "p100-16gb", "v100-16gb", "v100-32gb",
    "t4", "a10", "a10g", "l4", "l40s", "a100-40gb", "a100-80gb", "h100-sxm", "h100-pcie", "h200",
    "b200",
    # issue 14: the GPUs the clouds and buyers offer that the table lacked
    "rtx-3080", "rtx-4080", "rtx-5090", "titan-rtx", "rtx-a6000", "rtx-6000-ada", "rtx-pro-6000", "k40",
    "t4g", "a40", "l40", "a100-pcie-40gb", "a100-pcie-80gb", "v100-pcie-16gb", "v100-pcie-32gb", "h100-nvl",
    "b300", "gb200", "l4-eighth", "l4-quarter", "l4-half",
)
GIB = 2**30


def _document() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(GPUS_PATH.read_text(encoding="utf-8"))
    return loaded


def test_table_holds_exactly_the_agreed_slugs() -> None:
    assert sorted(gpu_slugs()) == sorted(AGREED_SLUGS)


def test_every_row_names_a_source_and_an_iso_date() -> None:
    for gpu in load_gpus():
        assert len(gpu.source) > 10, gpu.slug
        assert gpu.source_date[:2] == "20" and len(gpu.source_date) == 10, gpu.slug


def test_memory_sizes_match_the_names() -> None:
    gpus = gpus_by_slug()
    assert gpus["gtx-1060-3gb"].memory_bytes == 3 * GIB
    assert gpus["gtx-1060-6gb"].memory_bytes == 6 * GIB
    assert gpus["v100-32gb"].memory_bytes == 2 * gpus["v100-16gb"].memory_bytes
    assert gpus["a100-80gb"].memory_bytes == 2 * gpus["a100-40gb"].memory_bytes
    assert gpus["k80"].memory_bytes == 12 * GIB  # one GK210 die, as the clouds count it


def test_bf16_exists_from_ampere_on_and_not_before() -> None:
    modern = set(ARCHITECTURES[ARCHITECTURES.index("ampere"):])
    for gpu in load_gpus():
        assert (gpu.bf16_tflops > 0) == (gpu.architecture in modern), gpu.slug


def test_tensor_cards_have_fp16_far_above_fp32_and_consumer_pascal_far_below() -> None:
    for gpu in load_gpus():
        if gpu.architecture in ("volta", "turing", "ampere", "ada", "hopper", "blackwell"):
            assert gpu.fp16_tflops >= 1.9 * gpu.fp32_tflops, gpu.slug
        if gpu.compute_capability == "6.1":
            assert gpu.fp16_tflops < gpu.fp32_tflops / 32, gpu.slug


def test_newer_flagships_are_faster_and_wider() -> None:
    gpus = gpus_by_slug()
    order = ["gtx-1080-ti", "v100-16gb", "a100-80gb", "h100-sxm", "b200"]
    bandwidths = [gpus[s].memory_bandwidth_gb_per_s for s in order]
    assert bandwidths == sorted(bandwidths)


def test_consumer_cards_carry_a_launch_price_and_datacenter_cards_none() -> None:
    for gpu in load_gpus():
        if gpu.segment == "datacenter":
            assert gpu.launch_price_usd is None, gpu.slug
        else:
            assert gpu.launch_price_usd is not None and gpu.launch_price_usd > 0, gpu.slug


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("memory_bytes", -1, "positive"),
        ("fp32_tflops", 0, "positive"),
        ("bf16_tflops", -0.5, "0 or more"),
        ("architecture", "fermi", "architecture"),
        ("memory_bytes", True, "wrong type"),
        ("fp16_tflops", "65", "wrong type"),
        ("source_date", "yesterday", "ISO date"),
        ("slug", "GTX 1080", "slug"),
        ("segment", "mining", "segment"),
        ("pcie_gen", 9, "PCIe"),
    ],
)
def test_loader_rejects_a_bad_value_naming_row_and_field(field: str, value: object, message: str) -> None:
    document = _document()
    document["gpus"][3][field] = value
    with pytest.raises(GpuDataError, match=message) as caught:
        parse_gpus(document)
    assert "gpus[3]" in str(caught.value)


def test_loader_rejects_duplicate_slugs() -> None:
    document = _document()
    document["gpus"].append(copy.deepcopy(document["gpus"][0]))
    with pytest.raises(GpuDataError, match="duplicate slug"):
        parse_gpus(document)


def test_loader_rejects_missing_and_unknown_fields() -> None:
    document = _document()
    del document["gpus"][0]["tdp_watts"]
    with pytest.raises(GpuDataError, match="tdp_watts"):
        parse_gpus(document)
    document = _document()
    document["gpus"][0]["tflops"] = 1.0
    with pytest.raises(GpuDataError, match="unknown fields"):
        parse_gpus(document)


def test_loader_fails_loudly_on_an_unreadable_file(tmp_path: Path) -> None:
    broken = tmp_path / "gpus.json"
    broken.write_text("{not json")
    with pytest.raises(GpuDataError, match="cannot read"):
        load_gpus(broken)


def test_b200_fp32_is_nvidias_hgx_figure_per_gpu() -> None:
    b200 = gpus_by_slug()["b200"]
    assert b200.fp32_tflops == 600 / 8 and "HGX B200" in b200.source

