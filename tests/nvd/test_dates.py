"""Date/time parameters, record timestamps and windows (spec §1.8, §1.9)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assay.errors import InputError
from assay.nvd.dates import (
    INVALID_DATE_MESSAGE,
    InvalidDate,
    InvalidTimestamp,
    WindowError,
    check_window,
    comparable_text,
    format_nvd_timestamp,
    normalize_record_timestamp,
    parse_nvd_datetime,
    parse_record_timestamp,
)

NVD_TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}")


def utc(  # noqa: PLR0917  # mirrors datetime()'s positional fields
    year: int, month: int, day: int, hour: int = 0, minute: int = 0, second: int = 0, us: int = 0
) -> datetime:
    return datetime(year, month, day, hour, minute, second, us, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # DOC-VULN examples
        ("2021-08-04T13:00:00.000+01:00", utc(2021, 8, 4, 12)),
        ("2021-08-04T00:00:00.000", utc(2021, 8, 4)),
        ("2020-01-01T00:00:00.000-05:00", utc(2020, 1, 1, 5)),
        ("2023-01-01T00:00:00.000Z", utc(2023, 1, 1)),
        # what clients send (spec §1.8 PROBE)
        ("2022-01-01T00:00:00", utc(2022, 1, 1)),  # nvdlib naive, nvd-api tz stripped
        ("2022-02-01T00:00:00+00:00", utc(2022, 2, 1)),  # nvdlib aware
        ("2024-01-01T00:00:00.000+00:00", utc(2024, 1, 1)),  # pontos
        ("2024-07-11T08:20:52Z", utc(2024, 7, 11, 8, 20, 52)),  # vulnz
        ("2024-10-22T13:36+00:00", utc(2024, 10, 22, 13, 36)),  # no seconds
        ("2021-08-04T13:00:00.123456", utc(2021, 8, 4, 13, 0, 0, 123456)),
        ("2021-08-04T13:00:00.1", utc(2021, 8, 4, 13, 0, 0, 100000)),
        ("2021-08-04T13:00:00.1234567", utc(2021, 8, 4, 13, 0, 0, 123456)),  # 7th truncated
        ("2024-11-25T10:00:00-05", utc(2024, 11, 25, 15)),  # hour-only offset, leniently
        ("2021-08-04T13:00:00+0130", utc(2021, 8, 4, 11, 30)),
        ("2021-08-04T13:00:00.000 01:00", utc(2021, 8, 4, 12)),  # un-encoded "+"
        ("2021-08-04T13:00 0100", utc(2021, 8, 4, 12)),
        ("2021-01-01T00:30:00+01:00", utc(2020, 12, 31, 23, 30)),  # crosses a year
        ("2024-02-29T23:59:59.999-23:59", utc(2024, 3, 1, 23, 58, 59, 999000)),
    ],
)
def test_parse_accepts(text: str, expected: datetime) -> None:
    parsed = parse_nvd_datetime(text)
    assert parsed == expected
    assert parsed.tzinfo is UTC


@pytest.mark.parametrize(
    "text",
    [
        "",
        "yesterday",
        "2021-13-01T00:00:00",
        "2021-02-30T00:00:00",
        "2021-08-04T24:00:00",
        "2021-08-04T13:60:00",
        "2021-08-04T13:00:60",
        "2021-08-04",
        "2021-08-04T13",
        "2021-08-04 13:00:00",
        "2021-08-04t13:00:00",
        "21-08-04T13:00:00",
        "2021-8-4T13:00:00",
        "2021-08-04T13:00:00.",
        "2021-08-04T13:00:00.12345678",
        "2021-08-04T13:00:00z",
        "2021-08-04T13:00:00+1",
        "2021-08-04T13:00:00+01:",
        "2021-08-04T13:00:00+01:0",
        "2021-08-04T13:00:00+24:00",
        "2021-08-04T13:00:00+01:60",
        "2021-08-04T13:00:00+01:00Z",
        " 2021-08-04T13:00:00",
        "2021-08-04T13:00:00 ",
        "2021-08-04T13:00:00\n",
        "0000-01-01T00:00:00",
        "0001-01-01T00:00:00+01:00",  # before year 1 in UTC
        "9999-12-31T23:00:00-01:00",  # after year 9999 in UTC
        "２０２１-08-04T13:00:00",  # non-ASCII digits
        "2021-08-04T13:00:00.000%2B01:00",  # not decoded: the router decodes
    ],
)
def test_parse_rejects_with_nvd_message(text: str) -> None:
    with pytest.raises(InvalidDate) as caught:
        parse_nvd_datetime(text)
    assert str(caught.value) == INVALID_DATE_MESSAGE
    assert caught.value.reason == "Invalid ISO 8601 date/time format, see documentation."
    assert isinstance(caught.value, InputError)


@given(st.datetimes(timezones=st.just(UTC)))
def test_formatted_timestamps_parse_back(dt: datetime) -> None:
    text = format_nvd_timestamp(dt)
    assert NVD_TIMESTAMP.fullmatch(text)
    assert parse_nvd_datetime(text) == dt.replace(microsecond=dt.microsecond // 1000 * 1000)
    assert parse_record_timestamp(text) == parse_nvd_datetime(text)


@given(
    st.datetimes(
        min_value=datetime(1900, 1, 1),
        max_value=datetime(2100, 1, 1),
        timezones=st.just(UTC),
    ),
    st.integers(min_value=-(24 * 60 - 1), max_value=24 * 60 - 1),
)
def test_offset_forms_agree(dt: datetime, offset_minutes: int) -> None:
    local = dt.astimezone(timezone(timedelta(minutes=offset_minutes)))
    sign = "-" if offset_minutes < 0 else "+"
    hh, mm = divmod(abs(offset_minutes), 60)
    base = local.strftime("%Y-%m-%dT%H:%M:%S.%f")
    expected = dt
    for suffix in (f"{sign}{hh:02d}:{mm:02d}", f"{sign}{hh:02d}{mm:02d}"):
        assert parse_nvd_datetime(base + suffix) == expected
    assert parse_nvd_datetime(base + suffix.replace("+", " ")) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2023-05-04T19:40:31.363", utc(2023, 5, 4, 19, 40, 31, 363000)),
        ("2023-05-04T19:40:31", utc(2023, 5, 4, 19, 40, 31)),
        ("2025-08-25T03:00:52.6764605", utc(2025, 8, 25, 3, 0, 52, 676460)),
        ("2023-11-26T23:42:27.193Z", utc(2023, 11, 26, 23, 42, 27, 193000)),  # osv.dev sample
        ("2021-11-03", utc(2021, 11, 3)),  # cisaExploitAdd
    ],
)
def test_record_timestamps(text: str, expected: datetime) -> None:
    assert parse_record_timestamp(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "",
        "2023-05-04T19:40",
        "2023-05-04T19:40:31+00:00",
        "2023-13-04T19:40:31",
        "x",
        "2023-05-04 ",
    ],
)
def test_record_timestamps_reject(text: str) -> None:
    with pytest.raises(InvalidTimestamp) as caught:
        parse_record_timestamp(text)
    assert "2023-05-04T19:40:31.363" in caught.value.reason


def test_format() -> None:
    assert format_nvd_timestamp(utc(2024, 7, 12, 14, 25, 9, 140999)) == "2024-07-12T14:25:09.140"
    assert format_nvd_timestamp(datetime(2024, 7, 12)) == "2024-07-12T00:00:00.000"  # naive = UTC
    plus_one = datetime(2024, 1, 1, 0, 30, tzinfo=timezone(timedelta(hours=1)))
    assert format_nvd_timestamp(plus_one) == "2023-12-31T23:30:00.000"


def test_comparable_text_rounds_window_start_up() -> None:
    start = utc(2024, 1, 1, 0, 0, 0, 500)
    assert comparable_text(start) == "2024-01-01T00:00:00.000"
    assert comparable_text(start, ceil=True) == "2024-01-01T00:00:00.001"
    assert comparable_text(utc(2024, 1, 1, 0, 0, 0, 2000), ceil=True) == "2024-01-01T00:00:00.002"
    assert comparable_text(utc(2023, 12, 31, 23, 59, 59, 999001), ceil=True) == (
        "2024-01-01T00:00:00.000"
    )


@given(st.datetimes(timezones=st.just(UTC)), st.datetimes(timezones=st.just(UTC)))
def test_comparable_text_orders_like_time(a: datetime, b: datetime) -> None:
    a, b = a.replace(microsecond=a.microsecond // 1000 * 1000), b.replace(microsecond=0)
    assert (comparable_text(a) < comparable_text(b)) == (a < b)


def test_normalize_record_timestamp() -> None:
    assert normalize_record_timestamp("2025-08-25T03:00:52.6764605") == "2025-08-25T03:00:52.676"
    assert normalize_record_timestamp("2021-11-03") == "2021-11-03T00:00:00.000"


def test_window_boundaries() -> None:
    start = utc(2024, 1, 1)
    check_window(start, start)
    check_window(start, start + timedelta(days=120))  # exactly 120 days passes
    with pytest.raises(WindowError, match="cannot exceed 120 days"):
        check_window(start, start + timedelta(days=120, microseconds=1))
    with pytest.raises(WindowError, match="before start"):
        check_window(start, start - timedelta(microseconds=1))
    check_window(start, start + timedelta(days=7), max_days=7)
    with pytest.raises(WindowError, match="cannot exceed 7 days"):
        check_window(start, start + timedelta(days=8), max_days=7)
    assert issubclass(WindowError, InputError)


@given(
    st.from_regex(
        r"\A[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}\Z", fullmatch=True
    )
)
def test_a_timestamp_in_nvd_form_normalizes_as_the_general_parser_says(text: str) -> None:
    """Timestamps already in NVD's form take a shorter path; it must agree with the
    general one, rejections included (month 13, 29 February of a common year, ...)."""
    try:
        expected = format_nvd_timestamp(parse_record_timestamp(text))
    except InvalidTimestamp:
        with pytest.raises(InvalidTimestamp):
            normalize_record_timestamp.__wrapped__(text)
        return
    assert normalize_record_timestamp.__wrapped__(text) == expected
