"""A deadline said in words: a duration ("within 2 days", "in 36 hours", "within a week"), a time of day ("by
tomorrow", "overnight") or a weekday ("by friday": until the end of that day, UTC, from the clock when the command is
read), each made the hours `deadline=` takes (catalog.units.parse_duration_hours)."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from catalog.units import parse_duration_hours

# A deadline said as a time of day: "by tomorrow" is a day from now, "overnight" twelve hours.
RELATIVE_DEADLINES = {"tomorrow": 24, "overnight": 12}
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
UNTIL = frozenset({"by", "before", "until", "till"})  # "by friday": a weekday is a deadline only after one of these
_NUMBER = re.compile(r"^\d[\d,]*(\.\d+)?$")

clock: Callable[[], datetime] = lambda: datetime.now(UTC)  # noqa: E731  (tests set it)


def duration_at(said: list[str], at: int) -> tuple[str, int] | None:
    """Read a duration at said[at] ("2d", "2 days", "36 hours"), as the grammar's deadline= parser does; return its
    text and the words it took. A unit is needed: "in 2" is no deadline."""
    if at >= len(said):
        return None
    first = said[at]
    candidates = [(first + said[at + 1], 2)] if _NUMBER.match(first) and at + 1 < len(said) else []
    if not _NUMBER.match(first):
        candidates.append((first, 1))
    if first in ("a", "an") and at + 1 < len(said):  # "within a week"
        candidates.append(("1" + said[at + 1], 2))
    for text, used in candidates:
        try:
            parse_duration_hours(text)
        except ValueError:
            continue
        return text, used
    return None


def relative_deadline(word: str) -> tuple[str, str] | None:
    """Return the deadline a time of day says ("tomorrow" 24 h, "overnight" 12 h) and how to tell it back, else None."""
    return (f"{RELATIVE_DEADLINES[word]}h", word) if word in RELATIVE_DEADLINES else None


def weekday_deadline(word: str) -> tuple[str, str] | None:
    """Return the hours until the end of the weekday a word names ("friday", "fri": the next one, today's where today
    is one; UTC, the user's time zone unknown) and how to tell it back, else None. Said after UNTIL ("by friday")."""
    day = next((d for d in WEEKDAYS if word in (d, d[:3])), "")
    if not day:
        return None
    now = clock()
    ahead = (WEEKDAYS.index(day) - now.weekday()) % 7
    end = (now + timedelta(days=ahead)).replace(hour=23, minute=59, second=59, microsecond=0)
    hours = max((end - now).total_seconds() / 3600, 1.0)
    return f"{hours:.0f}h", f"until the end of {day.capitalize()} {end:%Y-%m-%d}, UTC"
