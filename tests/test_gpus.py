"""The GPU table: every agreed slug present, sane figures, and a loader that refuses bad rows."""

from __future__ import annotations

import copy
import json
import re
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
    # the everyday consumer cards people ask about, each read from a source, not recalled
    "rtx-2060", "rtx-2060-super", "rtx-2070", "rtx-2070-super", "rtx-2080", "rtx-2080-super",
    "rtx-3060", "rtx-3060-ti", "rtx-3070", "rtx-3070-ti", "rtx-3080-ti", "rtx-3090-ti",
    "rtx-4060", "rtx-4060-ti", "rtx-4060-ti-16gb", "rtx-4070", "rtx-4070-super", "rtx-4070-ti",
    "rtx-4070-ti-super", "rtx-4080-super", "rtx-5070", "rtx-5070-ti", "rtx-5080",
)
# Rows whose figures are still, in part, the catalog author's memory: each says so in its source. A row leaves
# this list when its source is read (the test below fails until it does), and no new row may join it.
STILL_RECALLED = frozenset({
    "rtx-6000-ada", "rtx-pro-6000", "v100-pcie-32gb", "t4g", "h100-nvl", "b200", "b300", "gb200",
})
# Rows of the first table (2026-11-29) that name a database or datasheet but not where it was read.
NO_ADDRESS = frozenset({
    "gtx-970", "gtx-980-ti", "titan-x-maxwell", "gtx-1050-ti", "gtx-1060-3gb", "gtx-1060-6gb", "gtx-1070",
    "gtx-1070-ti", "gtx-1080", "gtx-1080-ti", "titan-x-pascal", "titan-xp", "titan-v", "k80", "m60", "p4",
    "p100-16gb", "v100-16gb", "v100-32gb", "t4", "a10", "a10g", "l4", "l40s", "a100-40gb", "a100-80gb",
    "h100-sxm", "h100-pcie", "h200", "b300", "gb200", "h100-nvl", "l4-eighth", "l4-quarter", "l4-half",
})
GEFORCE_HALF_RATE = ("turing", "ampere", "ada", "blackwell")
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



def test_recalled_figures_are_labelled_and_only_on_the_listed_rows() -> None:
    recalled = {gpu.slug for gpu in load_gpus() if "recalled" in gpu.source}
    assert recalled == STILL_RECALLED


def _names_an_address(source: str) -> bool:
    """Return whether a source names where it was read: a repository at a commit, or a web address."""
    return bool(re.search(r"[\w.-]+/[\w.-]+@[0-9a-f]{7,40}|https?://|\b[\w-]+\.(?:com|org|net|se)\b", source))


def test_every_row_but_the_first_tables_names_where_its_figures_were_read() -> None:
    unaddressed = {gpu.slug for gpu in load_gpus() if not _names_an_address(gpu.source)}
    assert unaddressed == NO_ADDRESS


def test_a_read_row_quotes_its_memory_and_is_dated_no_later_than_the_table() -> None:
    version = _document()["version"]
    for gpu in load_gpus():
        assert gpu.source_date <= version, gpu.slug
        if gpu.segment == "consumer" and gpu.slug not in NO_ADDRESS:
            gib = gpu.memory_bytes // GIB
            assert f"{gib} GiB" in gpu.source or f"{gib} GB" in gpu.source, gpu.slug


def _geforce_rtx() -> list[Any]:
    return [g for g in load_gpus() if g.segment == "consumer" and g.architecture in GEFORCE_HALF_RATE
            and g.name.startswith("GeForce RTX")]


def test_geforce_tensor_rate_with_fp32_accumulate_follows_the_shader_rate() -> None:
    # Ampere, Ada and Blackwell GeForce: 512 FP32-accumulate tensor FLOPs per SM-clock vs 256 FP32 -> 2x;
    # Turing GeForce: 256 vs 64 per SM-clock -> 4x (NVIDIA's whitepaper tables: 3090 71 vs 35.6, 2080 Ti 53.8 vs 13.4)
    checked = 0
    for gpu in _geforce_rtx():
        ratio = 4.0 if gpu.architecture == "turing" else 2.0
        assert gpu.fp16_tflops == pytest.approx(ratio * gpu.fp32_tflops, rel=0.02), gpu.slug
        checked += 1
    assert checked >= 25


def test_bf16_matches_fp16_on_consumer_cards_that_have_it() -> None:
    for gpu in load_gpus():
        if gpu.segment == "consumer" and gpu.bf16_tflops > 0:
            assert gpu.bf16_tflops == gpu.fp16_tflops, gpu.slug


def test_each_generation_ranks_its_cards_by_tier() -> None:
    gpus = gpus_by_slug()
    for tiers in (
        ["rtx-2060", "rtx-2060-super", "rtx-2070", "rtx-2070-super", "rtx-2080", "rtx-2080-super", "rtx-2080-ti"],
        ["rtx-3060", "rtx-3060-ti", "rtx-3070", "rtx-3070-ti", "rtx-3080", "rtx-3080-ti", "rtx-3090", "rtx-3090-ti"],
        ["rtx-4060", "rtx-4060-ti", "rtx-4070", "rtx-4070-super", "rtx-4070-ti", "rtx-4070-ti-super", "rtx-4080",
         "rtx-4080-super", "rtx-4090"],
        ["rtx-5070", "rtx-5070-ti", "rtx-5080", "rtx-5090"],
    ):
        rates = [gpus[s].fp16_tflops for s in tiers]
        assert rates == sorted(rates), tiers
        assert len({gpus[s].architecture for s in tiers}) == 1, tiers


def test_the_two_4060_ti_differ_only_in_memory_and_price() -> None:
    gpus = gpus_by_slug()
    small, big = gpus["rtx-4060-ti"], gpus["rtx-4060-ti-16gb"]
    assert big.memory_bytes == 2 * small.memory_bytes == 16 * GIB
    assert (big.fp16_tflops, big.memory_bandwidth_gb_per_s, big.tdp_watts) == (
        small.fp16_tflops, small.memory_bandwidth_gb_per_s, small.tdp_watts)
    assert big.launch_price_usd is not None and small.launch_price_usd is not None
    assert big.launch_price_usd > small.launch_price_usd


def test_compute_capability_follows_the_architecture_of_consumer_rtx_cards() -> None:
    expected = {"turing": "7.5", "ampere": "8.6", "ada": "8.9", "blackwell": "12.0"}
    for gpu in _geforce_rtx():
        assert gpu.compute_capability == expected[gpu.architecture], gpu.slug
        assert gpu.pcie_gen == {"turing": 3, "ampere": 4, "ada": 4, "blackwell": 5}[gpu.architecture], gpu.slug
