"""Shared rules for NVD query strings: names, flags, integers, date pairs, paging.

Pure: used by every endpoint's query parser. NVD treats parameter names
case-insensitively, treats a flag as on whenever it is present (clients send `hasKev`,
`hasKev=` and `isVulnerable=True`), and answers every invalid request with a 404 whose
`message` header gives the reason; `QueryError.reason` is that text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime
from itertools import filterfalse
from typing import Self, TypedDict

from assay.errors import InputError, QueryError
from assay.nvd.dates import check_window, comparable_text, parse_nvd_datetime

# Size limits for what a query may carry (a real NVD URL is far below these).
MAX_PARAMETERS = 40
MAX_VALUE_LENGTH = 2048
INVALID_DATE = "Invalid ISO 8601 date/time format, see documentation."
MAX_CVE_IDS = 100
MAX_KEYWORDS = 20
# Words for a full-text index (SQLite's FTS5 refuses a NUL in a query; no word holds one).
NO_NUL = frozenset({"keywordSearch"})
# The largest integer a parameter may hold (the stores' 64-bit offsets); a larger
# `startIndex` is refused rather than answered with another number than was asked.
MAX_INTEGER = 2**63 - 1
CVE_ID = re.compile(r"CVE-\d{4}-\d{4,19}", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Window:
    """An inclusive time window, both ends in the stored text form (UTC, `.mmm`)."""

    start: str
    end: str


class RawQuery:
    """Query parameters keyed by their canonical wire name, validated against a whitelist."""

    def __init__(self, pairs: Iterable[tuple[str, str]], known: Iterable[str]) -> None:
        canonical = {name.lower(): name for name in known}
        self.values: dict[str, str] = {}
        for count, (raw_name, value) in enumerate(pairs, start=1):
            if count > MAX_PARAMETERS:
                raise QueryError("query", f"Too many parameters: at most {MAX_PARAMETERS}")
            name = canonical.get(raw_name.lower())
            if name is None:
                raise QueryError(raw_name, f"Invalid parameter: {printable(raw_name)}")
            _check_value(name, value)
            # NVD's behaviour for repeated parameters is unknown; the first one wins.
            self.values.setdefault(name, value)

    def __contains__(self, name: str) -> bool:
        return name in self.values

    def get(self, name: str) -> str | None:
        return self.values.get(name)

    def flag(self, name: str) -> bool:
        """A flag is on when present, whatever its value."""
        return name in self.values

    def text(self, name: str) -> str | None:
        """A non-empty, stripped text value, or None when absent."""
        value = self.values.get(name)
        if value is None:
            return None
        value = value.strip()
        if not value:
            raise QueryError(name, f"{name} requires a value")
        return value

    def integer(self, name: str, *, default: int, maximum: int | None = None) -> int:
        value = self.values.get(name)
        if value is None:
            return default
        return _bounded_integer(name, value.strip(), maximum)

    def window(self, start_name: str, end_name: str, *, max_days: int = 120) -> Window | None:
        """A date pair: both or neither, valid ISO 8601, at most `max_days` long."""
        texts = self._pair(start_name, end_name)
        if texts is None:
            return None
        start = _date(start_name, texts[0])
        end = _date(end_name, texts[1])
        try:
            check_window(start, end, max_days=max_days)
        except InputError as error:
            raise QueryError(start_name, f"{start_name}/{end_name}: {error.reason}") from None
        try:
            return Window(comparable_text(start, ceil=True), comparable_text(end))
        except OverflowError:  # a start in the last millisecond of year 9999, rounded up
            raise QueryError(start_name, f"{INVALID_DATE} ({start_name})") from None

    def _pair(self, start_name: str, end_name: str) -> tuple[str, str] | None:
        """The values of two parameters given together; None when neither is given."""
        start_text, end_text = self.values.get(start_name), self.values.get(end_name)
        if start_text is None and end_text is None:
            return None
        if start_text is None or end_text is None:
            missing = start_name if start_text is None else end_name
            raise QueryError(
                missing, f"Both {start_name} and {end_name} are required when either is present"
            )
        return start_text, end_text


def _check_value(name: str, value: str) -> None:
    """Refuse a value longer than any real one, or a NUL where an index would choke."""
    if len(value) > MAX_VALUE_LENGTH:
        raise QueryError(name, f"{name} is too long: at most {MAX_VALUE_LENGTH} characters")
    if "\x00" in value and name in NO_NUL:
        raise QueryError(name, f"Invalid {name}: it contains a NUL character")


def _bounded_integer(name: str, value: str, maximum: int | None) -> int:
    """A digit string from 0 to `maximum` (else the stores' largest integer)."""
    if not value.isdigit() or not value.isascii():
        bound = f" from 0 to {maximum}" if maximum is not None else " of at least 0"
        raise QueryError(
            name, f"Invalid {name}: expected an integer{bound}, found '{printable(value)}'"
        )
    limit = MAX_INTEGER if maximum is None else maximum
    # Leading zeros aside, a digit string longer than the limit's is past it.
    digits = value.lstrip("0") or "0"
    if len(digits) > len(str(limit)) or int(digits) > limit:
        raise QueryError(name, f"{name} parameter cannot exceed {limit}")
    return int(digits)


def _date(name: str, text: str) -> datetime:
    try:
        return parse_nvd_datetime(text)
    except InputError:
        raise QueryError(name, f"{INVALID_DATE} ({name})") from None


def printable(text: str) -> str:
    """Header-safe rendering of user text: ASCII, no control characters, bounded."""
    safe = "".join(ch if " " <= ch <= "~" else "?" for ch in text[:80])
    return safe + ("..." if len(text) > 80 else "")


def parse_cve_id(raw: RawQuery, name: str) -> str | None:
    """A `CVE-YYYY-NNNN` parameter, upper-cased (NVD's ids are upper-case)."""
    value = raw.text(name)
    if value is None:
        return None
    if not CVE_ID.fullmatch(value):
        raise QueryError(
            name, f"Invalid {name}: expected CVE-YYYY-NNNN, found '{printable(value)}'"
        )
    return value.upper()


def parse_cve_ids(raw: RawQuery, name: str = "cveIds") -> tuple[str, ...] | None:
    """A comma-separated list of 1 to 100 CVE ids, de-duplicated and sorted."""
    value = raw.text(name)
    if value is None:
        return None
    ids = [part for part in map(str.strip, value.split(",")) if part]
    if not 1 <= len(ids) <= MAX_CVE_IDS:
        raise QueryError(name, f"{name} takes 1 to {MAX_CVE_IDS} comma-separated CVE ids")
    wrong = next(filterfalse(CVE_ID.fullmatch, ids), None)
    if wrong is not None:
        raise QueryError(name, f"Invalid {name}: '{printable(wrong)}' is not a CVE id")
    return tuple(sorted(set(map(str.upper, ids))))


GENERATION_PARAMETER = "sinceGeneration"


def parse_generation(raw: RawQuery) -> int | None:
    """`sinceGeneration=N` (an assay extension, on every list path): only records last
    written after the store's data generation N (the `x-assay-generation` header)."""
    if GENERATION_PARAMETER not in raw:
        return None
    return raw.integer(GENERATION_PARAMETER, default=0)


class PagingFields(TypedDict):
    """The `PagedQuery` fields a query string sets, as keyword arguments."""

    since_generation: int | None
    start_index: int
    results_per_page: int


def parse_paging(raw: RawQuery, max_page: int) -> PagingFields:
    """`sinceGeneration`, `startIndex` and `resultsPerPage` (at most `max_page`)."""
    return PagingFields(
        since_generation=parse_generation(raw),
        start_index=raw.integer("startIndex", default=0),
        results_per_page=raw.integer("resultsPerPage", default=max_page, maximum=max_page),
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class PagedQuery:
    """What every list query carries beside its filter: the change cursor and the page.

    Each query declares `results_per_page` again with its operation's largest page as
    the default; `filter_key` resets the page to those defaults, so it is equal for
    every page of one result set and serves as the stores' cache key.
    """

    since_generation: int | None = None  # extension: the change cursor (docs/sync.md)
    start_index: int = 0
    results_per_page: int

    @property
    def filter_key(self) -> Self:
        """The same query without paging: equal for every page of one result set."""
        largest = self.largest_page()
        if self.start_index == 0 and self.results_per_page == largest:
            return self  # (already its own key: a copy costs more than the search's SQL)
        return replace(self, start_index=0, results_per_page=largest)

    @classmethod
    def largest_page(cls) -> int:
        """The page size a query defaults to: its operation's largest."""
        default = cls.__dataclass_fields__["results_per_page"].default
        assert isinstance(default, int), f"{cls.__name__} sets no default page size"
        return default


def parse_keywords(raw: RawQuery) -> tuple[tuple[str, ...], bool]:
    """`keywordSearch` split on white space, and whether `keywordExactMatch` is on."""
    keywords: tuple[str, ...] = ()
    text = raw.text("keywordSearch")
    if text is not None:
        keywords = tuple(text.split())
        if len(keywords) > MAX_KEYWORDS:
            raise QueryError("keywordSearch", f"keywordSearch has more than {MAX_KEYWORDS} words")
    exact = raw.flag("keywordExactMatch")
    if exact and not keywords:
        raise QueryError("keywordExactMatch", "keywordExactMatch requires keywordSearch")
    return keywords, exact
