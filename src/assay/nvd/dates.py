"""NVD date/time parameters and timestamps.

Pure. Chosen semantics (spec `nvd-api-behaviour.md` §1.8, §1.9):

* Query parameters (`parse_nvd_datetime`) are parsed leniently, because the clients in use
  send every variant NVD accepted at some point:
  `YYYY-MM-DDTHH:MM[:SS[.f{1,7}]]` followed by nothing (UTC), `Z`, `±HH:MM`, `±HHMM`
  or `±HH`; a space in place of the `+` is read as `+` (a `+` that was not sent as
  `%2B` arrives decoded as a space). Digits are ASCII only, the `T` is mandatory and
  upper-case, and nothing may surround the value. Fractions past microseconds (the
  7th digit) are truncated. Offsets must be below 24 hours. The result is aware, in UTC.
  Anything else raises `InvalidDate`, whose text is NVD's own message.
* Stored record timestamps (`parse_record_timestamp`) are UTC without an offset and
  carry any number of fraction digits (NVD writes 3, its feeds up to 7); a trailing `Z`
  and a bare date (`cisaExploitAdd`, midnight UTC) are accepted too.
* Emitted timestamps (`format_nvd_timestamp`) are `YYYY-MM-DDTHH:MM:SS.mmm`, UTC, no
  offset. Sub-millisecond digits are truncated, never rounded (rounding could move a
  value into the next second, minute or day). A naive datetime is taken to be UTC.
* The same text is the comparable form stores keep (`comparable_text`): fixed width, so
  string order is time order. A window start with sub-millisecond digits is rounded *up*
  (`ceil=True`), so `stored >= start` stays exact at millisecond precision.
* Windows (`check_window`): at most `max_days` (120) long, measured exactly
  (`end - start > timedelta(days=120)` fails, exactly 120 days passes), and the end may
  not precede the start.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone
from functools import lru_cache

from assay.errors import InputError

__all__ = [
    "INVALID_DATE_MESSAGE",
    "MAX_WINDOW_DAYS",
    "InvalidDate",
    "InvalidTimestamp",
    "WindowError",
    "check_window",
    "comparable_text",
    "format_nvd_timestamp",
    "normalize_record_timestamp",
    "parse_nvd_datetime",
    "parse_record_timestamp",
]

INVALID_DATE_MESSAGE = "Invalid ISO 8601 date/time format, see documentation."
MAX_WINDOW_DAYS = 120

_QUERY_DATETIME = re.compile(
    r"(?P<y>[0-9]{4})-(?P<mo>[0-9]{2})-(?P<d>[0-9]{2})"
    r"T(?P<h>[0-9]{2}):(?P<mi>[0-9]{2})"
    r"(?::(?P<s>[0-9]{2})(?:\.(?P<f>[0-9]{1,7}))?)?"
    r"(?:(?P<z>Z)|(?P<sign>[+\- ])(?P<oh>[0-9]{2})(?::?(?P<om>[0-9]{2}))?)?"
)
_RECORD_TIMESTAMP = re.compile(
    r"(?P<y>[0-9]{4})-(?P<mo>[0-9]{2})-(?P<d>[0-9]{2})"
    r"(?:T(?P<h>[0-9]{2}):(?P<mi>[0-9]{2}):(?P<s>[0-9]{2})(?:\.(?P<f>[0-9]+))?Z?)?"
)


class InvalidDate(InputError):
    """A date/time parameter is not in a format NVD accepts; the text is NVD's message."""

    def __init__(self, text: str, where: str = "") -> None:
        super().__init__(where, INVALID_DATE_MESSAGE)
        self.text = text


class InvalidTimestamp(InputError):
    """A stored record timestamp is malformed."""

    def __init__(self, text: str, where: str = "") -> None:
        super().__init__(
            where, f"expected a timestamp like 2023-05-04T19:40:31.363, found {text[:80]!r}"
        )
        self.text = text


class WindowError(InputError):
    """A date window is longer than allowed or ends before it starts."""


