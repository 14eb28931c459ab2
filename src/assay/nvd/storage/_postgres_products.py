"""The PostgreSQL store's CPE products, match criteria and change history (a mixin).

The same rules and answers as `_sqlite_products.py`, over the same queries
(`_sql_products.py`): every write is one transaction, an older record never replaces a
newer one, a change bumps the data generation, and a page is a slice of the ordered id
list of its result set (cached when large). Orders are `COLLATE "C"` columns, so they
sort as SQLite sorts.
"""

from __future__ import annotations

import functools
from array import array
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

from assay.nvd.change_record import ChangeFacts
from assay.nvd.cpe_query import CpeQuery
from assay.nvd.cpe_record import CpeFacts
from assay.nvd.cpematch_query import CpeMatchQuery
from assay.nvd.cpematch_record import MatchFacts
from assay.nvd.history_query import HistoryQuery
from assay.nvd.source_query import SourceQuery
from assay.nvd.source_record import SourceFacts
from assay.nvd.storage._kinds import F, Paged
from assay.nvd.storage._postgres_rows import (
    CHANGE_COLUMNS,
    CPE_COLUMNS,
    MATCH_COLUMNS,
    MATCH_NAME_COLUMNS,
    SOURCE_COLUMNS,
    SOURCE_IDENTIFIER_COLUMNS,
    ChildRows,
    Connection,
    RecordRows,
    bound,
    text,
    texts,
)
from assay.nvd.storage._sql import POSTGRES, SqlBuilder, tsvector_literal
from assay.nvd.storage._sql_products import (
    CHANGE_LISTING,
    CPE_LISTING,
    CRITERIA_CVE_SQL,
    MATCH_LISTING,
    SOURCE_LISTING,
    CriteriaSource,
    Listing,
    change_where,
    cpe_where,
    cpematch_where,
    resolve_criteria_source,
    source_where,
)
from assay.nvd.storage.interface import Page, UpsertCounts


class ProductStoreMixin:
    """CPE, match-criteria and change-history storage for `PostgresStore`."""

    if TYPE_CHECKING:

        def _using(self, action: str) -> AbstractContextManager[Connection]: ...

        def _upsert(
            self, rows: RecordRows[F], batch: Sequence[F], meta: Mapping[str, str] | None
        ) -> UpsertCounts: ...

        def _page(
            self,
            connection: Connection,
            table: str,
            ids_of: Callable[[int], array[int]],
            query: Paged,
            *,
            cacheable: bool,
        ) -> Page: ...

    # -- products --------------------------------------------------------------------

    def upsert_cpes(
        self, batch: Sequence[CpeFacts], *, meta: Mapping[str, str] | None = None
    ) -> UpsertCounts:
        return self._upsert(_CPES, batch, meta)

    def search_cpes(self, query: CpeQuery) -> Page:
        with self._using("searching CPE products") as connection:
            source = None
            if query.match_criteria_id is not None:
                source = self._criteria_source(connection, query.match_criteria_id)
            where = functools.partial(cpe_where, query, source=source)
            cacheable = query.cpe_name_id is None
            return self._search(connection, CPE_LISTING, query, where, cacheable=cacheable)

    def _criteria_source(self, connection: Connection, criteria_id: str) -> CriteriaSource:
        key = text(criteria_id)
        return resolve_criteria_source(
            lambda sql: connection.execute(sql.format(p="%s"), (key,)).fetchone(), criteria_id
        )

    # -- match criteria --------------------------------------------------------------

    def upsert_match_strings(
        self, batch: Sequence[MatchFacts], *, meta: Mapping[str, str] | None = None
    ) -> UpsertCounts:
        return self._upsert(_MATCHES, batch, meta)

    def search_match_strings(self, query: CpeMatchQuery) -> Page:
        where = functools.partial(cpematch_where, query)
        with self._using("searching match criteria") as connection:
            return self._search(
                connection,
                MATCH_LISTING,
                query,
                where,
                cacheable=query.match_criteria_id is None and query.cve_id is None,
            )

    def cve_naming_criteria(self, match_criteria_id: str) -> str | None:
        with self._using("searching match criteria") as connection:
            row = connection.execute(
                CRITERIA_CVE_SQL.format(p="%s"), (match_criteria_id.upper(),)
            ).fetchone()
        return None if row is None else str(row[0])

    # -- change history --------------------------------------------------------------

    def upsert_changes(
        self, batch: Sequence[ChangeFacts], *, meta: Mapping[str, str] | None = None
    ) -> UpsertCounts:
        return self._upsert(_CHANGES, batch, meta)

    def search_changes(self, query: HistoryQuery) -> Page:
        where = functools.partial(change_where, query)
        with self._using("searching CVE changes") as connection:
            return self._search(
                connection, CHANGE_LISTING, query, where, cacheable=query.cve_id is None
            )

    # -- sources (CVE assigners) -----------------------------------------------------

    def upsert_sources(
        self, batch: Sequence[SourceFacts], *, meta: Mapping[str, str] | None = None
    ) -> UpsertCounts:
        return self._upsert(_SOURCES, batch, meta)

    def search_sources(self, query: SourceQuery) -> Page:
        where = functools.partial(source_where, query)
        with self._using("searching sources") as connection:
            # A few hundred rows: the whole list is cheap.
            return self._search(connection, SOURCE_LISTING, query, where, cacheable=False)

    def _search(
        self,
        connection: Connection,
        listing: Listing,
        query: Paged,
        where: Callable[[SqlBuilder], str],
        *,
        cacheable: bool,
    ) -> Page:
        """A page of the rows of a listing that `where` selects, in the listing's order."""
        builder = SqlBuilder(POSTGRES)
        sql, params = listing.ids_sql(where(builder)), bound(builder.params)
        return self._page(
            connection,
            listing.table,
            lambda _generation: array(
                "q", (int(row[0]) for row in connection.execute(sql, params))
            ),
            query,
            cacheable=cacheable,
        )


