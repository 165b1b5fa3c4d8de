"""A city or a country said in a slash command is the cloud regions there, told back; a continent its pattern."""

from __future__ import annotations

import pytest

from catalog.types import Catalog
from tests.recommending import recommend_spec
from tests.test_slack_phrases import parse


@pytest.mark.parametrize(("text", "regions"), [
    ("fine-tune bert on 100k samples in frankfurt", ["eu-central-1", "europe-west3"]),  # was "unknown word"
    ("bert in tokyo", ["ap-northeast-1", "asia-northeast1"]),
    ("bert in sao paulo", ["sa-east-1", "southamerica-east1"]),  # two words
    ("bert in germany", ["eu-central-1", "europe-west3", "europe-west10"]),
    ("bert in europe", ["eu-*", "europe-*"]),  # a continent: the pattern, as before
])
def test_a_place_is_the_regions_there(text: str, regions: list[str]) -> None:
    command = parse(text)
    assert command.spec["constraints"]["regions"] == regions
    told = [d for d in command.defaults_used if "the regions there" in d]
    assert told == ([] if "*" in regions[0] else [told[0]]) and all(r in "".join(told) for r in regions if "*" not in r)


def test_a_place_ranks_only_machines_there(shipped: Catalog) -> None:
    spec = parse("fine-tune bert base on 100k samples in frankfurt").spec
    rec = recommend_spec(spec, shipped)
    assert rec.options and {o.region for o in rec.options} <= {"eu-central-1", "europe-west3"}
