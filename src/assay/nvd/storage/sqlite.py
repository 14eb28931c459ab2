"""The embedded store: stdlib `sqlite3`, one file, WAL mode, a connection per thread."""

from __future__ import annotations

import fcntl
import os
import re
import sqlite3
import threading
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import ParamSpec, TypeVar

import orjson

from assay.errors import StoreBusy, StoreError
from assay.nvd.cve_query import CveQuery
from assay.nvd.cve_record import Criteria, CveFacts, cve_facts
from assay.nvd.storage._api_order import consecutive
from assay.nvd.storage._cache import ResultCache
from assay.nvd.storage._cve5_sql import SQLITE_CVE5_SCHEMA, SqliteCve5, SqliteExecutor
from assay.nvd.storage._decoded import DecodedRecords, KeptCves
from assay.nvd.storage._distinct import RememberedIds
from assay.nvd.storage._osv_sql import SQLITE_OSV_SCHEMA
from assay.nvd.storage._records import pack, unpack
from assay.nvd.storage._service_rows import SQLITE_SERVICE_SCHEMA
from assay.nvd.storage._source_changes import backfill
from assay.nvd.storage._sql import SQLITE, SqlBuilder, cve_ids_select, cve_where
from assay.nvd.storage._sqlite_io import (
    BUMP_GENERATION,
    read_snapshot,
    select_in,
    store_errors,
    write_meta,
    write_transaction,
)
from assay.nvd.storage._sqlite_order import WALK_ORDERS, ApiOrder, keyword_ids
from assay.nvd.storage._sqlite_osv import OsvStoreMixin
from assay.nvd.storage._sqlite_products import PRODUCT_SCHEMA, ProductStoreMixin
from assay.nvd.storage._sqlite_service import ServiceStoreMixin
from assay.nvd.storage.interface import Page, UpsertCounts, check_lock_name
from assay.nvd.storage.write_rule import batch_writes, stored_stays

T = TypeVar("T")
P = ParamSpec("P")

