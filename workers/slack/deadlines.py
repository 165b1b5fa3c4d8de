"""A deadline said in words: a duration ("within 2 days", "in 36 hours", "within a week"), a time of day ("by
tomorrow", "overnight") or a weekday ("by friday": until the end of that day, UTC, from the clock when the command is
read), each made the hours `deadline=` takes (catalog.units.parse_duration_hours)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from catalog.units import parse_duration_hours

# A deadline said as a time of day: "by tomorrow" is a day from now, "overnight" twelve hours.
RELATIVE_DEADLINES = {"tomorrow": 24, "overnight": 12}
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
HEDGES = frozenset({"about", "around", "roughly", "approximately", "~"})  # "within about 2 days": its 2 days
UNTIL = frozenset({"by", "before", "until", "till"})  # "by friday": a weekday is a deadline only after one of these
_NUMBER = re.compile(r"^\d[\d,]*(\.\d+)?$")

def clock() -> datetime:
    """Return the time a command is read at (UTC); tests replace it."""
    return datetime.now(UTC)


def duration_at(said: list[str], at: int) -> tuple[str, int] | None:
    """Read a duration at said[at] ("2d", "2 days", "36 hours"), as the grammar's deadline= parser does; return its
    text and the words it took. A unit is needed: "in 2" is no deadline."""
    hedged = 0
    while at + hedged < len(said) and said[at + hedged] in HEDGES:  # "for about 3 hours": the 3 hours
        hedged += 1
    at += hedged
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
        return text, used + hedged
    return None


def relative_deadline(word: str) -> tuple[str, str, int] | None:
    """Return the deadline a time of day says ("tomorrow" 24 h, "overnight" 12 h), how to tell it back and the words
    it takes beyond itself (none), else None."""
    return (f"{RELATIVE_DEADLINES[word]}h", word, 0) if word in RELATIVE_DEADLINES else None


def until_deadline(words: list[str]) -> tuple[str, str, int] | None:
    """Read what follows UNTIL ("by friday", "by fri", "by end of day", "by eod", "by end of the week", "by next
    friday", "by next week"): the hours until the end of that day (a weekday's next one, today's where today is it;
    "next" a weekday of next week; the end of a week is its Friday's; UTC, the user's time zone unknown), how to tell
    it back, and the words taken; None where none of these follows."""
    head = words[:5]
    plain = [w for w in head if w != "the"]
    following = "next" in plain[:3] and plain[:1] in (["next"], ["end"])  # "next friday", "end of next week"
    plain = [w for w in plain if w != "next"] if following else plain
    if plain[:1] == ["eod"] or plain[:3] == ["end", "of", "day"]:
        day, last = WEEKDAYS[clock().weekday()], plain[0] if plain[0] == "eod" else "day"
    elif plain[:1] == ["eow"] or plain[:3] == ["end", "of", "week"] or (following and plain[:1] == ["week"]):
        day, last = "friday", plain[0] if plain[0] in ("eow", "week") else "week"
    else:
        day = next((d for d in WEEKDAYS if plain[:1] and plain[0] in (d, d[:3])), "")
        last = plain[0] if day else ""
    if not day:
        return None
    now = clock()
    # a weekday's next one (today's where today is it); "next friday" the one of next week (Monday to Sunday)
    ahead = 7 - now.weekday() + WEEKDAYS.index(day) if following else (WEEKDAYS.index(day) - now.weekday()) % 7
    end = (now + timedelta(days=ahead)).replace(hour=23, minute=59, second=59, microsecond=0)
    hours = max((end - now).total_seconds() / 3600, 1.0)
    return f"{hours:.0f}h", f"until the end of {day.capitalize()} {end:%Y-%m-%d}, UTC", head.index(last) + 1
