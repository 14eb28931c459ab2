"""The CVE Change History API's query string: `parse_history_query(pairs) -> HistoryQuery`.

Pure. Same rules as the CVE API (`assay.nvd.params`): case-insensitive names, unknown
names and malformed values answered with a 404 whose `message` names the parameter.
A `HistoryQuery` is hashable: the store caches result lists under its `filter_key`.

`eventName` takes one value of `EVENT_NAMES` (the eleven of the interface description
plus the five newer ones NVD emits, spec `nvd-api-behaviour.md` §3.1), compared
case-insensitively with runs of spaces read as one; `+` and `%20` both arrive as a space.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from assay.errors import QueryError
from assay.nvd.operations import CVE_HISTORY_EVENT_NAMES, OPERATIONS
from assay.nvd.params import (
    PagedQuery,
    RawQuery,
    Window,
    parse_cve_id,
    parse_cve_ids,
    parse_paging,
    printable,
)

MAX_RESULTS_PER_PAGE = OPERATIONS["cvehistory"].max_page

PARAMETERS = OPERATIONS["cvehistory"].wire_names

EVENT_NAMES = CVE_HISTORY_EVENT_NAMES
_EVENTS_BY_KEY = {name.lower(): name for name in EVENT_NAMES}


def event_key(name: str) -> str:
    """The form event names are compared in: lower-case, single spaces."""
    return " ".join(name.split()).lower()


@dataclass(frozen=True, slots=True)
class HistoryQuery(PagedQuery):
    """A validated change-history query. Paging is kept apart from the filter."""

    cve_id: str | None = None
    cve_ids: tuple[str, ...] | None = None
    change_window: Window | None = None
    event_name: str | None = None  # the canonical spelling, from EVENT_NAMES
    results_per_page: int = field(default=MAX_RESULTS_PER_PAGE, kw_only=True)


def parse_history_query(pairs: Iterable[tuple[str, str]]) -> HistoryQuery:
    """Validate decoded query-string pairs and build a `HistoryQuery`."""
    raw = RawQuery(pairs, PARAMETERS)
    return HistoryQuery(
        cve_id=parse_cve_id(raw, "cveId"),
        cve_ids=parse_cve_ids(raw),
        change_window=raw.window("changeStartDate", "changeEndDate"),
        event_name=_event_name(raw),
        **parse_paging(raw, MAX_RESULTS_PER_PAGE),
    )


def _event_name(raw: RawQuery) -> str | None:
    value = raw.text("eventName")
    if value is None:
        return None
    name = _EVENTS_BY_KEY.get(event_key(value))
    if name is None:
        raise QueryError(
            "eventName",
            "Invalid eventName: expected an NVD change event name such as 'Initial Analysis' "
            f"or 'CVE Rejected', found '{printable(value)}'",
        )
    return name