def _micro(fraction: str | None) -> int:
    # Pad or truncate to 6 digits: "5" is 500000 µs, "6764605" is 676460 µs.
    return int((fraction or "0")[:6].ljust(6, "0"))


def parse_nvd_datetime(text: str) -> datetime:
    """Parse a date/time query parameter leniently (see module docstring); aware UTC."""
    match = _QUERY_DATETIME.fullmatch(text)
    if match is None:
        raise InvalidDate(text)
    g = match.group
    offset = _offset(match, text)
    try:
        local = datetime(
            int(g("y")),
            int(g("mo")),
            int(g("d")),
            int(g("h")),
            int(g("mi")),
            int(g("s") or "0"),
            _micro(g("f")),
            tzinfo=timezone(offset),
        )
        return local.astimezone(UTC)
    except (ValueError, OverflowError):
        # Out-of-range fields (month 13, hour 24), or an offset pushing past year 1/9999.
        raise InvalidDate(text) from None


def _offset(match: re.Match[str], text: str) -> timedelta:
    """The UTC offset a query date/time gives (none: UTC), at most 23:59 either way."""
    g = match.group
    if g("sign") is None:
        return timedelta(0)
    minutes = int(g("oh")) * 60 + int(g("om") or "0")
    if int(g("om") or "0") >= 60 or minutes >= 24 * 60:
        raise InvalidDate(text)
    return timedelta(minutes=-minutes if g("sign") == "-" else minutes)


def parse_record_timestamp(text: str) -> datetime:
    """Parse a stored record timestamp (`2023-05-04T19:40:31.363`, UTC); aware UTC."""
    match = _RECORD_TIMESTAMP.fullmatch(text)
    if match is None:
        raise InvalidTimestamp(text)
    g = match.group
    try:
        return datetime(
            int(g("y")),
            int(g("mo")),
            int(g("d")),
            int(g("h") or "0"),
            int(g("mi") or "0"),
            int(g("s") or "0"),
            _micro(g("f")),
            tzinfo=UTC,
        )
    except ValueError:
        raise InvalidTimestamp(text) from None


def format_nvd_timestamp(dt: datetime) -> str:
    """`YYYY-MM-DDTHH:MM:SS.mmm` in UTC (naive means UTC); sub-milliseconds truncated."""
    if dt.tzinfo is not None:
        dt = dt.astimezone(UTC)
    return (
        f"{dt.year:04d}-{dt.month:02d}-{dt.day:02d}T"
        f"{dt.hour:02d}:{dt.minute:02d}:{dt.second:02d}.{dt.microsecond // 1000:03d}"
    )


def comparable_text(dt: datetime, *, ceil: bool = False) -> str:
    """The fixed-width text stores compare timestamps by (same as `format_nvd_timestamp`).

    With `ceil=True` a value with sub-millisecond digits is rounded up to the next
    millisecond: use it for a window *start*, so that `stored >= start` holds exactly
    for stored millisecond timestamps. Truncation (the default) is exact for the end.
    """
    if ceil and dt.microsecond % 1000:
        dt = dt + timedelta(microseconds=1000 - dt.microsecond % 1000)
    return format_nvd_timestamp(dt)


# NVD's own form, which most record timestamps already have: checked by the C parser.
_COMPARABLE_TIMESTAMP = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}"
)


@lru_cache(maxsize=4096)
def normalize_record_timestamp(text: str) -> str:
    """A stored record timestamp in its comparable form (3 fraction digits)."""
    if _COMPARABLE_TIMESTAMP.fullmatch(text):
        try:
            datetime.fromisoformat(text)  # the fields' ranges (month 13, hour 24, ...)
        except ValueError:
            raise InvalidTimestamp(text) from None
        return text
    return format_nvd_timestamp(parse_record_timestamp(text))


def check_window(start: datetime, end: datetime, *, max_days: int = MAX_WINDOW_DAYS) -> None:
    """Raise `WindowError` when `end < start` or the window is longer than `max_days`."""
    if end < start:
        raise WindowError("", "End date must not be before start date")
    if end - start > timedelta(days=max_days):
        raise WindowError("", f"Date range cannot exceed {max_days} days")
