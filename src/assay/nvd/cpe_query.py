"""The CPE API's query string: `parse_cpe_query(pairs) -> CpeQuery`.

Pure. Same rules as the CVE API (`assay.nvd.params`); a violation raises `QueryError`
naming the parameter. Chosen semantics (spec `nvd-api-behaviour.md` §4.1):

* `cpeNameId` and `matchCriteriaId` are UUIDs, compared case-insensitively (NVD emits
  them upper-case); anything else is a 404, a well-formed unknown id an empty page.
* `cpeMatchString` is a CPE 2.3 match string that must start `cpe:2.3:`; missing trailing
  components are `*` and components are normalized as `assay.nvd.cpe.parse_cpe` does
  (case-insensitive, escapes honoured). A product matches when every component of the
  pattern other than `*` equals its own (`assay.nvd.cpe.matches_match_string`).
* `keywordSearch` words must each begin a word of a title or a reference link (AND);
  with `keywordExactMatch` the words must appear together as one phrase.
* `lastModStartDate`/`lastModEndDate` bound the product's `lastModified` (≤ 120 days).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from assay.errors import InputError, QueryError
from assay.nvd.cpe import Cpe, parse_cpe
from assay.nvd.operations import OPERATIONS
from assay.nvd.params import PagedQuery, RawQuery, Window, parse_keywords, parse_paging, printable

MAX_RESULTS_PER_PAGE = OPERATIONS["cpes"].max_page

PARAMETERS = OPERATIONS["cpes"].wire_names

UUID = re.compile(r"[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}")


@dataclass(frozen=True, slots=True)
class CpeQuery(PagedQuery):
    """A validated CPE (product dictionary) query. Paging is kept apart from the filter."""

    cpe_name_id: str | None = None
    match_string: Cpe | None = None
    keywords: tuple[str, ...] = ()
    keyword_exact: bool = False
    last_mod_window: Window | None = None
    match_criteria_id: str | None = None
    results_per_page: int = field(default=MAX_RESULTS_PER_PAGE, kw_only=True)


def parse_cpe_query(pairs: Iterable[tuple[str, str]]) -> CpeQuery:
    """Validate decoded query-string pairs and build a `CpeQuery`."""
    raw = RawQuery(pairs, PARAMETERS)
    keywords, exact = parse_keywords(raw)
    return CpeQuery(
        cpe_name_id=parse_uuid(raw, "cpeNameId"),
        match_string=parse_match_string(raw, "cpeMatchString", partial=True),
        keywords=keywords,
        keyword_exact=exact,
        last_mod_window=raw.window("lastModStartDate", "lastModEndDate"),
        match_criteria_id=parse_uuid(raw, "matchCriteriaId"),
        **parse_paging(raw, MAX_RESULTS_PER_PAGE),
    )


def parse_uuid(raw: RawQuery, name: str) -> str | None:
    """A UUID parameter, upper-cased."""
    value = raw.text(name)
    if value is None:
        return None
    if not UUID.fullmatch(value):
        raise QueryError(name, f"Invalid {name}: expected a UUID, found '{printable(value)}'")
    return value.upper()


def parse_match_string(raw: RawQuery, name: str, *, partial: bool) -> Cpe | None:
    """A CPE 2.3 match string; `partial` pads missing trailing components with `*`."""
    value = raw.text(name)
    if value is None:
        return None
    try:
        return parse_cpe(value, partial=partial)
    except InputError as error:
        raise QueryError(name, f"Invalid {name}: {error.reason}") from None
