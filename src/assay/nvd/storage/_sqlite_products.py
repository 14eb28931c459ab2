"""The SQLite store's CPE products, match criteria and change history (a `SqliteStore` mixin).

Same rules as the CVE part of `sqlite.py`: every write method is one transaction, an
older record never replaces a newer one, and any change bumps the data generation so
that cached result lists (`ResultCache`) are never served stale. A page is a slice of
the ordered id list of its result set, computed once per set and kept in the cache:
no page is an O(startIndex) scan.
"""

from __future__ import annotations

import functools
import sqlite3
from array import array
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic

from assay.nvd.change_record import ChangeFacts
from assay.nvd.cpe_query import CpeQuery
from assay.nvd.cpe_record import CpeFacts
from assay.nvd.cpematch_query import CpeMatchQuery
from assay.nvd.cpematch_record import MatchFacts
from assay.nvd.history_query import HistoryQuery
from assay.nvd.source_query import SourceQuery
from assay.nvd.source_record import SourceFacts
from assay.nvd.storage._cache import ResultCache
from assay.nvd.storage._kinds import F, Paged
from assay.nvd.storage._sql import SQLITE, WRITTEN_TABLES, SqlBuilder
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
from assay.nvd.storage._sqlite_io import (
    BUMP_GENERATION,
    chunks,
    select_in,
    write_meta,
    write_transaction,
)
from assay.nvd.storage.interface import Page, UpsertCounts
from assay.nvd.storage.write_rule import batch_writes, stored_stays

_COMPONENTS = (
    "part TEXT NOT NULL, vendor TEXT NOT NULL, product TEXT NOT NULL, version TEXT NOT NULL, "
    "cpe_update TEXT NOT NULL, edition TEXT NOT NULL, cpe_language TEXT NOT NULL, "
    "sw_edition TEXT NOT NULL, target_sw TEXT NOT NULL, target_hw TEXT NOT NULL, "
    "other TEXT NOT NULL"
)
_COLUMNS = (
    "part, vendor, product, version, cpe_update, edition, cpe_language, sw_edition, "
    "target_sw, target_hw, other"
)

