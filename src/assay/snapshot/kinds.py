"""What a snapshot carries, kind by kind: how each kind's records are read out of a store
(all of them, or those last written after a generation) and the member they go to.

Every kind is read through the store's own paged search with the change cursor
(`sinceGeneration`), so a snapshot holds exactly the records the API would serve, in the
API's encoding, and is written back through the importer, which checks every record as
any import does and applies the store's write rule (an older record never replaces a
newer one).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Final

from assay.nvd.cpe_query import MAX_RESULTS_PER_PAGE as CPE_PAGE
from assay.nvd.cpe_query import CpeQuery
from assay.nvd.cpematch_query import MAX_RESULTS_PER_PAGE as MATCH_PAGE
from assay.nvd.cpematch_query import CpeMatchQuery
from assay.nvd.cve_query import MAX_RESULTS_PER_PAGE as CVE_PAGE
from assay.nvd.cve_query import CveQuery
from assay.nvd.history_query import MAX_RESULTS_PER_PAGE as HISTORY_PAGE
from assay.nvd.history_query import HistoryQuery
from assay.nvd.source_query import MAX_RESULTS_PER_PAGE as SOURCE_PAGE
from assay.nvd.source_query import SourceQuery
from assay.nvd.storage import Page, Store

PageReader = Callable[[Store, int | None, int, int], Page]
"""(store, since generation, start index, page size) -> the page."""


@dataclass(frozen=True, slots=True)
class RecordKind:
    name: str
    """The importer's record kind (`cve`, `cpe`, `cpematch`, `change`, `source`)."""
    member: str
    page_size: int
    read_page: PageReader

    def records(self, store: Store, since: int | None) -> Iterator[bytes]:
        """Every record of this kind last written after `since` (all when None)."""
        start = 0
        while True:
            page = self.read_page(store, since, start, self.page_size)
            yield from page.records
            start += len(page.records)
            if not page.records or start >= page.total:
                return


def _kind(
    name: str, query_type: Callable[..., Any], page_size: int, search: Callable[[Store], Any]
) -> RecordKind:
    """A kind read with `search(store)` over queries of `query_type` (the change cursor)."""

    def read(store: Store, since: int | None, start: int, size: int) -> Page:
        query = query_type(since_generation=since, start_index=start, results_per_page=size)
        page: Page = search(store)(query)
        return page

    return RecordKind(name, f"nvd/{name}.jsonl", page_size, read)


KINDS: Final = (
    _kind("cve", CveQuery, CVE_PAGE, lambda store: store.search_cves),
    _kind("cpe", CpeQuery, CPE_PAGE, lambda store: store.search_cpes),
    _kind("cpematch", CpeMatchQuery, MATCH_PAGE, lambda store: store.search_match_strings),
    _kind("change", HistoryQuery, HISTORY_PAGE, lambda store: store.search_changes),
    _kind("source", SourceQuery, SOURCE_PAGE, lambda store: store.search_sources),
)
BY_MEMBER: Final = {kind.member: kind for kind in KINDS}
