"""The SQLite store's CPE products, match criteria and change history (a `SqliteStore` mixin).

Same rules as the CVE part of `sqlite.py`: every write method is one transaction, an
older record never replaces a newer one, and any change bumps the data generation so
that cached result lists (`ResultCache`) are never served stale. A page is a slice of
the ordered id list of its result set, computed once per set and kept in the cache:
no page is an O(startIndex) scan.
"""

from __future__ import annotations

import sqlite3
from array import array
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from assay.nvd.change_record import ChangeFacts
from assay.nvd.cpe_query import CpeQuery
from assay.nvd.cpe_record import CpeFacts
from assay.nvd.cpematch_query import CpeMatchQuery
from assay.nvd.cpematch_record import MatchFacts
from assay.nvd.cve_record import make_criteria
from assay.nvd.history_query import HistoryQuery
from assay.nvd.source_query import SourceQuery
from assay.nvd.source_record import SourceFacts
from assay.nvd.storage._cache import ResultCache
from assay.nvd.storage._sql import SQLITE, WRITTEN_TABLES, SqlBuilder
from assay.nvd.storage._sql_products import (
    CHANGE_ORDER,
    CPE_ORDER,
    CRITERIA_CVE_SQL,
    CVE_CRITERIA_SQL,
    MATCH_ORDER,
    SOURCE_ORDER,
    STORED_MATCH_SQL,
    CriteriaSource,
    change_where,
    cpe_where,
    cpematch_where,
    source_where,
)
from assay.nvd.storage.interface import Page, UpsertCounts
from assay.nvd.storage.write_rule import stored_stays


class _Facts(Protocol):
    @property
    def record(self) -> bytes: ...


F = TypeVar("F", bound=_Facts)


class _Paged(Protocol):
    @property
    def filter_key(self) -> Hashable: ...

    @property
    def start_index(self) -> int: ...

    @property
    def results_per_page(self) -> int: ...


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