PRODUCT_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS cpe (
    id INTEGER PRIMARY KEY,
    cpe_name_id TEXT NOT NULL UNIQUE,
    created TEXT NOT NULL,
    last_modified TEXT NOT NULL,
    deprecated INTEGER NOT NULL,
    {_COMPONENTS},
    version_key BLOB,
    record BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS cpe_by_created ON cpe (created, cpe_name_id);
CREATE INDEX IF NOT EXISTS cpe_by_product ON cpe (vendor, product, created, cpe_name_id);
CREATE INDEX IF NOT EXISTS cpe_by_last_modified ON cpe (last_modified);
CREATE VIRTUAL TABLE IF NOT EXISTS cpe_text USING fts5 (
    text, tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TABLE IF NOT EXISTS cpe_match (
    id INTEGER PRIMARY KEY,
    match_criteria_id TEXT NOT NULL UNIQUE,
    created TEXT NOT NULL,
    last_modified TEXT NOT NULL,
    cpe_last_modified TEXT,
    status TEXT NOT NULL,
    {_COMPONENTS},
    version_key BLOB,
    start_key BLOB, start_inclusive INTEGER NOT NULL,
    end_key BLOB, end_inclusive INTEGER NOT NULL,
    record BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS cpe_match_by_created ON cpe_match (created, match_criteria_id);
CREATE INDEX IF NOT EXISTS cpe_match_by_product ON cpe_match (product, vendor);
CREATE INDEX IF NOT EXISTS cpe_match_by_last_modified ON cpe_match (last_modified);
CREATE INDEX IF NOT EXISTS cpe_match_by_cpe_last_modified ON cpe_match (cpe_last_modified);
CREATE TABLE IF NOT EXISTS cpe_match_name (
    match INTEGER NOT NULL,
    cpe_name_id TEXT NOT NULL,
    {_COMPONENTS}
);
CREATE INDEX IF NOT EXISTS cpe_match_name_by_match ON cpe_match_name (match);
CREATE INDEX IF NOT EXISTS cpe_match_name_by_product ON cpe_match_name (product, vendor, version);
CREATE TABLE IF NOT EXISTS cve_change (
    id INTEGER PRIMARY KEY,
    cve_change_id TEXT NOT NULL UNIQUE,
    cve_id TEXT NOT NULL,
    event_key TEXT NOT NULL,
    created TEXT NOT NULL,
    record BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS cve_change_by_cve ON cve_change (cve_id, created, cve_change_id);
CREATE INDEX IF NOT EXISTS cve_change_by_created ON cve_change (created, cve_change_id);
CREATE INDEX IF NOT EXISTS cve_change_by_event ON cve_change (event_key, created, cve_change_id);
CREATE TABLE IF NOT EXISTS source (
    id INTEGER PRIMARY KEY,
    source_key TEXT NOT NULL UNIQUE,
    created TEXT NOT NULL,
    last_modified TEXT NOT NULL,
    record BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS source_by_created ON source (created, source_key);
CREATE TABLE IF NOT EXISTS source_identifier (
    source INTEGER NOT NULL,
    identifier TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS source_identifier_by_identifier ON source_identifier (identifier);
CREATE INDEX IF NOT EXISTS source_identifier_by_source ON source_identifier (source);
""" + "".join(
    f"""CREATE TABLE IF NOT EXISTS {table}_written (
    row INTEGER PRIMARY KEY,
    generation INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS {table}_written_by_generation ON {table}_written (generation);
"""
    for table in WRITTEN_TABLES
)

_COLUMNS_SET = ", ".join(f"{column.strip()} = ?" for column in _COLUMNS.split(","))
_CPE_INSERT = (
    f"INSERT INTO cpe (cpe_name_id, created, last_modified, deprecated, {_COLUMNS}, "
    "version_key, record) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_CPE_UPDATE = (
    "UPDATE cpe SET created = ?, last_modified = ?, deprecated = ?, "
    f"{_COLUMNS_SET}, version_key = ?, record = ? WHERE id = ?"
)
_MATCH_INSERT = (
    "INSERT INTO cpe_match (match_criteria_id, created, last_modified, cpe_last_modified, "
    f"status, {_COLUMNS}, version_key, start_key, start_inclusive, end_key, end_inclusive, "
    "record) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_MATCH_UPDATE = (
    "UPDATE cpe_match SET created = ?, last_modified = ?, cpe_last_modified = ?, status = ?, "
    f"{_COLUMNS_SET}, version_key = ?, start_key = ?, start_inclusive = ?, end_key = ?, "
    "end_inclusive = ?, record = ? WHERE id = ?"
)
_MATCH_NAME_INSERT = (
    f"INSERT INTO cpe_match_name (match, cpe_name_id, {_COLUMNS}) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_CHANGE_INSERT = (
    "INSERT INTO cve_change (cve_change_id, cve_id, event_key, created, record) "
    "VALUES (?, ?, ?, ?, ?)"
)
_CHANGE_UPDATE = (
    "UPDATE cve_change SET cve_id = ?, event_key = ?, created = ?, record = ? WHERE id = ?"
)


class ProductStoreMixin:
    """CPE, match-criteria and change-history storage for `SqliteStore`."""

    _cache: ResultCache

    if TYPE_CHECKING:

        def _connection(self) -> sqlite3.Connection: ...

        def _generation(self, connection: sqlite3.Connection) -> int: ...

        def _in_transaction(self) -> bool: ...

    # -- products --------------------------------------------------------------------

    def upsert_cpes(
        self, batch: Sequence[CpeFacts], *, meta: Mapping[str, str] | None = None
    ) -> UpsertCounts:
        return self._upsert(_CPES, batch, meta)

    def search_cpes(self, query: CpeQuery) -> Page:
        source = None
        if query.match_criteria_id is not None:
            source = self._criteria_source(self._connection(), query.match_criteria_id)
        where = functools.partial(cpe_where, query, source=source)
        return self._search(CPE_LISTING, query, where, cacheable=query.cpe_name_id is None)

    def _criteria_source(self, connection: sqlite3.Connection, criteria_id: str) -> CriteriaSource:
        return resolve_criteria_source(
            lambda sql: connection.execute(sql.format(p="?"), (criteria_id,)).fetchone(),
            criteria_id,
        )

    # -- match criteria --------------------------------------------------------------

    def upsert_match_strings(
        self, batch: Sequence[MatchFacts], *, meta: Mapping[str, str] | None = None
    ) -> UpsertCounts:
        return self._upsert(_MATCHES, batch, meta)

    def search_match_strings(self, query: CpeMatchQuery) -> Page:
        cacheable = query.match_criteria_id is None and query.cve_id is None
        return self._search(
            MATCH_LISTING, query, functools.partial(cpematch_where, query), cacheable=cacheable
        )

    def cve_naming_criteria(self, match_criteria_id: str) -> str | None:
        row = (
            self._connection()
            .execute(CRITERIA_CVE_SQL.format(p="?"), (match_criteria_id.upper(),))
            .fetchone()
        )
        return None if row is None else str(row[0])

    # -- change history --------------------------------------------------------------

    def upsert_changes(
        self, batch: Sequence[ChangeFacts], *, meta: Mapping[str, str] | None = None
    ) -> UpsertCounts:
        return self._upsert(_CHANGES, batch, meta)

    def search_changes(self, query: HistoryQuery) -> Page:
        where = functools.partial(change_where, query)
        return self._search(CHANGE_LISTING, query, where, cacheable=query.cve_id is None)

    # -- sources (CVE assigners) -----------------------------------------------------

    def upsert_sources(
        self, batch: Sequence[SourceFacts], *, meta: Mapping[str, str] | None = None
    ) -> UpsertCounts:
        return self._upsert(_SOURCES, batch, meta)

    def search_sources(self, query: SourceQuery) -> Page:
        # A few hundred rows: the whole list is cheap.
        where = functools.partial(source_where, query)
        return self._search(SOURCE_LISTING, query, where, cacheable=False)

    # -- shared paths ----------------------------------------------------------------

    def _upsert(
        self, table: _Table[F], batch: Sequence[F], meta: Mapping[str, str] | None
    ) -> UpsertCounts:
        """One transaction: insert new keys, replace when the incoming record is at least
        as new (by the table's `order`) and differs, leave everything else as it is;
        write `meta`."""
        key_column, order_column = table.key_column, table.order_column
        latest, counts = batch_writes(batch, table.key, table.order)
        connection = self._connection()
        with write_transaction(connection, outer=self._in_transaction()):
            existing: dict[str, tuple[int, str, bytes]] = {
                found_key: (row_id, found_order, record)
                for found_key, row_id, found_order, record in select_in(
                    connection,
                    f"SELECT {key_column}, id, {order_column}, record FROM {table.name} "
                    f"WHERE {key_column} IN",
                    list(latest),
                )
            }
            written: list[str] = []
            for item_key, facts in latest.items():
                current = existing.get(item_key)
                if current is None:
                    table.add(connection, facts)
                    counts.added += 1
                elif stored_stays(table.order(facts), current[1], same=facts.record == current[2]):
                    counts.unchanged += 1
                    continue
                else:
                    table.replace(connection, current[0], facts)
                    counts.updated += 1
                written.append(item_key)
            self._mark_written(connection, table, written)
            write_meta(connection, meta)
        return counts

    def _mark_written(
        self, connection: sqlite3.Connection, table: _Table[F], keys: list[str]
    ) -> None:
        """Advance the generation and mark the rows of `keys` written at it (nothing when
        there are none)."""
        if not keys:
            return
        generation = self._generation(connection) + 1  # what the bump below makes
        for chunk in chunks(keys, 500):
            connection.execute(
                f"INSERT OR REPLACE INTO {table.name}_written (row, generation) "
                f"SELECT id, ? FROM {table.name} WHERE {table.key_column} IN "
                f"({', '.join('?' * len(chunk))})",
                [generation, *chunk],
            )
        connection.execute(BUMP_GENERATION)

    def _search(
        self,
        listing: Listing,
        query: Paged,
        where: Callable[[SqlBuilder], str],
        *,
        cacheable: bool,
    ) -> Page:
        """A page of the rows of a listing that `where` selects, in the listing's order."""
        builder = SqlBuilder(SQLITE)
        sql = listing.ids_sql(where(builder))
        return self._page(
            self._connection(), listing.table, sql, builder.params, query, cacheable=cacheable
        )

    def _page(
        self,
        connection: sqlite3.Connection,
        table: str,
        sql: str,
        params: Sequence[object],
        query: Paged,
        *,
        cacheable: bool,
    ) -> Page:
        """The ordered id list of a result set (cached when it may be large), sliced."""
        if not cacheable:  # a handful of rows at most: no generation read, no cache
            ids = array("q", (row[0] for row in connection.execute(sql, params)))
        else:
            key = (self._generation(connection), query.filter_key)
            cached = self._cache.get(key)
            if cached is None:
                cached = array("q", (row[0] for row in connection.execute(sql, params)))
                self._cache.put(key, cached)
            ids = cached
        page_ids = ids[query.start_index : query.start_index + query.results_per_page]
        return Page(len(ids), self._fetch(connection, table, page_ids))

    def _fetch(self, connection: sqlite3.Connection, table: str, ids: Iterable[int]) -> list[bytes]:
        assert table in _TABLES
        wanted = list(ids)
        by_id: dict[int, bytes] = dict(
            select_in(connection, f"SELECT id, record FROM {table} WHERE id IN", wanted, 1000)
        )
        return [by_id[row_id] for row_id in wanted if row_id in by_id]


@dataclass(frozen=True, slots=True)
class _Dependents(Generic[F]):
    """The rows of another table that belong to a stored row (its search text, its
    names): written with it, and anew when it is replaced."""

    insert: str
    delete: str  # all of a row's, by its id
    rows: Callable[[int, F], list[tuple[object, ...]]]

    def add(self, connection: sqlite3.Connection, row_id: int, facts: F) -> None:
        connection.executemany(self.insert, self.rows(row_id, facts))


@dataclass(frozen=True, slots=True)
class _Table(Generic[F]):
    """How one kind of record is stored: its row (`insert` takes the key, then
    `values`; `update` takes `values`, then the row id), what tells its versions apart
    (`order_column`), and the rows that depend on it."""

    name: str
    key_column: str  # unique; the facts name it as the table does
    order_column: str
    insert: str
    update: str
    values: Callable[[F], tuple[object, ...]]
    dependents: _Dependents[F] | None = None

    def key(self, facts: F) -> str:
        return str(getattr(facts, self.key_column))

    def order(self, facts: F) -> str:
        return str(getattr(facts, self.order_column))

    def add(self, connection: sqlite3.Connection, facts: F) -> None:
        cursor = connection.execute(self.insert, (self.key(facts), *self.values(facts)))
        if self.dependents is not None:
            assert cursor.lastrowid is not None
            self.dependents.add(connection, cursor.lastrowid, facts)

    def replace(self, connection: sqlite3.Connection, row_id: int, facts: F) -> None:
        connection.execute(self.update, (*self.values(facts), row_id))
        if self.dependents is not None:
            connection.execute(self.dependents.delete, (row_id,))
            self.dependents.add(connection, row_id, facts)


def _cpe_values(facts: CpeFacts) -> tuple[object, ...]:
    return (
        facts.created,
        facts.last_modified,
        int(facts.deprecated),
        *facts.components,
        facts.version_key,
        facts.record,
    )


def _match_values(facts: MatchFacts) -> tuple[object, ...]:
    c = facts.criteria
    return (
        facts.created,
        facts.last_modified,
        facts.cpe_last_modified,
        facts.status,
        *c.components,
        c.version_key,
        c.start_key,
        int(c.start_inclusive),
        c.end_key,
        int(c.end_inclusive),
        facts.record,
    )


_CPES: _Table[CpeFacts] = _Table(
    "cpe",
    "cpe_name_id",
    "last_modified",
    _CPE_INSERT,
    _CPE_UPDATE,
    _cpe_values,
    _Dependents(
        "INSERT INTO cpe_text (rowid, text) VALUES (?, ?)",
        "DELETE FROM cpe_text WHERE rowid = ?",
        lambda row_id, facts: [(row_id, facts.search_text)],
    ),
)
_MATCHES: _Table[MatchFacts] = _Table(
    "cpe_match",
    "match_criteria_id",
    "last_modified",
    _MATCH_INSERT,
    _MATCH_UPDATE,
    _match_values,
    _Dependents(
        _MATCH_NAME_INSERT,
        "DELETE FROM cpe_match_name WHERE match = ?",
        lambda row_id, facts: [
            (row_id, name.cpe_name_id, *name.components) for name in facts.names
        ],
    ),
)
_CHANGES: _Table[ChangeFacts] = _Table(
    "cve_change",
    "cve_change_id",
    "created",
    _CHANGE_INSERT,
    _CHANGE_UPDATE,
    lambda facts: (facts.cve_id, facts.event_key, facts.created, facts.record),
)
_SOURCES: _Table[SourceFacts] = _Table(
    "source",
    "source_key",
    "last_modified",
    "INSERT INTO source (source_key, created, last_modified, record) VALUES (?, ?, ?, ?)",
    "UPDATE source SET created = ?, last_modified = ?, record = ? WHERE id = ?",
    lambda facts: (facts.created, facts.last_modified, facts.record),
    _Dependents(
        "INSERT INTO source_identifier (source, identifier) VALUES (?, ?)",
        "DELETE FROM source_identifier WHERE source = ?",
        lambda row_id, facts: [(row_id, identifier) for identifier in facts.identifiers],
    ),
)
_TABLES: dict[str, _Table[Any]] = {
    table.name: table for table in (_CPES, _MATCHES, _CHANGES, _SOURCES)
}
