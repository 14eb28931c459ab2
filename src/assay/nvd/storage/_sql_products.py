"""Query translation for the CPE, match-criteria and change-history APIs, per dialect.

Pure (no database import), like `_sql`: values only ever travel as bound parameters.
Every backend provides these tables (SQLite's DDL is in `_sqlite_products.py`):

    cpe             id, cpe_name_id (unique, upper-case), created, last_modified,
                    deprecated, the 11 component columns of `_sql.COMPONENT_COLUMNS`
                    (normalized, as `assay.nvd.cpe.parse_cpe` gives them), version_key
                    (NULL for `*` and `-`), record
    cpe_match       id, match_criteria_id (unique), created, last_modified,
                    cpe_last_modified, status, the 11 component columns of the criteria,
                    version_key, start_key, start_inclusive, end_key, end_inclusive
                    (as in `criteria`), record
    cpe_match_name  match (cpe_match.id), cpe_name_id, the 11 component columns: one row
                    per entry of the record's `matches` (the criteria's expansion)
    cve_change      id, cve_change_id (unique), cve_id, event_key, created, record
    source          id, source_key (unique: the first sourceIdentifier), created,
                    last_modified, record
    source_identifier  source (source.id), identifier: one row per sourceIdentifier

Keyword search over product titles and reference links uses the FTS5 table `cpe_text`
(rowid = cpe.id) in SQLite and the `tsvector` column `cpe.search_vector` in PostgreSQL
(the `search_text` of `CpeFacts`, tokenized as the CVE descriptions are, so both
backends find the same words).

Orders (stable, so `startIndex` paging is consistent): products by `created` then
`cpeNameId` (NVD lists products by creation), match criteria by `created` then
`matchCriteriaId`, changes by `created` then `cveChangeId`, sources by `created` then
the order they were stored in (the upstream's order, which NVD does not document).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from assay.nvd.cpe import Cpe
from assay.nvd.cpe_query import CpeQuery
from assay.nvd.cpematch_query import CpeMatchQuery
from assay.nvd.cve_record import Criteria, make_criteria
from assay.nvd.history_query import HistoryQuery, event_key
from assay.nvd.source_query import SourceQuery
from assay.nvd.storage._sql import (
    COMPONENT_COLUMNS,
    SqlBuilder,
    TextSearch,
    all_of,
    component_equalities,
    keyword_search,
    window_condition,
    written_since,
)

CPE_ORDER = "p.created, p.cpe_name_id"
MATCH_ORDER = "m.created, m.match_criteria_id"
CHANGE_ORDER = "h.created, h.cve_change_id"
SOURCE_ORDER = "s.created, s.id"  # ties in upstream order, as imported


@dataclass(frozen=True, slots=True)
class Listing:
    """What an API lists: the rows of `table` (read as `alias`), in `order`."""

    table: str
    alias: str
    order: str

    def ids_sql(self, where: str) -> str:
        """The ordered ids of the rows `where` selects."""
        alias = self.alias
        return f"SELECT {alias}.id FROM {self.table} {alias} WHERE {where} ORDER BY {self.order}"


CPE_LISTING = Listing("cpe", "p", CPE_ORDER)
MATCH_LISTING = Listing("cpe_match", "m", MATCH_ORDER)
CHANGE_LISTING = Listing("cve_change", "h", CHANGE_ORDER)
SOURCE_LISTING = Listing("source", "s", SOURCE_ORDER)

# How a matchCriteriaId resolves for the CPE API: the stored record, else a criteria
# some CVE configuration uses now (the same id always names the same criteria).
STORED_MATCH_SQL = "SELECT id FROM cpe_match WHERE match_criteria_id = {p}"
CVE_CRITERIA_SQL = (
    "SELECT " + ", ".join(COMPONENT_COLUMNS) + ", start_key, start_inclusive, end_key, "
    "end_inclusive FROM criteria WHERE match_criteria_id = {p} AND EXISTS "
    "(SELECT 1 FROM cve_criteria l WHERE l.criteria = criteria.id) LIMIT 1"
)

CRITERIA_CVE_SQL = (
    "SELECT c.cve_id FROM criteria k JOIN cve_criteria l ON l.criteria = k.id "
    "JOIN cve c ON c.id = l.cve WHERE k.match_criteria_id = {p} ORDER BY c.cve_id LIMIT 1"
)
"""A CVE whose configurations name a match criteria (by its id), the first by id."""


@dataclass(frozen=True, slots=True)
class CriteriaSource:
    """Where the expansion of a `matchCriteriaId` comes from (see `cpe_where`)."""

    stored_match: int | None = None  # cpe_match.id: the record's own `matches`
    criteria: Criteria | None = None  # else computed from a CVE configuration's criteria


RowLookup: TypeAlias = Callable[[str], Sequence[Any] | None]
"""Runs one of the statements above with its `{p}` bound to a matchCriteriaId: the first
row, or None."""


def resolve_criteria_source(lookup: RowLookup, criteria_id: str) -> CriteriaSource:
    """How `criteria_id` resolves: its stored record, else a criteria a CVE uses now,
    else nothing (the same steps and answer in every backend)."""
    row = lookup(STORED_MATCH_SQL)
    if row is not None:
        return CriteriaSource(stored_match=int(row[0]))
    row = lookup(CVE_CRITERIA_SQL)
    if row is None:
        return CriteriaSource()
    components = tuple(str(value) for value in row[: len(COMPONENT_COLUMNS)])
    start_key, start_inclusive, end_key, end_inclusive = row[len(COMPONENT_COLUMNS) :]
    return CriteriaSource(
        criteria=make_criteria(
            vulnerable=True,
            components=components,
            version_key=None,
            start_key=_blob(start_key),
            start_inclusive=bool(start_inclusive),
            end_key=_blob(end_key),
            end_inclusive=bool(end_inclusive),
            match_criteria_id=criteria_id,
        )
    )


def _blob(value: Any) -> bytes | None:
    """A key column as bytes (a driver may give a buffer), NULL as None."""
    return None if value is None else bytes(value)


def cpe_where(query: CpeQuery, builder: SqlBuilder, source: CriteriaSource | None) -> str:
    """The WHERE clause (over `cpe p`) of a CPE query; `1 = 1` when unfiltered.

    `source` is how `query.match_criteria_id` resolved (the store looks it up first);
    an id that resolves to nothing matches no product.
    """
    conditions = written_since("p", "cpe", query.since_generation, builder)
    if query.cpe_name_id is not None:
        conditions.append(f"p.cpe_name_id = {builder.param(query.cpe_name_id)}")
    if query.match_string is not None:
        conditions.extend(pattern_conditions(query.match_string, builder, "p"))
    if query.keywords:
        conditions.append(keyword_search(builder, query.keywords, query.keyword_exact, CPE_TEXT))
    if query.last_mod_window is not None:
        conditions.append(window_condition("p.last_modified", query.last_mod_window, builder))
    if query.match_criteria_id is not None:
        conditions.extend(_criteria_conditions(source or CriteriaSource(), builder))
    return all_of(conditions)


CPE_TEXT = TextSearch("p", "cpe_text")


def _criteria_conditions(source: CriteriaSource, builder: SqlBuilder) -> list[str]:
    """The products a match criteria expands to: the stored record's own `matches`,
    else those its criteria stands for, else none."""
    if source.stored_match is not None:
        return [
            "p.cpe_name_id IN (SELECT cpe_name_id FROM cpe_match_name "
            f"WHERE match = {builder.param(source.stored_match)})"
        ]
    if source.criteria is not None:
        return expansion_conditions(source.criteria, builder, "p")
    return ["1 = 0"]


def pattern_conditions(pattern: Cpe, builder: SqlBuilder, alias: str) -> list[str]:
    """`matches_match_string`: every component of the pattern other than `*` is equal."""
    return component_equalities(pattern.components, builder, f"{alias}.")


def expansion_conditions(criteria: Criteria, builder: SqlBuilder, alias: str) -> list[str]:
    """`criteria_expands_to` over the product rows `alias`: the dictionary names a
    criteria stands for when NVD's own expansion is not stored."""
    parts = component_equalities(criteria.components, builder, f"{alias}.", with_version=False)
    version = criteria.components[3]
    if version != "*":
        parts.append(f"{alias}.version = {builder.param(version)}")
        return parts
    if criteria.start_key is None and criteria.end_key is None:
        return parts
    key = f"{alias}.version_key"
    parts.append(f"{key} IS NOT NULL")
    for bound, inclusive, beyond in (
        (criteria.start_key, criteria.start_inclusive, ">"),
        (criteria.end_key, criteria.end_inclusive, "<"),
    ):
        if bound is not None:
            operator = beyond + "=" if inclusive else beyond
            parts.append(f"{key} {operator} {builder.param(bound)}")
    return parts


