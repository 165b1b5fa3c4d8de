"""How old a catalog's cloud prices are: the oldest dated price overall and per provider.

A catalog is as fresh as its oldest price, not its newest: after a refresh of one provider the other's rows
keep their own dates. A price whose source gives no date (`as_of` None) makes the oldest date unknown:
reported as UNKNOWN, a string, because the public contract types `prices_as_of` as one.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import date
from typing import Protocol

from catalog.types import Offer, Provider

CLOUD_PROVIDERS = (Provider.AWS, Provider.GCP)
UNKNOWN = "unknown"  # prices_as_of when a price's source carries no date (the price rows say None)
STALE_AFTER_DAYS = 90  # default age past which an answer warns that its prices may have moved


class Dated(Protocol):
    """A price with its provider and date: an Offer, or a catalog.payload.PriceDate read without the rest."""

    @property
    def provider(self) -> Provider:
        """Who sells it."""

    @property
    def as_of(self) -> str | None:
        """The ISO date its source says it was true, or None."""


def _oldest(dates: list[str | None]) -> str:
    known = [d for d in dates if d is not None and d != UNKNOWN]
    if not known or len(known) < len(dates):
        return UNKNOWN
    return min(known, key=lambda d: d[:10])


def prices_as_of_by_provider(offers: Iterable[Dated]) -> tuple[tuple[str, str], ...]:
    """Return (provider, oldest as_of) for each cloud provider with offers; UNKNOWN where any is undated."""
    dates: dict[Provider, list[str | None]] = {}
    for offer in offers:
        if offer.provider in CLOUD_PROVIDERS:
            dates.setdefault(offer.provider, []).append(offer.as_of)
    return tuple((p.value, _oldest(dates[p])) for p in CLOUD_PROVIDERS if p in dates)


def oldest_price_date(offers: Iterable[Dated]) -> str:
    """Return the oldest cloud price's as_of, or UNKNOWN when any cloud price is undated (or there is none)."""
    by_provider = prices_as_of_by_provider(offers)
    return _oldest([d for _, d in by_provider])


def undated_sources(offers: Iterable[Offer]) -> tuple[str, ...]:
    """Return the sources of cloud prices that carry no date, sorted (each names its catalog commit)."""
    return tuple(sorted({o.source for o in offers if o.provider in CLOUD_PROVIDERS and o.as_of is None}))


def _one_per_file(sources: Sequence[str]) -> list[str]:
    """Return the first source of each file they name ("repo@commit path"): a provider's list and spot
    prices come from one file, and the answer names every file, not two sources of one."""
    seen: dict[str, str] = {}
    for source in sources:
        words = source.split()
        file = next((f"{w} {words[i + 1]}" for i, w in enumerate(words[:-1]) if "@" in w), source)
        seen.setdefault(file, source)
    return list(seen.values())


# The warnings about the catalog's prices rather than the job: every answer on the same catalog carries the same.
PRICE_WARNING_CODES = frozenset({"undated-prices", "stale-prices"})


def freshness_warnings(
    *, prices_as_of: str, undated: Sequence[str], today: date | None, stale_after_days: int
) -> tuple[tuple[str, str], ...]:
    """Return (code, message) warnings for an answer built on these prices: undated, or older than allowed.

    `undated`: the sources of the undated prices (undated_sources), named in the warning.
    """
    warnings: list[tuple[str, str]] = []
    if prices_as_of == UNKNOWN:
        named = "; ".join(_one_per_file(undated))
        warnings.append(
            (
                "undated-prices",
                f"some of the catalog's prices carry no date: their source names a catalog commit, not the day "
                f"the prices were true ({named}); each option's price_as_of says whether its own price is dated; "
                f"refresh or import the catalog for dated prices",
            )
        )
    elif today is not None:
        age_days = (today - date.fromisoformat(prices_as_of[:10])).days if len(prices_as_of) >= 10 else 0
        if age_days > stale_after_days:
            warnings.append(
                (
                    "stale-prices",
                    f"the oldest price in the catalog is from {prices_as_of[:10]}, {age_days} days ago (more than "
                    f"{stale_after_days}): prices may have changed; refresh or import the catalog",
                )
            )
    return tuple(warnings)


def prices_dated_words(prices_as_of: str) -> str:
    """Return how a catalog's prices are dated, for a title: "prices as of 2026-07-30" (the oldest), or where some
    carry no date "prices partly undated (each option says its own date)", never "as of unknown"."""
    if prices_as_of == UNKNOWN:
        return "prices partly undated (each option says its own date)"
    return f"prices as of {prices_as_of}"