_CPE_INSERT = (
    f"INSERT INTO cpe (cpe_name_id, created, last_modified, deprecated, {_COLUMNS}, "
    "version_key, record) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_CPE_UPDATE = (
    "UPDATE cpe SET created = ?, last_modified = ?, deprecated = ?, "
    + ", ".join(f"{column.strip()} = ?" for column in _COLUMNS.split(","))
    + ", version_key = ?, record = ? WHERE id = ?"
)
_MATCH_INSERT = (
    "INSERT INTO cpe_match (match_criteria_id, created, last_modified, cpe_last_modified, "
    f"status, {_COLUMNS}, version_key, start_key, start_inclusive, end_key, end_inclusive, "
    "record) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_MATCH_UPDATE = (
    "UPDATE cpe_match SET created = ?, last_modified = ?, cpe_last_modified = ?, status = ?, "
    + ", ".join(f"{column.strip()} = ?" for column in _COLUMNS.split(","))
    + ", version_key = ?, start_key = ?, start_inclusive = ?, end_key = ?, end_inclusive = ?, "
    "record = ? WHERE id = ?"
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
# (table, unique key column, ordering column) for the generic upsert and fetch paths.
_TABLES = {
    "cpe": ("cpe_name_id", "last_modified"),
    "cpe_match": ("match_criteria_id", "last_modified"),
    "cve_change": ("cve_change_id", "created"),
    "source": ("source_key", "last_modified"),
}
_COMPONENT_COUNT = 11


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
        def row(facts: CpeFacts) -> tuple[Any, ...]:
            return (
                facts.created,
                facts.last_modified,
                int(facts.deprecated),
                *facts.components,
                facts.version_key,
                facts.record,
            )

        def insert(connection: sqlite3.Connection, facts: CpeFacts) -> None:
            cursor = connection.execute(_CPE_INSERT, (facts.cpe_name_id, *row(facts)))
            connection.execute(
                "INSERT INTO cpe_text (rowid, text) VALUES (?, ?)",
                (cursor.lastrowid, facts.search_text),
            )

        def replace(connection: sqlite3.Connection, row_id: int, facts: CpeFacts) -> None:
            connection.execute(_CPE_UPDATE, (*row(facts), row_id))
            connection.execute("DELETE FROM cpe_text WHERE rowid = ?", (row_id,))
            connection.execute(
                "INSERT INTO cpe_text (rowid, text) VALUES (?, ?)", (row_id, facts.search_text)
            )

        return self._upsert(
            "cpe",
            batch,
            key=lambda facts: facts.cpe_name_id,
            order=lambda facts: facts.last_modified,
            insert=insert,
            replace=replace,
            meta=meta,
        )

    def search_cpes(self, query: CpeQuery) -> Page:
        connection = self._connection()
        source = None
        if query.match_criteria_id is not None:
            source = self._criteria_source(connection, query.match_criteria_id)
        builder = SqlBuilder(SQLITE)
        where = cpe_where(query, builder, source)
        return self._page(
            connection,
            "cpe",
            f"SELECT p.id FROM cpe p WHERE {where} ORDER BY {CPE_ORDER}",
            builder.params,
            query,
            cacheable=query.cpe_name_id is None,
        )

    def _criteria_source(self, connection: sqlite3.Connection, criteria_id: str) -> CriteriaSource:
        row = connection.execute(STORED_MATCH_SQL.format(p="?"), (criteria_id,)).fetchone()
        if row is not None:
            return CriteriaSource(stored_match=int(row[0]))
        row = connection.execute(CVE_CRITERIA_SQL.format(p="?"), (criteria_id,)).fetchone()
        if row is None:
            return CriteriaSource()
        components = tuple(str(value) for value in row[:_COMPONENT_COUNT])
        start_key, start_inclusive, end_key, end_inclusive = row[_COMPONENT_COUNT:]
        return CriteriaSource(
            criteria=make_criteria(
                vulnerable=True,
                components=components,
                version_key=None,
                start_key=start_key,
                start_inclusive=bool(start_inclusive),
                end_key=end_key,
                end_inclusive=bool(end_inclusive),
                match_criteria_id=criteria_id,
            )
        )

    # -- match criteria --------------------------------------------------------------

    def upsert_match_strings(
        self, batch: Sequence[MatchFacts], *, meta: Mapping[str, str] | None = None
    ) -> UpsertCounts:
        def row(facts: MatchFacts) -> tuple[Any, ...]:
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

        def insert_names(connection: sqlite3.Connection, row_id: int, facts: MatchFacts) -> None:
            connection.executemany(
                _MATCH_NAME_INSERT,
                [(row_id, name.cpe_name_id, *name.components) for name in facts.names],
            )

        def insert(connection: sqlite3.Connection, facts: MatchFacts) -> None:
            cursor = connection.execute(_MATCH_INSERT, (facts.match_criteria_id, *row(facts)))
            assert cursor.lastrowid is not None
            insert_names(connection, cursor.lastrowid, facts)

        def replace(connection: sqlite3.Connection, row_id: int, facts: MatchFacts) -> None:
            connection.execute(_MATCH_UPDATE, (*row(facts), row_id))
            connection.execute("DELETE FROM cpe_match_name WHERE match = ?", (row_id,))
            insert_names(connection, row_id, facts)

        return self._upsert(
            "cpe_match",
            batch,
            key=lambda facts: facts.match_criteria_id,
            order=lambda facts: facts.last_modified,
            insert=insert,
            replace=replace,
            meta=meta,
        )

    def search_match_strings(self, query: CpeMatchQuery) -> Page:
        connection = self._connection()
        builder = SqlBuilder(SQLITE)
        where = cpematch_where(query, builder)
        return self._page(
            connection,
            "cpe_match",
            f"SELECT m.id FROM cpe_match m WHERE {where} ORDER BY {MATCH_ORDER}",
            builder.params,
            query,
            cacheable=query.match_criteria_id is None and query.cve_id is None,
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
        def row(facts: ChangeFacts) -> tuple[Any, ...]:
            return (facts.cve_id, facts.event_key, facts.created, facts.record)

        def insert(connection: sqlite3.Connection, facts: ChangeFacts) -> None:
            connection.execute(_CHANGE_INSERT, (facts.cve_change_id, *row(facts)))

        def replace(connection: sqlite3.Connection, row_id: int, facts: ChangeFacts) -> None:
            connection.execute(_CHANGE_UPDATE, (*row(facts), row_id))

        return self._upsert(
            "cve_change",
            batch,
            key=lambda facts: facts.cve_change_id,
            order=lambda facts: facts.created,
            insert=insert,
            replace=replace,
            meta=meta,
        )

    def search_changes(self, query: HistoryQuery) -> Page:
        connection = self._connection()
        builder = SqlBuilder(SQLITE)
        where = change_where(query, builder)
        return self._page(
            connection,
            "cve_change",
            f"SELECT h.id FROM cve_change h WHERE {where} ORDER BY {CHANGE_ORDER}",
            builder.params,
            query,
            cacheable=query.cve_id is None,
        )

    # -- sources (CVE assigners) -----------------------------------------------------

    def upsert_sources(
        self, batch: Sequence[SourceFacts], *, meta: Mapping[str, str] | None = None
    ) -> UpsertCounts:
        def insert_identifiers(
            connection: sqlite3.Connection, row_id: int, facts: SourceFacts
        ) -> None:
            connection.executemany(
                "INSERT INTO source_identifier (source, identifier) VALUES (?, ?)",
                [(row_id, identifier) for identifier in facts.identifiers],
            )

        def insert(connection: sqlite3.Connection, facts: SourceFacts) -> None:
            cursor = connection.execute(
                "INSERT INTO source (source_key, created, last_modified, record) "
                "VALUES (?, ?, ?, ?)",
                (facts.source_key, facts.created, facts.last_modified, facts.record),
            )
            assert cursor.lastrowid is not None
            insert_identifiers(connection, cursor.lastrowid, facts)

        def replace(connection: sqlite3.Connection, row_id: int, facts: SourceFacts) -> None:
            connection.execute(
                "UPDATE source SET created = ?, last_modified = ?, record = ? WHERE id = ?",
                (facts.created, facts.last_modified, facts.record, row_id),
            )
            connection.execute("DELETE FROM source_identifier WHERE source = ?", (row_id,))
            insert_identifiers(connection, row_id, facts)

        return self._upsert(
            "source",
            batch,
            key=lambda facts: facts.source_key,
            order=lambda facts: facts.last_modified,
            insert=insert,
            replace=replace,
            meta=meta,
        )

    def search_sources(self, query: SourceQuery) -> Page:
        connection = self._connection()
        builder = SqlBuilder(SQLITE)
        where = source_where(query, builder)
        return self._page(
            connection,
            "source",
            f"SELECT s.id FROM source s WHERE {where} ORDER BY {SOURCE_ORDER}",
            builder.params,
            query,
            cacheable=False,  # a few hundred rows: the whole list is cheap
        )

    # -- shared paths ----------------------------------------------------------------

    def _upsert(
        self,
        table: str,
        batch: Sequence[F],
        *,
        key: Callable[[F], str],
        order: Callable[[F], str],
        insert: Callable[[sqlite3.Connection, F], None],
        replace: Callable[[sqlite3.Connection, int, F], None],
        meta: Mapping[str, str] | None,
    ) -> UpsertCounts:
        """One transaction: insert new keys, replace when the incoming record is at least
        as new (by `order`) and differs, leave everything else as it is; write `meta`."""
        key_column, order_column = _TABLES[table]
        counts = UpsertCounts()
        latest: dict[str, F] = {}
        for facts in batch:
            newest = latest.get(key(facts))
            if newest is None or order(facts) >= order(newest):
                latest[key(facts)] = facts
        counts.unchanged += len(batch) - len(latest)
        connection = self._connection()
        with _transaction(connection, outer=self._in_transaction()):
            existing: dict[str, tuple[int, str, bytes]] = {}
            keys = list(latest)
            for start in range(0, len(keys), 500):
                chunk = keys[start : start + 500]
                marks = ", ".join("?" * len(chunk))
                for found_key, row_id, found_order, record in connection.execute(
                    f"SELECT {key_column}, id, {order_column}, record FROM {table} "
                    f"WHERE {key_column} IN ({marks})",
                    chunk,
                ):
                    existing[found_key] = (row_id, found_order, record)
            written: list[str] = []
            for item_key, facts in latest.items():
                current = existing.get(item_key)
                if current is None:
                    insert(connection, facts)
                    counts.added += 1
                    written.append(item_key)
                    continue
                row_id, current_order, record = current
                if stored_stays(order(facts), current_order, same=facts.record == record):
                    counts.unchanged += 1
                    continue
                replace(connection, row_id, facts)
                counts.updated += 1
                written.append(item_key)
            if written:
                generation = self._generation(connection) + 1  # what the bump below makes
                for start in range(0, len(written), 500):
                    chunk = written[start : start + 500]
                    connection.execute(
                        f"INSERT OR REPLACE INTO {table}_written (row, generation) "
                        f"SELECT id, ? FROM {table} WHERE {key_column} IN "
                        f"({', '.join('?' * len(chunk))})",
                        [generation, *chunk],
                    )
                connection.execute(
                    "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'"
                )
            write_meta(connection, meta)
        return counts

    def _page(
        self,
        connection: sqlite3.Connection,
        table: str,
        sql: str,
        params: Sequence[object],
        query: _Paged,
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
        by_id: dict[int, bytes] = {}
        for start in range(0, len(wanted), 1000):
            chunk = wanted[start : start + 1000]
            marks = ", ".join("?" * len(chunk))
            by_id.update(
                connection.execute(f"SELECT id, record FROM {table} WHERE id IN ({marks})", chunk)
            )
        return [by_id[row_id] for row_id in wanted if row_id in by_id]


def write_meta(connection: sqlite3.Connection, meta: Mapping[str, str] | None) -> None:
    """Set `meta`'s values inside the caller's transaction."""
    if meta:
        connection.executemany(
            "INSERT INTO meta (key, value) VALUES (?, ?) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            list(meta.items()),
        )


@contextmanager
def _transaction(connection: sqlite3.Connection, *, outer: bool) -> Iterator[None]:
    """One write transaction, or a part of the enclosing one (`outer`, which commits or
    rolls back the whole)."""
    if outer:
        yield
        return
    connection.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise
    connection.execute("COMMIT")