def cpematch_where(query: CpeMatchQuery, builder: SqlBuilder) -> str:
    """The WHERE clause (over `cpe_match m`) of a match-criteria query."""
    p = builder.param
    conditions = written_since("m", "cpe_match", query.since_generation, builder)
    if query.cve_id is not None:
        conditions.append(
            "m.match_criteria_id IN (SELECT k.match_criteria_id FROM criteria k "
            "JOIN cve_criteria l ON l.criteria = k.id JOIN cve c ON c.id = l.cve "
            f"WHERE c.cve_id = {p(query.cve_id)})"
        )
    if query.match_criteria_id is not None:
        conditions.append(f"m.match_criteria_id = {p(query.match_criteria_id)}")
    if query.match_string is not None:
        conditions.extend(pattern_conditions(query.match_string, builder, "m"))
    if query.last_mod_window is not None:
        window = query.last_mod_window
        conditions.append(
            f"({window_condition('m.last_modified', window, builder)} "
            f"OR {window_condition('m.cpe_last_modified', window, builder)})"
        )
    return all_of(conditions)


def change_where(query: HistoryQuery, builder: SqlBuilder) -> str:
    """The WHERE clause (over `cve_change h`) of a change-history query."""
    p = builder.param
    conditions = written_since("h", "cve_change", query.since_generation, builder)
    if query.cve_id is not None:
        conditions.append(f"h.cve_id = {p(query.cve_id)}")
    if query.cve_ids is not None:
        conditions.append(f"h.cve_id IN {builder.params_in(query.cve_ids)}")
    if query.event_name is not None:
        conditions.append(f"h.event_key = {p(event_key(query.event_name))}")
    if query.change_window is not None:
        conditions.append(window_condition("h.created", query.change_window, builder))
    return all_of(conditions)


def source_where(query: SourceQuery, builder: SqlBuilder) -> str:
    """The WHERE clause (over `source s`) of a Source API query."""
    p = builder.param
    conditions = written_since("s", "source", query.since_generation, builder)
    if query.source_identifier is not None:
        conditions.append(
            "s.id IN (SELECT i.source FROM source_identifier i "
            f"WHERE i.identifier = {p(query.source_identifier)})"
        )
    if query.last_mod_window is not None:
        conditions.append(window_condition("s.last_modified", query.last_mod_window, builder))
    return all_of(conditions)