def _cpe_values(facts: CpeFacts) -> tuple[object, ...]:
    return (
        facts.cpe_name_id,
        facts.created,
        facts.last_modified,
        int(facts.deprecated),
        *texts(facts.components),
        facts.version_key,
        tsvector_literal(facts.search_text),
        facts.record,
    )


def _match_values(facts: MatchFacts) -> tuple[object, ...]:
    c = facts.criteria
    return (
        facts.match_criteria_id,
        facts.created,
        facts.last_modified,
        facts.cpe_last_modified,
        text(facts.status),
        *texts(c.components),
        c.version_key,
        c.start_key,
        int(c.start_inclusive),
        c.end_key,
        int(c.end_inclusive),
        facts.record,
    )


def _match_names(row_id: int, facts: MatchFacts) -> Iterator[tuple[object, ...]]:
    for name in facts.names:
        yield (row_id, name.cpe_name_id, *texts(name.components))


def _change_values(facts: ChangeFacts) -> tuple[object, ...]:
    return (facts.cve_change_id, facts.cve_id, text(facts.event_key), facts.created, facts.record)


def _source_values(facts: SourceFacts) -> tuple[object, ...]:
    return (text(facts.source_key), facts.created, facts.last_modified, facts.record)


def _source_identifiers(row_id: int, facts: SourceFacts) -> Iterator[tuple[object, ...]]:
    for identifier in facts.identifiers:
        yield (row_id, text(identifier))


_CPES: RecordRows[CpeFacts] = RecordRows(
    "CPE products",
    "cpe",
    "cpe_name_id",
    "last_modified",
    CPE_COLUMNS,
    _cpe_values,
    key=lambda facts: facts.cpe_name_id,
    order=lambda facts: facts.last_modified,
)
_MATCHES: RecordRows[MatchFacts] = RecordRows(
    "match criteria",
    "cpe_match",
    "match_criteria_id",
    "last_modified",
    MATCH_COLUMNS,
    _match_values,
    key=lambda facts: facts.match_criteria_id,
    order=lambda facts: facts.last_modified,
    children=ChildRows("cpe_match_name", MATCH_NAME_COLUMNS, "match", _match_names),
)
_CHANGES: RecordRows[ChangeFacts] = RecordRows(
    "CVE changes",
    "cve_change",
    "cve_change_id",
    "created",
    CHANGE_COLUMNS,
    _change_values,
    key=lambda facts: facts.cve_change_id,
    order=lambda facts: facts.created,
)
_SOURCES: RecordRows[SourceFacts] = RecordRows(
    "sources",
    "source",
    "source_key",
    "last_modified",
    SOURCE_COLUMNS,
    _source_values,
    key=lambda facts: text(facts.source_key),
    order=lambda facts: facts.last_modified,
    children=ChildRows(
        "source_identifier", SOURCE_IDENTIFIER_COLUMNS, "source", _source_identifiers
    ),
)
