"""docs/extending.md stays true of the code: every file it names exists, every list it says derives does."""

from __future__ import annotations

import re
from pathlib import Path

from catalog.providers import PROVIDER_NAMES, PROVIDERS
from catalog.types import Provider
from workers.schemas.results import MemoryBreakdownSchema
from workers.sizing.requirements import MEMORY_TERMS, MemoryBreakdown

ROOT = Path(__file__).resolve().parent.parent
DOC = (ROOT / "docs" / "extending.md").read_text(encoding="utf-8")
EXAMPLES = ("azure", "presets", "test_catalog_azure", "test_api_presets")  # the doc's made-up names


def test_every_existing_file_the_doc_names_is_there() -> None:
    named = set(re.findall(r"`((?:catalog|workers|service|tests|docs)/[\w/.-]+\.(?:py|md))`", DOC))
    missing = sorted(p for p in named if not (ROOT / p).exists() and not any(x in p for x in EXAMPLES))
    assert named and missing == []


def test_every_provider_list_derives_from_the_registry() -> None:
    from workers.schemas.spec import ConstraintsSchema
    from workers.sizing.spec import Constraints

    assert set(PROVIDER_NAMES) == {p.value for p in Provider} == set(PROVIDERS)
    # The default is the providers that rent machines; buying cards ("onprem") is asked for (issue 13).
    renting = tuple(name for name, entry in PROVIDERS.items() if entry.rents)
    assert Constraints().providers == renting
    assert ConstraintsSchema().load({})["providers"] == list(renting)


def test_the_breakdown_schema_follows_the_memory_terms() -> None:
    breakdown = MemoryBreakdown(*range(1, len(MEMORY_TERMS) + 1))
    dumped = MemoryBreakdownSchema().dump(breakdown)
    assert list(dumped) == list(MEMORY_TERMS) and sum(dumped.values()) == breakdown.total_bytes
