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
MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december")
_DAY = re.compile(r"^(\d{1,2})(st|nd|rd|th)?$")  # "31", "31st"
_ISO_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")

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
        return calendar_deadline(plain, head)
    now = clock()
    # a weekday's next one (today's where today is it); "next friday" the one of next week (Monday to Sunday)
    ahead = 7 - now.weekday() + WEEKDAYS.index(day) if following else (WEEKDAYS.index(day) - now.weekday()) % 7
    end = _end_of(now + timedelta(days=ahead))
    hours = max((end - now).total_seconds() / 3600, 1.0)
    return f"{hours:.0f}h", f"until the end of {day.capitalize()} {end:%Y-%m-%d}, UTC", head.index(last) + 1


def _month(word: str) -> int:
    """Return a month's number (1-12) from its name or its three letters ("mar"; "sept"), else 0."""
    return next((n for n, m in enumerate(MONTHS, 1) if word in (m, m[:3]) or (m == "september" and word == "sept")),
                0)


def _end_of(day: datetime) -> datetime:
    return day.replace(hour=23, minute=59, second=59, microsecond=0)


def _last_day(year: int, month: int) -> datetime:
    first_next = datetime(year + month // 12, month % 12 + 1, 1, tzinfo=UTC)
    return _end_of(first_next - timedelta(days=1))


def calendar_deadline(plain: list[str], head: list[str]) -> tuple[str, str, int] | None:
    """Read a calendar deadline after UNTIL: "march" / "end of march" (that month's last day), "march 31" / "31
    march" / "march 31st", "2027-03-31", "end of (the) month", "end of (the) quarter", "end of (the) year" (and
    "eom", "eoq", "eoy"): the hours until the end of that day (UTC; a month or date already past is next year's),
    how to tell it back and the words taken; None where none of these follows."""
    now = clock()
    words = plain[3:] if plain[:2] == ["end", "of"] else plain  # "end of march": march's last day, as "march"
    ends = {"month": now.month, "quarter": (now.month - 1) // 3 * 3 + 3, "year": 12}
    short = {"eom": "month", "eoq": "quarter", "eoy": "year"}
    if (plain[:1] and plain[0] in short) or (plain[:2] == ["end", "of"] and plain[2:3] and plain[2] in ends):
        span = short.get(plain[0]) or plain[2]
        end, last = _last_day(now.year, ends[span]), plain[0] if plain[0] in short else span
    elif plain[:2] == ["end", "of"] and plain[2:3] and (month := _month(plain[2])):
        end, last = _last_day(now.year, month), plain[2]
        end = end if end >= now else _last_day(now.year + 1, month)
    elif words[:1] and (iso := _ISO_DATE.match(words[0])):
        try:
            end = _end_of(datetime(int(iso[1]), int(iso[2]), int(iso[3]), tzinfo=UTC))
        except ValueError:
            return None
        last = words[0]
    elif words[:1] and (_month(words[0]) or (words[1:2] and _DAY.match(words[0]) and _month(words[1]))):
        if _month(words[0]):  # "march", "march 31", "march 31st"
            month, day = _month(words[0]), _DAY.match(words[1]) if words[1:2] else None
            last = words[1] if day else words[0]
        else:  # "31 march"
            month, day, last = _month(words[1]), _DAY.match(words[0]), words[1]
        try:
            end = _end_of(now.replace(month=month, day=int(day[1]))) if day else _last_day(now.year, month)
            end = end if end >= now else end.replace(year=end.year + 1)
        except ValueError:  # "february 30"
            return None
    else:
        return None
    if end < now:
        return None
    hours = max((end - now).total_seconds() / 3600, 1.0)
    return f"{hours:.0f}h", f"until the end of {end:%A %Y-%m-%d}, UTC", head.index(last) + 1
