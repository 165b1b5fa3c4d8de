"""Human quantities: sizes, durations and money parse to plain numbers, and bad input is refused by name."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from catalog.units import parse_bytes, parse_duration_hours, parse_usd


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("16GB", 16 * 10**9),
        ("16 gb", 16 * 10**9),
        ("16G", 16 * 10**9),
        ("16GiB", 16 * 2**30),
        ("512MiB", 512 * 2**20),
        ("1.5TB", 1_500_000_000_000),
        ("1,000MB", 10**9),
        ("100", 100),
        ("0B", 0),
    ],
)
def test_sizes_use_decimal_gb_and_binary_gib(text: str, expected: int) -> None:
    assert parse_bytes(text) == expected


def test_gib_is_larger_than_gb_by_the_binary_factor() -> None:
    assert parse_bytes("1GiB") / parse_bytes("1GB") == pytest.approx(2**30 / 10**9)


@pytest.mark.parametrize(
    ("text", "needle"),
    [("-1GB", "negative"), ("nanGB", "NaN"), ("inf", "finite"), ("16XB", "unknown size unit"),
     ("", "not a size"), ("GB", "not a size")],
)
def test_bad_sizes_raise_value_error_naming_the_problem(text: str, needle: str) -> None:
    with pytest.raises(ValueError, match=needle):
        parse_bytes(text)


@pytest.mark.parametrize(
    ("text", "hours"),
    [("2d", 48.0), ("36h", 36.0), ("90min", 1.5), ("1d 12h", 36.0), ("1d12h", 36.0), ("1.5", 1.5),
     ("1w", 168.0), ("3600s", 1.0)],
)
def test_durations_become_hours(text: str, hours: float) -> None:
    assert parse_duration_hours(text) == pytest.approx(hours)


@pytest.mark.parametrize(("text", "needle"), [("-2d", "negative"), ("nan", "NaN"), ("2 3", "not a duration"),
                                              ("2x", "unknown duration unit"), ("", "not a duration")])
def test_bad_durations_raise_value_error(text: str, needle: str) -> None:
    with pytest.raises(ValueError, match=needle):
        parse_duration_hours(text)


@pytest.mark.parametrize(
    ("text", "usd"),
    [("$500", 500.0), ("500", 500.0), ("$1,200.50", 1200.5), ("$1.5k", 1500.0), ("20 USD", 20.0),
     ("$2M", 2e6)],
)
def test_money_becomes_dollars(text: str, usd: float) -> None:
    assert parse_usd(text) == pytest.approx(usd)


@pytest.mark.parametrize(("text", "needle"), [("-$5", "negative; an amount must"), ("$-5", "negative"), ("$nan", "NaN"),
                                              ("$", "not an amount"), ("5 EUR", "not an amount")])
def test_bad_money_raises_value_error(text: str, needle: str) -> None:
    with pytest.raises(ValueError, match=needle):
        parse_usd(text)


def test_plain_numbers_pass_through_but_not_booleans_or_nan() -> None:
    assert parse_bytes(1024) == 1024
    assert parse_duration_hours(2) == 2.0
    assert parse_usd(9.5) == 9.5
    with pytest.raises(ValueError):
        parse_bytes(True)
    with pytest.raises(ValueError, match="NaN"):
        parse_usd(math.nan)
    with pytest.raises(ValueError, match="negative"):
        parse_duration_hours(-1)


@given(st.integers(min_value=0, max_value=10**6), st.sampled_from(["KB", "MB", "GB", "KiB", "MiB", "GiB"]))
def test_integer_sizes_scale_exactly_by_their_unit(n: int, unit: str) -> None:
    factor = {"KB": 10**3, "MB": 10**6, "GB": 10**9, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30}[unit]
    assert parse_bytes(f"{n}{unit}") == n * factor
