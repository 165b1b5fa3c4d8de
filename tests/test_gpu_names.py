"""GPU names as people write them, matched to the catalog's slugs (catalog/gpu_names.py)."""

from __future__ import annotations

import pytest
from marshmallow import ValidationError

from catalog.gpu_names import AmbiguousGpuName, canonical_gpu, gpu_name_matches, gpu_name_suggestions
from catalog.gpus import gpu_slugs, load_gpus
from workers.schemas import JobSpecSchema
from workers.sizing.errors import UnknownNameError
from workers.sizing.estimate import resolve_gpus

SLUGS = gpu_slugs()


@pytest.mark.parametrize(("written", "slugs"), [
    ("GTX 1080 Ti", ("gtx-1080-ti",)),
    ("1080ti", ("gtx-1080-ti",)),
    ("GeForce RTX 3060 Ti", ("rtx-3060-ti",)),
    ("4090", ("rtx-4090",)),
    ("RTX4090", ("rtx-4090",)),
    ("A6000", ("rtx-a6000",)),
    ("Tesla T4", ("t4",)),
    ("NVIDIA A10G", ("a10g",)),
    ("A100 80GB", ("a100-80gb",)),
    ("A100-SXM4-80GB", ("a100-80gb",)),
    ("A100 80GB PCIe", ("a100-pcie-80gb",)),
    ("V100 16GB SXM2", ("v100-16gb",)),
    ("H100 SXM5", ("h100-sxm",)),
    ("Titan X (Pascal)", ("titan-x-pascal",)),
    ("t4s", ("t4",)),
    ("l40s", ("l40s",)),  # a slug ending in s is itself, not the plural of l40
    ("RTX 3060 12GB", ("rtx-3060",)),  # a size the slug does not carry, checked against the card's
])
def test_a_gpu_written_as_people_write_it_is_its_slug(written: str, slugs: tuple[str, ...]) -> None:
    assert gpu_name_matches(written, SLUGS) == slugs


@pytest.mark.parametrize(("family", "members"), [
    ("a100", ("a100-40gb", "a100-80gb", "a100-pcie-40gb", "a100-pcie-80gb")),
    ("V100", ("v100-16gb", "v100-32gb", "v100-pcie-16gb", "v100-pcie-32gb")),
    ("h100", ("h100-sxm", "h100-pcie", "h100-nvl")),
    ("H100 80GB", ("h100-sxm", "h100-pcie")),  # the size given keeps the members of that size
    ("gtx 1060", ("gtx-1060-3gb", "gtx-1060-6gb")),
    ("titan x", ("titan-x-maxwell", "titan-x-pascal")),
])
def test_a_family_name_is_each_member_that_differs_only_in_memory_form_or_generation(
        family: str, members: tuple[str, ...]) -> None:
    assert gpu_name_matches(family, SLUGS) == members


@pytest.mark.parametrize("word", ["gtx", "rtx", "a1000", "foo", "", "rtx 6000", "v100 61gb",
                                  "RTX 3080 12GB"])  # a size said must be the card's: the catalog's 3080 has 10
def test_a_word_that_is_no_gpu_or_only_a_series_matches_nothing(word: str) -> None:
    # "gtx" is not the GTX 1060 family: a member's slug must continue with variant words only
    assert gpu_name_matches(word, SLUGS) == ()


def test_every_gpu_is_found_by_its_slug_in_any_case_or_spacing_and_by_its_display_name() -> None:
    for gpu in load_gpus():
        for written in (gpu.slug, gpu.slug.upper(), gpu.slug.replace("-", " "), gpu.slug.replace("-", ""), gpu.name):
            assert gpu_name_matches(written, SLUGS) == (gpu.slug,), written


def test_one_gpu_wanted_refuses_a_family_and_keeps_an_unknown_name_for_the_caller() -> None:
    assert canonical_gpu("RTX 4090", SLUGS) == "rtx-4090"
    assert canonical_gpu("rtx-9090", SLUGS) == "rtx-9090"
    with pytest.raises(AmbiguousGpuName, match=r"'v100' names 4 GPUs \(v100-16gb, .*\): name one"):
        canonical_gpu("v100", SLUGS)


def test_estimate_resolves_each_name_once_and_names_the_unknown_ones_place() -> None:
    known = {gpu.slug: gpu for gpu in load_gpus()}
    resolved = resolve_gpus(["1080 ti", "h100", "h100-sxm"], known)
    assert [gpu.slug for gpu in resolved] == ["gtx-1080-ti", "h100-sxm", "h100-pcie", "h100-nvl"]
    with pytest.raises(UnknownNameError) as caught:
        resolve_gpus(["t4", "rtx-9090"], known, field="--gpu")
    assert caught.value.field == "--gpu[1]"


def test_the_spec_loads_owned_cards_as_slugs_and_refuses_a_family_naming_the_field() -> None:
    spec = {"model": {"preset": "resnet50"}, "training": {"batch_size": 64},
            "constraints": {"owned_gpus": [{"gpu": "GTX 1080 Ti", "count": 2}]}}
    assert JobSpecSchema().load(spec)["constraints"]["owned_gpus"][0]["gpu"] == "gtx-1080-ti"
    spec["constraints"]["owned_gpus"][0]["gpu"] = "a100"
    with pytest.raises(ValidationError) as caught:
        JobSpecSchema().load(spec)
    [message] = caught.value.messages["constraints"]["owned_gpus"][0]["gpu"]  # type: ignore[index]
    assert message.startswith("'a100' names 4 GPUs")


@pytest.mark.parametrize(("written", "first"), [
    ("RTX 4090 Ti", "rtx-4090"),  # no such card: the card the name starts with
    ("H100 PCIe 40GB", "h100-pcie"),  # only the size is wrong: the card of that name
    ("gtx-1080-tii", "gtx-1080-ti"),
    ("RTX 6000", "rtx-a6000"),  # case does not count (the raw string found nothing)
])
def test_a_name_that_matches_nothing_gets_the_closest_slugs(written: str, first: str) -> None:
    assert gpu_name_matches(written, SLUGS) == ()
    assert gpu_name_suggestions(written, SLUGS)[0] == first


def test_the_v100s_is_its_own_card_not_a_plural() -> None:
    assert gpu_name_matches("v100s", SLUGS) == ()
    assert gpu_name_matches("a100s", SLUGS) == gpu_name_matches("a100", SLUGS)


def test_all_in_an_estimate_list_is_every_gpu_once() -> None:
    known = {gpu.slug: gpu for gpu in load_gpus()}
    assert sorted(gpu.slug for gpu in resolve_gpus(["t4", "ALL"], known)) == sorted(known)


def test_a_memory_size_alone_is_every_card_of_that_memory_and_an_unknown_size_suggests_its_neighbours() -> None:
    # "on a single 24gb gpu", --gpu 24gb, constraints.gpus ["24gb"]: the cards a person with a 24 GB budget means
    cards = gpu_name_matches("24gb", SLUGS)
    assert {"rtx-3090", "rtx-4090", "a10g", "l4"} <= set(cards)
    assert all(round(g.memory_bytes / 2**30) == 24 for g in load_gpus() if g.slug in cards)
    assert gpu_name_matches("24 GB", SLUGS) == cards and gpu_name_matches("80gb", SLUGS)
    assert gpu_name_matches("20gb", SLUGS) == ()
    assert gpu_name_suggestions("20gb", SLUGS) == ("16gb", "24gb")
    assert gpu_name_matches("a100 80gb", SLUGS) == ("a100-80gb",)  # a card's own size still names the card
