"""What every provider fetcher returns, the progress callback it reports to, and the errors it raises."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from catalog.types import InstanceType, Offer, Provider

# progress(message, done, total): called before each step, and once more with done == total at the end
Progress = Callable[[str, int, int], None]


def no_progress(message: str, done: int, total: int) -> None:
    """Ignore progress reports."""


class FetchError(RuntimeError):
    """A fetch failed as a whole (not one region): nothing it read should be used."""


class CredentialsError(FetchError):
    """The provider SDK found no credentials; the message says in one line how to provide them."""


@dataclass(frozen=True)
class FetchResult:
    """One provider's instance shapes and prices as read now, with everything that went wrong on the way."""

    provider: Provider
    instances: tuple[InstanceType, ...]
    offers: tuple[Offer, ...]
    regions: tuple[str, ...]  # the regions asked for
    as_of: str  # ISO date of the read
    failed_regions: tuple[tuple[str, str], ...] = ()  # (region, reason): that region's old rows are kept
    problems: tuple[str, ...] = field(default=())  # unknown GPU names, missing prices, skipped shapes

    @property
    def fetched_regions(self) -> tuple[str, ...]:
        """Return the regions that were read successfully."""
        failed = {r for r, _ in self.failed_regions}
        return tuple(r for r in self.regions if r not in failed)


def median_price(prices: Iterable[float]) -> float | None:
    """Return the median of positive prices, or None when there is none."""
    values = [p for p in prices if p > 0]
    return float(statistics.median(values)) if values else None


def one_line(exc: BaseException) -> str:
    """Render an exception as one short line for a report."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 200 else text[:197] + "..."
