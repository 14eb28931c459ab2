"""The Source API's query string: `parse_source_query(pairs) -> SourceQuery`.

Pure. Same rules as the CVE API (`assay.nvd.params`): case-insensitive names, unknown
names and malformed values answered with a 404 whose `message` names the parameter.
NVD's Source API takes `sourceIdentifier`, `lastModStartDate`/`lastModEndDate` (both
or neither, at most 120 days) and pages of at most 1,000 sources.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from assay.nvd.operations import OPERATIONS
from assay.nvd.params import PagedQuery, RawQuery, Window, parse_paging

MAX_RESULTS_PER_PAGE = OPERATIONS["source"].max_page

PARAMETERS = OPERATIONS["source"].wire_names


@dataclass(frozen=True, slots=True)
class SourceQuery(PagedQuery):
    """A validated source query. Paging is kept apart from the filter."""

    source_identifier: str | None = None
    last_mod_window: Window | None = None
    results_per_page: int = field(default=MAX_RESULTS_PER_PAGE, kw_only=True)


def parse_source_query(pairs: Iterable[tuple[str, str]]) -> SourceQuery:
    """Validate decoded query-string pairs and build a `SourceQuery`."""
    raw = RawQuery(pairs, PARAMETERS)
    return SourceQuery(
        source_identifier=raw.text("sourceIdentifier"),
        last_mod_window=raw.window("lastModStartDate", "lastModEndDate"),
        **parse_paging(raw, MAX_RESULTS_PER_PAGE),
    )