SCHEMA_VERSION = "3"
# Schema 3 is schema 2 whose records may be written in stored format 3 (LZ4 blocks,
# `_records.py`), which an assay reading schema 2 cannot decode: the number changes so that
# such an assay refuses the store by name instead of answering its records as damaged.
# Nothing derived changed, so a schema 2 store is only relabelled, not rebuilt.
REBUILT_BELOW = 2

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS cve (
    id INTEGER PRIMARY KEY,
    cve_id TEXT NOT NULL UNIQUE,
    published TEXT NOT NULL,
    last_modified TEXT NOT NULL,
    vuln_status TEXT NOT NULL,
    rejected INTEGER NOT NULL,
    kev_added TEXT,
    record BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS cve_by_published ON cve (published, cve_id);
CREATE INDEX IF NOT EXISTS cve_by_last_modified ON cve (last_modified);
CREATE INDEX IF NOT EXISTS cve_by_kev ON cve (kev_added) WHERE kev_added IS NOT NULL;
-- noRejected (most mirrors ask for it) in API order without reading the records.
CREATE INDEX IF NOT EXISTS cve_unrejected_by_published
    ON cve (published, cve_id, rejected) WHERE rejected = 0;
"""

# What the CVE filters read, derived from the records (rebuilt from them when the
# derivation changes: `_rederive`).
DERIVED_TABLES = ("cve_facet", "cvss_vector", "cve_criteria", "criteria", "cve_text")
DERIVED_SCHEMA = """
CREATE TABLE IF NOT EXISTS cve_facet (
    kind TEXT NOT NULL,
    value TEXT NOT NULL,
    cve INTEGER NOT NULL,
    PRIMARY KEY (kind, value, cve)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS cve_facet_by_cve ON cve_facet (cve);
-- Every distinct CVSS vector, to find those a partial vector query fits.
CREATE TABLE IF NOT EXISTS cvss_vector (
    kind TEXT NOT NULL,
    vector TEXT NOT NULL,
    PRIMARY KEY (kind, vector)
) WITHOUT ROWID;
-- Every distinct criteria once (NVD shares them among CVEs: ~5 uses each), and its uses.
CREATE TABLE IF NOT EXISTS criteria (
    id INTEGER PRIMARY KEY,
    identity BLOB NOT NULL UNIQUE,
    part TEXT NOT NULL, vendor TEXT NOT NULL, product TEXT NOT NULL, version TEXT NOT NULL,
    cpe_update TEXT NOT NULL, edition TEXT NOT NULL, cpe_language TEXT NOT NULL,
    sw_edition TEXT NOT NULL, target_sw TEXT NOT NULL, target_hw TEXT NOT NULL,
    other TEXT NOT NULL,
    version_key BLOB,
    start_key BLOB, start_inclusive INTEGER NOT NULL,
    end_key BLOB, end_inclusive INTEGER NOT NULL,
    match_criteria_id TEXT
);
CREATE INDEX IF NOT EXISTS criteria_by_product ON criteria (product, version, vendor);
CREATE INDEX IF NOT EXISTS criteria_by_id ON criteria (match_criteria_id);
CREATE TABLE IF NOT EXISTS cve_criteria (
    criteria INTEGER NOT NULL,
    cve INTEGER NOT NULL,
    vulnerable INTEGER NOT NULL,
    PRIMARY KEY (criteria, cve, vulnerable)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS cve_criteria_by_cve ON cve_criteria (cve);
CREATE VIRTUAL TABLE IF NOT EXISTS cve_text USING fts5 (
    description, tokenize = 'unicode61 remove_diacritics 2'
);
"""

PRAGMAS = (
    "PRAGMA journal_mode = WAL",
    "PRAGMA synchronous = NORMAL",
    "PRAGMA temp_store = MEMORY",
    "PRAGMA cache_size = -65536",
    # No memory map: on the 2-core VM of the benchmarks a first touch of a mapped page
    # costs ~100 us, so cold single-record reads were 3x slower than through read()
    # and the page cache, and a bulk import counted the mapped file in its resident set.
    "PRAGMA mmap_size = 0",
    "PRAGMA busy_timeout = 30000",
    # Checkpoint the WAL every 64 MiB rather than 4 MiB: a bulk import then writes its
    # hot index pages back a third as often.
    "PRAGMA wal_autocheckpoint = 16384",
)

CVE_INSERT = (
    "INSERT INTO cve (id, cve_id, published, last_modified, vuln_status, rejected, kev_added, "
    "record) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)
CRITERIA_INSERT = (
    "INSERT INTO criteria (id, identity, part, vendor, product, version, cpe_update, edition, "
    "cpe_language, sw_edition, target_sw, target_hw, other, version_key, start_key, "
    "start_inclusive, end_key, end_inclusive, match_criteria_id) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
    "ON CONFLICT (identity) DO NOTHING"
)
# One CVE and the generation it was read at, in one statement (`cve_with_generation`).
CVE_WITH_GENERATION = (
    "SELECT m.value, c.record FROM meta m LEFT JOIN cve c ON c.cve_id = ? "
    "WHERE m.key = 'generation'"
)
DATA_VERSION = "PRAGMA data_version"
REDERIVE_BATCH = 2000
FIND_BATCH = 500  # records read per statement by `find_cves`
FIND_CACHE_KIB = -4096  # `find_cves`'s page cache while it reads records (4 MiB)

# The secondary indexes of the CVE tables whose entries a bulk load adds in random places
# (the others grow at their end, as row ids and publication dates do): a load into a
# store without CVEs builds them once at the end, from sorted keys. The writes never
# read through them (a replaced CVE's rows are found through the `..._by_cve` indexes,
# which stay, as do the keys and the uniqueness the writes rely on).
BULK_DEFERRED_INDEXES = ("cve_by_last_modified", "criteria_by_product", "criteria_by_id")

_FULL_SCHEMA = (
    SCHEMA
    + DERIVED_SCHEMA
    + PRODUCT_SCHEMA
    + SQLITE_SERVICE_SCHEMA
    + SQLITE_CVE5_SCHEMA
    + SQLITE_OSV_SCHEMA
)
_SCHEMA_OBJECTS = frozenset(
    re.findall(r"CREATE (?:VIRTUAL )?(?:TABLE|INDEX) IF NOT EXISTS (\w+)", _FULL_SCHEMA)
)


def path_from_url(url: str) -> Path:
    """`sqlite:///abs/path.db`, `sqlite:relative.db` or a bare path."""
    if url.startswith("sqlite:///"):
        return Path("/" + url.removeprefix("sqlite:///").lstrip("/"))
    if url.startswith("sqlite:"):
        return Path(url.removeprefix("sqlite:").removeprefix("//"))
    return Path(url)


class SqliteStore(ProductStoreMixin, ServiceStoreMixin, SqliteCve5, OsvStoreMixin):
    # A single-row read takes microseconds: the server may run it on its event loop.
    inline_reads = True

    def __init__(self, url: str) -> None:
        self.url = url
        self.path = path_from_url(url)
        self._local = threading.local()
        self._cache = ResultCache()
        self._decoded = DecodedRecords()
        self._kept_cves = KeptCves()
        self._orders = ApiOrder()
        self._criteria_ids: RememberedIds[bytes] = RememberedIds()
        self._vectors: RememberedIds[tuple[str, str]] = RememberedIds()
        try:
            if self.path.is_file() and self.path.stat().st_size == 0:
                # SQLite would take it for a new database: a file emptied by mistake (or
                # a wrong name) would silently become a store.
                raise StoreError(
                    f"{self.path} is an empty file, not an assay store: remove it to "
                    "create a new store there"
                )
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._set_up(self._connection())
        except (sqlite3.Error, OSError) as error:
            raise StoreError(f"cannot open the SQLite store at {self.path}: {error}") from error

    def _set_up(self, connection: sqlite3.Connection) -> None:
        """Create what is missing; bring a store of an older schema up to this one.

        A complete store of this schema is only read, so opening it never waits for a
        writer (an import holds the write lock for seconds at a time)."""
        if self._schema_version(connection) == SCHEMA_VERSION and _has_everything(connection):
            return
        with self._writing(connection):
            found = self._schema_version(connection)
            older = self._is_older_schema(found)
            rebuilt = older and int(str(found)) < REBUILT_BELOW
            if rebuilt:
                # Schema 1 kept one facet row per CVSS metric and one criteria row per
                # use: the derived rows are rebuilt from the records, which are kept as
                # they were.
                for table in DERIVED_TABLES:
                    connection.execute(f"DROP TABLE IF EXISTS {table}")
            for statement in _statements(_FULL_SCHEMA):
                connection.execute(statement)
            connection.execute(
                "INSERT OR IGNORE INTO meta (key, value) VALUES ('schema', ?), ('generation', '0')",
                (SCHEMA_VERSION,),
            )
            if rebuilt:
                self._rederive(connection)
                connection.execute(BUMP_GENERATION)
            if older:
                connection.execute(
                    "UPDATE meta SET value = ? WHERE key = 'schema'", (SCHEMA_VERSION,)
                )
            backfill(SqliteExecutor(connection))  # tracking of the sources beside NVD's

    def _is_older_schema(self, found: str | None) -> bool:
        """Whether the store has a schema older than this one, to bring up to it (a newer
        one, or one not numbered, is refused)."""
        if found is None or found == SCHEMA_VERSION:
            return False
        if not found.isdigit() or int(found) > int(SCHEMA_VERSION):
            raise StoreError(
                f"the SQLite store at {self.path} has schema {found!r}; this assay "
                f"reads schema {SCHEMA_VERSION}: use the assay that wrote it"
            )
        return True

    @contextmanager
    def _writing(self, connection: sqlite3.Connection) -> Iterator[None]:
        """One write transaction, or a part of the caller's (`transaction()`); the
        criteria ids and vectors it learns are kept once they are committed."""
        outer = self._in_transaction()
        with write_transaction(connection, outer=outer, forget=self._forget_learnt):
            yield
        if not outer:  # (else when the enclosing transaction commits)
            self._keep_learnt()

    def _forget_learnt(self) -> None:
        self._criteria_ids.rolled_back()
        self._vectors.rolled_back()

    def _keep_learnt(self) -> None:
        self._criteria_ids.committed()
        self._vectors.committed()

    def _schema_version(self, connection: sqlite3.Connection) -> str | None:
        if (
            connection.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'"
            ).fetchone()
            is None
        ):
            return None
        row = connection.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        return None if row is None else str(row[0])

    def _rederive(self, connection: sqlite3.Connection) -> None:
        """Rebuild every CVE's derived rows from its stored record."""
        last = 0
        while True:
            rows = connection.execute(
                "SELECT id, record FROM cve WHERE id > ? ORDER BY id LIMIT ?",
                (last, REDERIVE_BATCH),
            ).fetchall()
            if not rows:
                return
            derived = _DerivedRows()
            for row_id, stored in rows:
                record = unpack(stored)
                derived.add(row_id, cve_facts(orjson.loads(record), f"stored record {row_id}"))
            self._insert_derived(connection, derived)
            last = rows[-1][0]

    def _connection(self) -> sqlite3.Connection:
        connection: sqlite3.Connection | None = getattr(self._local, "connection", None)
        if connection is None:
            connection = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            for pragma in PRAGMAS:
                connection.execute(pragma)
            self._local.connection = connection
        return connection

    def close(self) -> None:
        connection = getattr(self._local, "connection", None)
        if connection is not None:
            connection.close()
            self._local.connection = None

    # -- meta ------------------------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        row = self._connection().execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        connection = self._connection()
        if self._in_transaction():  # a part of the caller's transaction, not one of its own
            write_meta(connection, {key: value})
            return
        with connection:
            write_meta(connection, {key: value})

    @contextmanager
    def exclusive(self, name: str) -> Iterator[None]:
        """An advisory lock on the file `<store>.<name>.lock` beside the store: the
        kernel releases it when its holder exits, however that happens."""
        check_lock_name(name)
        lock_path = self.path.with_name(f"{self.path.name}.{name}.lock")
        try:
            descriptor = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as error:
            raise StoreError(f"cannot open the lock file {lock_path}: {error.strerror}") from error
        try:
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = os.pread(descriptor, 64, 0).decode("ascii", "replace").strip()
                raise StoreBusy(
                    f"the store {self.path} is busy: another process"
                    + (f" (pid {holder})" if holder.isdigit() else "")
                    + f" holds its {name!r} lock ({lock_path})"
                ) from None
            try:
                os.ftruncate(descriptor, 0)
                os.pwrite(descriptor, f"{os.getpid()}\n".encode(), 0)
            except OSError as error:
                raise StoreError(
                    f"cannot write the lock file {lock_path}: {error.strerror}"
                ) from error
            yield
        finally:
            os.close(descriptor)  # (releases the lock)

    @contextmanager
    def bulk_load(self) -> Iterator[None]:
        """When the store holds no CVE, the CVE tables' secondary indexes
        (`BULK_DEFERRED_INDEXES`) are dropped for the block and built again at its end,
        in one transaction, however the block ends. A store left without them (the
        process was killed) gets them back the next time it is opened. Otherwise nothing
        changes."""
        connection = self._connection()
        try:
            deferred = self._drop_indexes_if_empty(connection)
        except sqlite3.Error as error:
            raise StoreError(f"the SQLite store at {self.path}: {error}") from error
        try:
            yield
        finally:
            if deferred:
                try:
                    self._run_in_transaction(connection, deferred)
                except sqlite3.Error as error:
                    raise StoreError(f"the SQLite store at {self.path}: {error}") from error

    def _drop_indexes_if_empty(self, connection: sqlite3.Connection) -> list[str]:
        """The statements that create the indexes dropped (none unless the store has no
        CVE)."""
        if self._in_transaction():
            return []
        with write_transaction(connection, outer=False):
            if connection.execute("SELECT 1 FROM cve LIMIT 1").fetchone() is not None:
                return []
            found = list(
                select_in(
                    connection,
                    "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND name IN",
                    BULK_DEFERRED_INDEXES,
                )
            )
            for name, _ in found:
                connection.execute(f"DROP INDEX {name}")
        return [str(sql) for _, sql in found]

    def _run_in_transaction(self, connection: sqlite3.Connection, statements: list[str]) -> None:
        with write_transaction(connection, outer=False):
            for statement in statements:
                connection.execute(statement)

    def _in_transaction(self) -> bool:
        """Whether this thread is inside `transaction()`."""
        return bool(getattr(self._local, "outer", False))

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Every write of this thread in the block is one transaction: all or nothing
        (`assay nvd import --atomic`). Readers see the store as it was until the end."""
        if self._in_transaction():
            raise StoreError("transaction(): already inside one")
        connection = self._connection()
        try:
            connection.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as error:
            raise StoreError(f"the SQLite store at {self.path}: {error}") from error
        self._local.outer = True
        try:
            yield
            self._local.outer = False
            connection.execute("COMMIT")
        except BaseException as error:
            self._local.outer = False
            self._forget_learnt()
            if connection.in_transaction:
                connection.execute("ROLLBACK")
            if isinstance(error, sqlite3.Error):
                raise StoreError(f"the SQLite store at {self.path}: {error}") from error
            raise
        self._keep_learnt()

    def _generation(self, connection: sqlite3.Connection) -> int:
        row = connection.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
        return int(row[0])

    # -- CVEs ------------------------------------------------------------------------

    def generation(self) -> int:
        return self._generation(self._connection())

    def read_at_generation(self, read: Callable[[], T], *, at_least: int = 0) -> tuple[int, T]:
        return self.generation(), read()

    def cve_with_generation(self, cve_id: str) -> tuple[int, bytes | None]:
        """The data generation and the record of `cve_id` (None when there is none), read
        by one statement, so from one snapshot: what `search_cves` gives for
        `CveQuery(cve_id=...)` after `generation()`, for the server's `?cveId=` shortcut."""
        connection = self._connection()
        # Unchanged while no other connection has committed (`data_version`) and this one
        # has written nothing (`total_changes`): then the generation last read here stands,
        # and a record kept for it is the stored one.
        seen = (connection.execute(DATA_VERSION).fetchone()[0], connection.total_changes)
        local = self._local
        if seen == getattr(local, "seen", None):
            kept = self._kept_cves.get_many(local.generation, [cve_id]).get(cve_id)
            if kept is not None:
                return local.generation, kept
        row = connection.execute(CVE_WITH_GENERATION, (cve_id,)).fetchone()
        generation = int(row[0])
        local.seen, local.generation = seen, generation
        if row[1] is None:
            return generation, None
        record = unpack(row[1])
        self._kept_cves.advance(generation)
        self._kept_cves.put_many(generation, {cve_id: record})
        return generation, record

    def count_cves(self) -> int:
        return int(self._connection().execute("SELECT count(*) FROM cve").fetchone()[0])

    def count_cves_by_status(self) -> dict[str, int]:
        rows = self._connection().execute(
            "SELECT vuln_status, count(*) FROM cve GROUP BY vuln_status"
        )
        return {str(status): int(count) for status, count in rows}

    def upsert_cves(
        self, batch: Sequence[CveFacts], *, meta: Mapping[str, str] | None = None
    ) -> UpsertCounts:
        latest, counts = batch_writes(batch, key=_cve_id, order=_last_modified)
        connection = self._connection()
        with self._writing(connection):
            derived = self._write_cves(connection, list(latest.values()), counts)
            # One statement per table for the whole batch, after every row it replaces is gone.
            self._insert_derived(connection, derived)
            if counts.added or counts.updated:
                self._mark_cves_written(connection, derived.row_ids())
            write_meta(connection, meta)
        return counts

    def _write_cves(
        self, connection: sqlite3.Connection, batch: Sequence[CveFacts], counts: UpsertCounts
    ) -> _DerivedRows:
        """Add the CVEs the store lacks and replace those the write rule lets replace,
        counted in `counts`: the derived rows of both."""
        existing = self._existing(connection, [facts.cve_id for facts in batch])
        derived = _DerivedRows()
        # Ids given here (the write lock is held) so that one statement inserts them all.
        next_id = _next_id(connection, "cve")
        added: list[tuple[object, ...]] = []
        for facts in batch:
            current = existing.get(facts.cve_id)
            if current is None:
                row_id, next_id = next_id, next_id + 1
                added.append(_cve_row(row_id, facts))
                counts.added += 1
            elif _stored_stays(facts, current):
                counts.unchanged += 1
                continue
            else:
                row_id = current[0]
                self._replace_cve(connection, row_id, facts)
                counts.updated += 1
            derived.add(row_id, facts)
        connection.executemany(CVE_INSERT, added)
        return derived

    def _mark_cves_written(self, connection: sqlite3.Connection, row_ids: list[int]) -> None:
        """Advance the generation and mark the CVE rows `row_ids` written at it."""
        generation = self._generation(connection) + 1  # what the bump below makes
        connection.executemany(
            "INSERT OR REPLACE INTO cve_written (row, generation) VALUES (?, ?)",
            [(row_id, generation) for row_id in row_ids],
        )
        connection.execute(BUMP_GENERATION)

    def _existing(
        self, connection: sqlite3.Connection, cve_ids: list[str]
    ) -> dict[str, tuple[int, str, bytes]]:
        return {
            cve_id: (row_id, last_modified, record)
            for cve_id, row_id, last_modified, record in select_in(
                connection,
                "SELECT cve_id, id, last_modified, record FROM cve WHERE cve_id IN",
                cve_ids,
            )
        }

    def _replace_cve(self, connection: sqlite3.Connection, row_id: int, facts: CveFacts) -> None:
        connection.execute(
            "UPDATE cve SET published = ?, last_modified = ?, vuln_status = ?, rejected = ?, "
            "kev_added = ?, record = ? WHERE id = ?",
            (
                facts.published,
                facts.last_modified,
                facts.vuln_status,
                int(facts.rejected),
                facts.kev_added,
                pack(facts.record),
                row_id,
            ),
        )
        connection.execute("DELETE FROM cve_facet WHERE cve = ?", (row_id,))
        # The criteria rows stay (other CVEs may use them; ids must stay right): only
        # this CVE's uses go.
        connection.execute("DELETE FROM cve_criteria WHERE cve = ?", (row_id,))
        connection.execute("DELETE FROM cve_text WHERE rowid = ?", (row_id,))

    def _insert_derived(self, connection: sqlite3.Connection, derived: _DerivedRows) -> None:
        new_vectors = []
        for vector in derived.vectors:
            if self._vectors.get(vector) is None:
                new_vectors.append(vector)
                self._vectors.learn(vector, 0)
        connection.executemany(
            "INSERT OR IGNORE INTO cvss_vector (kind, vector) VALUES (?, ?)", new_vectors
        )
        ids = self._criteria_ids_of(connection, [criteria for _, criteria in derived.criteria])
        uses = [
            (ids[criteria.identity], row_id, int(criteria.vulnerable))
            for row_id, criteria in derived.criteria
        ]
        # Rows in key order: each B-tree page is visited once per batch.
        uses.sort()
        derived.facets.sort()
        connection.executemany(
            "INSERT OR IGNORE INTO cve_facet (kind, value, cve) VALUES (?, ?, ?)", derived.facets
        )
        connection.executemany(
            "INSERT OR IGNORE INTO cve_criteria (criteria, cve, vulnerable) VALUES (?, ?, ?)", uses
        )
        connection.executemany(
            "INSERT INTO cve_text (rowid, description) VALUES (?, ?)", derived.texts
        )

    def _criteria_ids_of(
        self, connection: sqlite3.Connection, needed: Sequence[Criteria]
    ) -> dict[bytes, int]:
        """The row id of each criteria by identity, inserting those the store lacks."""
        ids: dict[bytes, int] = {}
        unknown: dict[bytes, Criteria] = {}
        for criteria in needed:
            identity = criteria.identity
            row_id = self._criteria_ids.get(identity)
            if row_id is not None:
                ids[identity] = row_id
            elif identity not in unknown:
                unknown[identity] = criteria
        if unknown:
            ids.update(self._insert_criteria(connection, unknown))
        return ids

    def _insert_criteria(
        self, connection: sqlite3.Connection, unknown: dict[bytes, Criteria]
    ) -> dict[bytes, int]:
        """Insert the criteria this process does not know: the row id of each.

        They are inserted with the ids they would get; those the store holds already
        (rows this process never saw, or forgot) are left alone and looked up. In a bulk
        load nearly every unknown criteria is new, so that look-up is rarely needed."""
        first_id = _next_id(connection, "criteria")
        found = {identity: first_id + offset for offset, identity in enumerate(unknown)}
        rows = [_criteria_row(found[identity], criteria) for identity, criteria in unknown.items()]
        inserted = connection.executemany(CRITERIA_INSERT, rows).rowcount
        if inserted != len(rows):
            found.update(
                select_in(
                    connection, "SELECT identity, id FROM criteria WHERE identity IN", list(unknown)
                )
            )
        for identity, row_id in found.items():
            self._criteria_ids.learn(identity, row_id)
        return found

    def search_cves(self, query: CveQuery) -> Page:
        connection = self._connection()
        builder = SqlBuilder(SQLITE)
        where = cve_where(query, builder)
        if query.cve_id is not None:
            # At most one row: no ordering, no cache.
            rows = connection.execute(
                f"SELECT c.record FROM cve c WHERE {where}",
                builder.params,
            ).fetchall()
            total = len(rows)
            window = rows[query.start_index : query.start_index + query.results_per_page]
            return Page(total, [unpack(row[0]) for row in window])
        generation = self._generation(connection)
        key = (generation, query.filter_key)
        ids = self._cache.get(key)
        if ids is None:
            ids = keyword_ids(connection, generation, query, self._orders)
            if ids is None:
                ids = self._ordered_ids(connection, generation, query, where, builder.params)
            self._cache.put(key, ids)
        page_ids = ids[query.start_index : query.start_index + query.results_per_page]
        if query.filter_key in WALK_ORDERS:
            # A walk reads each page once: its records would only push the records of
            # popular queries out of the decoded cache (and keeping them costs ~1.5 ms
            # of a 2000-record page).
            return Page(len(ids), self._records_uncached(connection, page_ids))
        return Page(len(ids), self._records(connection, generation, page_ids))

    def _ordered_ids(
        self,
        connection: sqlite3.Connection,
        generation: int,
        query: CveQuery,
        where: str,
        params: Sequence[object],
    ) -> array[int]:
        """The ids of the CVEs `where` selects, in API order (kept as a walk's order when
        the query is one that keyword searches are put in)."""
        ids = array(
            "q",
            (
                row[0]
                for row in connection.execute(
                    f"SELECT c.id FROM cve c WHERE {where} ORDER BY c.published, c.cve_id",
                    params,
                )
            ),
        )
        if query.filter_key in WALK_ORDERS:
            self._orders.keep(generation, WALK_ORDERS[query.filter_key], ids)
        return ids

    def find_cves(self, queries: Sequence[CveQuery]) -> Iterator[tuple[bytes, tuple[int, ...]]]:
        # One statement per query, with the filter `search_cves` applies (`cve_ids_select`):
        # queries of one shape share a prepared statement (a UNION ALL of many was measured
        # slower: each new text is planned anew). Records in row order, a batch at a time,
        # outside the cache.
        connection = self._connection()
        try:
            with read_snapshot(connection):  # one snapshot for the look-ups and the reads
                found = _queries_per_row(connection, queries)
                # Each record is read once: the page cache would only hold them (and grow
                # the process by its 64 MiB); the look-ups' index pages are done with by now.
                with _page_cache(connection, FIND_CACHE_KIB):
                    for row_id, stored in select_in(
                        connection,
                        "SELECT id, record FROM cve WHERE id IN",
                        sorted(found),
                        FIND_BATCH,
                    ):
                        yield unpack(stored), tuple(found.pop(row_id))
        except sqlite3.Error as error:
            raise StoreError(f"the SQLite store at {self.path}: {error}") from error

    def _records_uncached(self, connection: sqlite3.Connection, ids: Sequence[int]) -> list[bytes]:
        """The records of `ids`, in that order, past the decoded cache (a walk's page)."""
        if consecutive(ids):
            # A store imported in API order walks its rows in order: one range read
            # (~1.5 ms less than `IN` for 2,000 rows), used when every id is there.
            rows = connection.execute(
                "SELECT record FROM cve WHERE id BETWEEN ? AND ?", (ids[0], ids[-1])
            ).fetchall()
            if len(rows) == len(ids):
                return [unpack(stored) for (stored,) in rows]
        stored = dict(_rows_of(connection, ids))
        return [unpack(stored[row_id]) for row_id in ids if row_id in stored]

    def _records(
        self, connection: sqlite3.Connection, generation: int, ids: Iterable[int]
    ) -> list[bytes]:
        wanted = list(ids)
        if not wanted:
            return []
        by_id = self._decoded.get_many(generation, wanted)
        missing = [row_id for row_id in wanted if row_id not in by_id]
        read = {
            row_id: unpack(stored)
            for row_id, stored in select_in(
                connection, "SELECT id, record FROM cve WHERE id IN", missing, 1000
            )
        }
        self._decoded.put_many(generation, read)
        by_id.update(read)
        return [by_id[row_id] for row_id in wanted if row_id in by_id]


class _DerivedRows:
    """The facet, criteria and search-text rows of a batch, inserted together."""

    def __init__(self) -> None:
        self.facets: list[tuple[str, str, int]] = []
        self.vectors: set[tuple[str, str]] = set()
        self.criteria: list[tuple[int, Criteria]] = []
        self.texts: list[tuple[int, str]] = []
        self.rows: list[int] = []

    def row_ids(self) -> list[int]:
        """The CVE rows of the batch (added or replaced)."""
        return self.rows

    def add(self, row_id: int, facts: CveFacts) -> None:
        self.rows.append(row_id)
        facets = facts.facets
        self.facets.extend([(kind, value, row_id) for kind, value in facets])
        self.vectors.update([facet for facet in facets if facet[0][:3] == "vec"])
        self.criteria.extend([(row_id, criteria) for criteria in facts.criteria])
        if facts.search_text:
            self.texts.append((row_id, facts.search_text))


# The store's public methods: an SQLite failure in any of them (a full disk, a damaged
# file) is a `StoreError` naming the store, which callers turn into one line or a 503.
PUBLIC_METHODS = (
    "get_meta",
    "set_meta",
    "count_cves",
    "upsert_cves",
    "search_cves",
    "upsert_cpes",
    "search_cpes",
    "upsert_match_strings",
    "search_match_strings",
    "upsert_changes",
    "search_changes",
    "upsert_sources",
    "search_sources",
    "count_cves_by_status",
    "generation",
)

for _name in PUBLIC_METHODS:
    setattr(SqliteStore, _name, store_errors(getattr(SqliteStore, _name)))


def _rows_of(connection: sqlite3.Connection, ids: Sequence[int]) -> Iterable[tuple[int, bytes]]:
    """The (id, stored record) rows of `ids`: one range read when they lie close together
    (a walk without the rejected CVEs skips a few rows: reading them too costs less
    than looking up 2,000 ids), else look-ups by id."""
    low, high = min(ids, default=0), max(ids, default=0)
    if high - low < 2 * len(ids):
        return connection.execute(
            "SELECT id, record FROM cve WHERE id BETWEEN ? AND ?", (low, high)
        ).fetchall()
    return select_in(connection, "SELECT id, record FROM cve WHERE id IN", ids, 1000)


def _next_id(connection: sqlite3.Connection, table: str) -> int:
    """The id SQLite itself would give the next row of `table` (one past the largest)."""
    row = connection.execute(f"SELECT max(id) FROM {table}").fetchone()
    return int(row[0] or 0) + 1


def _cve_row(row_id: int, facts: CveFacts) -> tuple[object, ...]:
    return (
        row_id,
        facts.cve_id,
        facts.published,
        facts.last_modified,
        facts.vuln_status,
        int(facts.rejected),
        facts.kev_added,
        pack(facts.record),
    )


def _has_everything(connection: sqlite3.Connection) -> bool:
    present = {str(row[0]) for row in connection.execute("SELECT name FROM sqlite_master")}
    return present.issuperset(_SCHEMA_OBJECTS)


def _statements(script: str) -> list[str]:
    """The statements of a DDL script (none of ours has a `;` inside a statement)."""
    return [statement for statement in script.split(";") if statement.strip()]


def _cve_id(facts: CveFacts) -> str:
    return facts.cve_id


def _last_modified(facts: CveFacts) -> str:
    return facts.last_modified


def _stored_stays(facts: CveFacts, stored: tuple[int, str, bytes]) -> bool:
    """The write rule (`stored_stays`) for a CVE and its stored (row, lastModified, record)."""
    _, last_modified, record = stored
    return stored_stays(facts.last_modified, last_modified, same=facts.record == unpack(record))


def _criteria_row(row_id: int, criteria: Criteria) -> tuple[object, ...]:
    return (
        row_id,
        criteria.identity,
        *criteria.components,
        criteria.version_key,
        criteria.start_key,
        int(criteria.start_inclusive),
        criteria.end_key,
        int(criteria.end_inclusive),
        criteria.match_criteria_id,
    )


def _queries_per_row(
    connection: sqlite3.Connection, queries: Sequence[CveQuery]
) -> dict[int, list[int]]:
    """The CVE rows the queries select, each with the indexes of the queries selecting it.

    One statement per query, with the filter `search_cves` applies (`cve_ids_select`):
    queries of one shape share a prepared statement (a UNION ALL of many was measured
    slower: each new text is planned anew)."""
    found: dict[int, list[int]] = {}
    for index, query in enumerate(queries):
        builder = SqlBuilder(SQLITE)
        for (row_id,) in connection.execute(cve_ids_select(query, builder), builder.params):
            indexes = found.setdefault(row_id, [])
            if not indexes or indexes[-1] != index:  # (a CVE may come twice)
                indexes.append(index)
    return found


@contextmanager
def _page_cache(connection: sqlite3.Connection, kibibytes: int) -> Iterator[None]:
    """The connection's page cache set to `kibibytes` (a negative `cache_size`) for the
    block, then back as it was."""
    (cache_size,) = connection.execute("PRAGMA cache_size").fetchone()
    connection.execute(f"PRAGMA cache_size = {int(kibibytes)}")
    try:
        yield
    finally:
        connection.execute(f"PRAGMA cache_size = {int(cache_size)}")


def limit_heap(mebibytes: int) -> int:
    """Set SQLite's process-wide soft heap limit (0 lifts it); the limit now in force
    (`assay serve --sqlite-cache`: it bounds every connection of the process together)."""
    connection = sqlite3.connect(":memory:")
    try:
        row = connection.execute(f"PRAGMA soft_heap_limit = {int(mebibytes) * 2**20}").fetchone()
    finally:
        connection.close()
    return int(row[0]) if row else 0
