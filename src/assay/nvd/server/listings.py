"""The NVD API endpoints, described as data.

Each `Listing` says how its query string is parsed (pure), which store method answers
it, and how the page is wrapped (its operation's path and envelope, from
`assay.nvd.operations`); `NvdApi.listing` serves any of them with the transport rules of
the CVE API.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from assay.nvd.cpe_query import CpeQuery, parse_cpe_query
from assay.nvd.cpematch_query import CpeMatchQuery, parse_cpematch_query
from assay.nvd.cve_match_strings import search_match_strings
from assay.nvd.cve_query import CveQuery, parse_cve_query
from assay.nvd.history_query import HistoryQuery, parse_history_query
from assay.nvd.operations import OPERATIONS, Operation
from assay.nvd.server.responses import legacy_change, legacy_cpe, legacy_cve, legacy_match_string
from assay.nvd.source_query import SourceQuery, parse_source_query
from assay.nvd.storage import Page, Store


class PagedQuery(Protocol):
    @property
    def start_index(self) -> int: ...


Q = TypeVar("Q", bound=PagedQuery)


@dataclass(frozen=True, slots=True)
class Listing(Generic[Q]):
    operation: Operation
    parse: Callable[[Iterable[tuple[str, str]]], Q]
    search: Callable[[Store, Q], Page]
    legacy: Callable[[bytes], bytes]  # the nvd-api 0.9.1 view of one record
    point: Callable[[Q], bool]  # a look-up by id, answered from a few rows

    @property
    def path(self) -> str:
        return self.operation.path

    @property
    def format_name(self) -> str:
        return self.operation.format_name

    @property
    def list_key(self) -> str:
        return self.operation.list_key

    @property
    def wrapper(self) -> str | None:  # None: the items are the records themselves (sources)
        return self.operation.wrapper


CVES: Listing[CveQuery] = Listing(
    OPERATIONS["cves"],
    parse=parse_cve_query,
    search=lambda store, query: store.search_cves(query),
    legacy=legacy_cve,
    point=lambda query: False,  # `cveId` look-ups are `shortcut.py`'s
)
HISTORY: Listing[HistoryQuery] = Listing(
    OPERATIONS["cvehistory"],
    parse=parse_history_query,
    search=lambda store, query: store.search_changes(query),
    legacy=legacy_change,
    point=lambda query: query.cve_id is not None,
)
CPES: Listing[CpeQuery] = Listing(
    OPERATIONS["cpes"],
    parse=parse_cpe_query,
    search=lambda store, query: store.search_cpes(query),
    legacy=legacy_cpe,
    point=lambda query: query.cpe_name_id is not None,
)
CPEMATCH: Listing[CpeMatchQuery] = Listing(
    OPERATIONS["cpematch"],
    parse=parse_cpematch_query,
    search=search_match_strings,  # the store's, completed from the CVE for `cveId`
    legacy=legacy_match_string,
    point=lambda query: query.match_criteria_id is not None or query.cve_id is not None,
)
SOURCES: Listing[SourceQuery] = Listing(
    OPERATIONS["source"],
    parse=parse_source_query,
    search=lambda store, query: store.search_sources(query),
    legacy=lambda record: record,  # nvd-api 0.9.1 has no source API to be strict about
    point=lambda query: False,
)
LISTINGS: tuple[Listing[Any], ...] = (HISTORY, CPES, CPEMATCH, SOURCES)
"""Every operation but `cves`, which `NvdApi.cves` serves (CVE 5 enrichment)."""
