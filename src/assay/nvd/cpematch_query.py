"""The Match Criteria API's query string: `parse_cpematch_query(pairs) -> CpeMatchQuery`.

Pure. Same rules as the CVE API (`assay.nvd.params`). Chosen semantics (spec
`nvd-api-behaviour.md` §5.1):

* `cveId`: every match criteria that CVE's configurations reference.
* `matchCriteriaId`: one record, by UUID (case-insensitive).
* `matchStringSearch`: a complete CPE 2.3 match string (all 11 components after
  `cpe:2.3:`, `*` allowed); fewer or more components are a 404. A criteria conforms when
  every component of the pattern other than `*` equals its own
  (`assay.nvd.cpe.matches_match_string`: a criteria `*` does not satisfy a specific value).
* `lastModStartDate`/`lastModEndDate` (≤ 120 days) hit a record whose `lastModified` *or*
  `cpeLastModified` lies in the window.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from assay.nvd.cpe import Cpe
from assay.nvd.cpe_query import parse_match_string, parse_uuid
from assay.nvd.operations import OPERATIONS
from assay.nvd.params import PagedQuery, RawQuery, Window, parse_cve_id, parse_paging

MAX_RESULTS_PER_PAGE = OPERATIONS["cpematch"].max_page

PARAMETERS = OPERATIONS["cpematch"].wire_names


@dataclass(frozen=True, slots=True)
class CpeMatchQuery(PagedQuery):
    """A validated match-criteria query. Paging is kept apart from the filter."""

    cve_id: str | None = None
    match_criteria_id: str | None = None
    match_string: Cpe | None = None
    last_mod_window: Window | None = None
    results_per_page: int = field(default=MAX_RESULTS_PER_PAGE, kw_only=True)


def parse_cpematch_query(pairs: Iterable[tuple[str, str]]) -> CpeMatchQuery:
    """Validate decoded query-string pairs and build a `CpeMatchQuery`."""
    raw = RawQuery(pairs, PARAMETERS)
    return CpeMatchQuery(
        cve_id=parse_cve_id(raw, "cveId"),
        match_criteria_id=parse_uuid(raw, "matchCriteriaId"),
        match_string=parse_match_string(raw, "matchStringSearch", partial=False),
        last_mod_window=raw.window("lastModStartDate", "lastModEndDate"),
        **parse_paging(raw, MAX_RESULTS_PER_PAGE),
    )
