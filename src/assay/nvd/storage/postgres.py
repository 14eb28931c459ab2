"""The scale backend: PostgreSQL through psycopg 3 and a connection pool.

    postgresql://user[:password]@host[:port]/database[?schema=NAME&<libpq options>]

The same tables, write rules and answers as `sqlite.py`: text columns compare as bytes
(`COLLATE "C"`, like SQLite's BINARY), version keys are `bytea` (compared like BLOBs,
memcmp), and the full-text index holds the very tokens SQLite's FTS5 makes (see
`_sql.search_tokens`), so every query returns the same records in the same order.
`schema=NAME` keeps the store in its own schema (created when absent); every pooled
connection gets it as its `search_path`.
"""

from __future__ import annotations

import hashlib
import math
import re
import sqlite3
import threading
import time
import weakref
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any, TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import orjson
import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict
from psycopg_pool import ConnectionPool, PoolTimeout

from assay.errors import StoreBusy, StoreError
from assay.nvd.cve_query import MAX_RESULTS_PER_PAGE, CveQuery
from assay.nvd.cve_record import Criteria, CveFacts, cve_facts
from assay.nvd.storage._api_order import WALK_ORDERS, ApiOrder, consecutive
from assay.nvd.storage._cache import ResultCache
from assay.nvd.storage._cve5_sql import POSTGRES_CVE5_SCHEMA
from assay.nvd.storage._decoded import GenerationRecords
from assay.nvd.storage._distinct import RememberedIds
from assay.nvd.storage._kinds import F, Paged
from assay.nvd.storage._osv_sql import POSTGRES_OSV_SCHEMA
from assay.nvd.storage._postgres_buffers import BufferFit, buffer_fit
from assay.nvd.storage._postgres_bulk import (
    build,
    drop_deferred_if_empty,
    restore_deferred,
    try_bulk_lock,
)
from assay.nvd.storage._postgres_cve5 import PostgresCve5, PostgresExecutor
from assay.nvd.storage._postgres_fulltext import merge_pending
from assay.nvd.storage._postgres_order import CVE_ORDER, api_ordered_ids
from assay.nvd.storage._postgres_osv import OsvStoreMixin
from assay.nvd.storage._postgres_products import ProductStoreMixin
from assay.nvd.storage._postgres_rows import (
    BUMP_GENERATION,
    CRITERIA_COLUMNS,
    CVE_COLUMNS,
    CVE_TEXT_COLUMNS,
    DERIVED_TABLES,
    FACET_COLUMNS,
    SCHEMA,
    SCHEMA_VERSION,
    SOURCE_SCHEMA,
    UPGRADE_TO_4,
    USE_COLUMNS,
    Connection,
    RecordRows,
    bound,
    copy_rows,
    insert_distinct,
    lock_for_writing,
    stored_versions,
    text,
    texts,
)
from assay.nvd.storage._postgres_service import ServiceStoreMixin
from assay.nvd.storage._postgres_watch import announce_generation, release_watch, shared_watch
from assay.nvd.storage._records import pack, unpack
from assay.nvd.storage._service_rows import POSTGRES_SERVICE_SCHEMA
from assay.nvd.storage._source_changes import backfill
from assay.nvd.storage._sql import (
    POSTGRES,
    SqlBuilder,
    cve_ids_select,
    cve_where,
    search_tokens,
    tsvector_literal,
)
from assay.nvd.storage.interface import Page, UpsertCounts, check_lock_name
from assay.nvd.storage.write_rule import batch_writes, stored_stays

T = TypeVar("T")
REDERIVE_BATCH = 2000
FIND_PIPELINE = 500  # look-ups `find_cves` sends before reading their answers
FIND_BATCH = 1000  # records read per statement by `find_cves`
POOL_MIN_SIZE = 1
POOL_MAX_SIZE = 8
CONNECT_TIMEOUT = 10  # seconds to reach the server, unless the URL sets connect_timeout
POOL_TIMEOUT = 30.0  # seconds an operation may wait for a free pooled connection
# A pooled connection idle longer than this is checked (one round trip) before use, so one
# that a server restart broke is replaced rather than failing a request. A connection in
# steady use is not: checking every checkout cost 260 us of a 410 us cveId look-up.
CHECK_IDLE_AFTER = 2.0
# A server that stops answering (a dropped network, a host gone) must not hold a
# connection for ever: TCP keepalives find a silent peer within ~60 s, and
# `tcp_user_timeout` ends a connection whose sent data stays unacknowledged that long.
# A URL's own settings win.
CONNECTION_BOUNDS = {
    "keepalives": "1",
    "keepalives_idle": "30",
    "keepalives_interval": "10",
    "keepalives_count": "3",
    "tcp_user_timeout": "60000",
}
# A store opened for serving (`timeout` given) also bounds each statement on the server,
# so that a query a request stopped waiting for does not run on: this many times the
# timeout, and at least MIN_STATEMENT_SECONDS (large pages and scans take seconds).
STATEMENT_TIMEOUT_FACTOR = 6
# Settings of every session, unless the URL gives libpq `options` of its own. The store's
# statements are short look-ups and index walks: compiling one with LLVM (`jit`, on by
# default from PostgreSQL 12 for plans above `jit_above_cost`) costs tens of
# milliseconds more than running it does.
SESSION_SETTINGS = {"jit": "off"}
MIN_STATEMENT_SECONDS = 30
SCHEMA_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")
SETUP_LOCK = 0x6173_7361_7973_746F  # advisory lock key serializing schema set-up ("assaysto")
ABSENT = b""  # kept for an id the store does not hold (no record is empty)
# One CVE and the generation, in one statement (one snapshot); the meta row is always there.
LOOK_UP = (
    "SELECT CAST(m.value AS bigint), c.record FROM meta m "
    "LEFT JOIN cve c ON c.cve_id = %s WHERE m.key = 'generation'"
)


@dataclass(frozen=True, slots=True)
class Target:
    """A parsed store URL: what to hand libpq, which schema, and how to name the server."""

    conninfo: str
    schema: str | None
    host: str
    port: str
    database: str
    user: str
    sets_timeout: bool

    def describe(self) -> str:
        where = f"PostgreSQL at {self.host}:{self.port}, database {self.database!r}"
        where += f", user {self.user!r}" if self.user else ""
        return where + (f", schema {self.schema!r}" if self.schema else "")


def parse_url(url: str) -> Target:
    """Split `url` into libpq's part and the `schema` option; never echoes a password."""
    try:
        parts = urlsplit(url)
    except ValueError as error:
        raise StoreError(f"invalid PostgreSQL URL: {error}") from error
    if parts.scheme.lower() not in ("postgres", "postgresql"):
        raise StoreError(
            f"invalid PostgreSQL URL: expected postgresql://, found {parts.scheme or 'no'} scheme"
        )
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    schema = _schema_option(pairs)
    others = [(key, value) for key, value in pairs if key != "schema"]
    conninfo = urlunsplit(parts._replace(query=urlencode(others)))
    params = _conninfo_params(conninfo)
    return Target(
        conninfo=conninfo,
        schema=schema,
        host=str(params.get("host") or params.get("hostaddr") or "the local socket"),
        port=_port(params),
        database=str(params.get("dbname") or params.get("user") or ""),
        user=str(params.get("user") or ""),
        sets_timeout="connect_timeout" in params,
    )


def _schema_option(pairs: list[tuple[str, str]]) -> str | None:
    """The URL's `schema` option: at most one, a plain name."""
    schemas = [value for key, value in pairs if key == "schema"]
    if len(schemas) > 1:
        raise StoreError("invalid PostgreSQL URL: the schema option is given more than once")
    if schemas and not SCHEMA_NAME.fullmatch(schemas[0]):
        raise StoreError(
            f"invalid PostgreSQL URL: schema {schemas[0]!r} is not a plain name "
            "(a letter or _, then letters, digits or _, at most 63 in all)"
        )
    return schemas[0] if schemas else None


def _conninfo_params(conninfo: str) -> dict[str, object]:
    try:
        return dict(conninfo_to_dict(conninfo))
    except psycopg.Error as error:
        raise StoreError(f"invalid PostgreSQL URL: {_reason(error)}") from error


def _port(params: dict[str, object]) -> str:
    """The port, or each port of a list of hosts, as given (5432 when none is)."""
    port = str(params.get("port") or "5432")
    if not all(piece.isdigit() for piece in port.split(",")):
        raise StoreError(f"invalid PostgreSQL URL: port {port!r} is not a number")
    return port


class PostgresStore(ProductStoreMixin, ServiceStoreMixin, PostgresCve5, OsvStoreMixin):
    inline_reads = False  # every read is a network round trip: in a worker thread

    def __init__(self, url: str, *, timeout: float | None = None) -> None:
        """`timeout`: seconds to reach the server (unless the URL sets connect_timeout)
        and to wait for a pooled connection, for servers that must answer promptly
        when PostgreSQL is away (default: CONNECT_TIMEOUT and POOL_TIMEOUT)."""
        self.url = url
        self._pool_timeout = POOL_TIMEOUT if timeout is None else timeout
        self._target = parse_url(url)
        self._cache = ResultCache()
        # The API order of every CVE (and every unrejected one), kept for the latest
        # generation: id-set searches are put in it without reading CVE rows.
        self._orders = ApiOrder()
        # Records served lately, by (table, row id) and by ("cve_id", id), for one data
        # generation at a time (`_decoded.GenerationRecords`): see `search_cves`.
        self._records: GenerationRecords[tuple[str, str | int]] = GenerationRecords()
        # The generation `read_at_generation` told this thread, while its read runs.
        self._told = threading.local()
        self._pinned = threading.local()  # the connection of `transaction()`, per thread
        # Bulk loads under way: their writes leave the full-text merge to the load's end.
        self._loading = 0
        self._lexemes_deferred = False
        """A load into an empty store writes `cve_lexeme` at its end (`_postgres_bulk`)."""
        self._criteria_ids: RememberedIds[bytes] = RememberedIds()
        self._vectors: RememberedIds[tuple[str, str]] = RememberedIds()
        self._kwargs: dict[str, Any] = {"autocommit": True}
        self._returned: weakref.WeakKeyDictionary[Connection, float] = weakref.WeakKeyDictionary()
        if not self._target.sets_timeout:
            self._kwargs["connect_timeout"] = (
                CONNECT_TIMEOUT if timeout is None else max(2, math.ceil(timeout))
            )
        # Seconds a request waits for one operation before answering 503 (serving only;
        # `assay.nvd.server.store_calls`).
        self.operation_timeout = timeout
        given = conninfo_to_dict(self._target.conninfo)
        for key, value in CONNECTION_BOUNDS.items():
            if key not in given:
                self._kwargs[key] = value
        if "options" not in given:
            settings = dict(SESSION_SETTINGS)
            if timeout is not None:
                seconds = max(MIN_STATEMENT_SECONDS, math.ceil(timeout * STATEMENT_TIMEOUT_FACTOR))
                settings["statement_timeout"] = str(seconds * 1000)
            self._kwargs["options"] = " ".join(f"-c {k}={v}" for k, v in settings.items())
        try:
            search_tokens("")
        except sqlite3.Error as error:
            raise StoreError(
                f"the PostgreSQL store needs SQLite's fts3tokenize to index text: {error}"
            ) from error
        on_standby = self._create_schema()
        self._standby = on_standby
        # The generation as the server announces it, for look-ups answered without the
        # network (`kept_cve`), shared by the process's stores of this database and
        # schema; a hot standby announces nothing (LISTEN needs a primary).
        self._watch_key = f"{self._target.conninfo}\0{self._target.schema or ''}"
        self._watch = (
            None if on_standby else shared_watch(self._watch_key, self._listening_connection)
        )
        self._pool: ConnectionPool[Connection] = ConnectionPool(
            self._target.conninfo,
            kwargs=self._kwargs,
            min_size=POOL_MIN_SIZE,
            max_size=POOL_MAX_SIZE,
            configure=self._configure,
            check=self._check_if_idle,
            reset=self._note_returned,
            timeout=self._pool_timeout,
            name="assay-store",
            open=False,
        )
        try:
            self._pool.open(wait=True, timeout=CONNECT_TIMEOUT + 5)
        except PoolTimeout as error:
            self.close()
            raise StoreError(
                f"cannot open connections to {self._target.describe()}: "
                f"none ready within {CONNECT_TIMEOUT + 5} s"
            ) from error

    def _connect(self) -> Connection:
        try:
            return psycopg.connect(self._target.conninfo, **self._kwargs)
        except psycopg.Error as error:
            raise StoreError(
                f"cannot connect to {self._target.describe()}: {_reason(error)}"
            ) from error

    def _listening_connection(self) -> Connection:
        connection = self._connect()
        self._configure(connection)
        return connection

    def _create_schema(self) -> bool:
        """Create the schema, tables and indexes if absent (once per schema version);
        whether the server is a hot standby (where nothing is created)."""
        schema = self._target.schema
        with self._connect() as connection:
            if self._on_standby(connection):
                return True
            try:
                with connection.transaction():
                    connection.execute("SELECT pg_advisory_xact_lock(%s)", (SETUP_LOCK,))
                    if schema is not None:
                        exists = connection.execute(
                            "SELECT 1 FROM pg_namespace WHERE nspname = %s", (schema,)
                        ).fetchone()
                        if exists is None:
                            connection.execute(
                                sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema))
                            )
                        connection.execute(
                            sql.SQL("SET LOCAL search_path TO {}").format(sql.Identifier(schema))
                        )
                    found = self._schema_version(connection)
                    if found is not None and found != SCHEMA_VERSION:
                        if not found.isdigit() or int(found) > int(SCHEMA_VERSION):
                            raise StoreError(
                                f"the store in {self._target.describe()} has schema {found!r}; "
                                f"this assay reads schema {SCHEMA_VERSION}: use the assay that wrote it"
                            )
                        # Older schemas derived other facet and criteria rows: they are
                        # rebuilt from the records, which are kept as they were.
                        for table in DERIVED_TABLES:
                            connection.execute(f"DROP TABLE IF EXISTS {table}")
                        for statement in UPGRADE_TO_4:
                            connection.execute(statement)
                    connection.execute(SOURCE_SCHEMA)
                    if found != SCHEMA_VERSION:
                        connection.execute(SCHEMA)
                        if found is not None:
                            self._rederive(connection)
                            connection.execute(BUMP_GENERATION)
                        connection.execute(
                            "INSERT INTO meta (key, value) VALUES ('schema', %s), "
                            "('generation', '0') ON CONFLICT (key) DO NOTHING",
                            (SCHEMA_VERSION,),
                        )
                        connection.execute(
                            "UPDATE meta SET value = %s WHERE key = 'schema'", (SCHEMA_VERSION,)
                        )
                    # Tables added since (no rebuild needed): created where missing.
                    # So are indexes a killed bulk load left dropped (unless a load is
                    # under way: it builds them when it ends).
                    restore_deferred(connection, schema)
                    connection.execute(POSTGRES_SERVICE_SCHEMA)
                    connection.execute(POSTGRES_CVE5_SCHEMA)
                    connection.execute(POSTGRES_OSV_SCHEMA)
                    backfill(PostgresExecutor(connection))  # tracking beside NVD's
                    announce_generation(connection)
            except BaseException as error:
                self._criteria_ids.rolled_back()
                self._vectors.rolled_back()
                if isinstance(error, psycopg.Error):
                    raise StoreError(
                        f"cannot create the store in {self._target.describe()}: {_reason(error)}"
                    ) from error
                raise
            self._criteria_ids.committed()
            self._vectors.committed()
        return False

    def _on_standby(self, connection: Connection) -> bool:
        """Whether the server is a hot standby (a read replica): read-only, its schema is
        its primary's and is only checked here."""
        try:
            row = connection.execute("SELECT pg_is_in_recovery()").fetchone()
            if row is None or not row[0]:
                return False
            self._configure(connection)
            found = self._schema_version(connection)
        except psycopg.Error as error:
            raise StoreError(f"cannot read {self._target.describe()}: {_reason(error)}") from error
        if found != SCHEMA_VERSION:
            raise StoreError(
                f"the standby {self._target.describe()} holds store schema {found!r}; this "
                f"assay reads schema {SCHEMA_VERSION}: create or upgrade it on its primary"
            )
        return True

    def _rederive(self, connection: Connection) -> None:
        """Rebuild every CVE's derived rows from its stored record."""
        last = 0
        while True:
            rows = connection.execute(
                "SELECT id, record FROM cve WHERE id > %s ORDER BY id LIMIT %s",
                (last, REDERIVE_BATCH),
            ).fetchall()
            if not rows:
                return
            derived = [
                (
                    int(row_id),
                    cve_facts(orjson.loads(unpack(bytes(record))), f"stored record {row_id}"),
                )
                for row_id, record in rows
            ]
            self._insert_derived(connection, derived)
            last = int(rows[-1][0])

    def _schema_version(self, connection: Connection) -> str | None:
        if connection.execute("SELECT to_regclass('meta')").fetchone() in (None, (None,)):
            return None
        row = connection.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        return None if row is None else str(row[0])

    def _configure(self, connection: Connection) -> None:
        # Every statement prepared at its first use (psycopg's default waits for five):
        # a server sends the same few statement texts with other values, and planning
        # one (a `cpeName`'s, ~0.9 ms) costs more than running it (~0.15 ms); PostgreSQL
        # still plans the first executions for their values before it keeps a plan.
        connection.prepare_threshold = 0
        if self._target.schema is not None:
            connection.execute(
                sql.SQL("SET search_path TO {}").format(sql.Identifier(self._target.schema))
            )

    def _note_returned(self, connection: Connection) -> None:
        self._returned[connection] = time.monotonic()

    def _check_if_idle(self, connection: Connection) -> None:
        returned = self._returned.get(connection)
        if returned is None or time.monotonic() - returned > CHECK_IDLE_AFTER:
            ConnectionPool.check_connection(connection)

    def close(self) -> None:
        watch, self._watch = self._watch, None
        if watch is not None:
            release_watch(self._watch_key)
        self._pool.close()

    def _wrote(self) -> None:
        """A write of this thread committed: the announced generation waits for it."""
        if self._watch is not None and getattr(self._pinned, "connection", None) is None:
            self._watch.invalidate()

    @contextmanager
    def _using(self, action: str) -> Iterator[Connection]:
        """A pooled connection (the one `transaction()` holds, inside it); any database
        failure becomes a `StoreError` naming `action`."""
        pinned: Connection | None = getattr(self._pinned, "connection", None)
        try:
            if pinned is not None:
                yield pinned
                return
            with self._pool.connection() as connection:
                yield connection
        except PoolTimeout as error:
            raise StoreError(
                f"{action}: no connection to {self._target.describe()} "
                f"became free within {self._pool_timeout:g} s"
            ) from error
        except psycopg.Error as error:
            raise StoreError(
                f"{action} failed on {self._target.describe()}: {_reason(error)}"
            ) from error

    @contextmanager
    def bulk_load(self) -> Iterator[None]:
        """When the store holds no CVE, the indexes whose upkeep costs most in a load
        (`_postgres_bulk.DEFERRED`) are dropped for the block and built at its end, in
        one transaction, however the block ends. Writes inside the block leave the
        full-text indexes' pending lists to its end, where they are merged once. Then the
        planner's statistics of the store's tables are brought up to date (and, after a
        load into an empty store, the tables vacuumed): autovacuum may
        take minutes to notice a large import, and until then queries are planned for the
        tables as they were (a 1,000-component scan took 6.0 s instead of 1.4 s right
        after 340,000 CVEs were imported into an empty store)."""
        with self._bulk_lock() as alone:
            deferred = self._drop_indexes_if_empty() if alone else []
            self._loading += 1
            self._lexemes_deferred = bool(deferred)
            try:
                yield
            finally:
                self._loading -= 1
                self._lexemes_deferred = False
                if deferred:
                    with (
                        self._using("building the deferred indexes") as connection,
                        connection.transaction(),
                    ):
                        build(connection, deferred)
        # A load into an empty store wrote every page: VACUUM marks them all-visible, so
        # index-only scans (a `cpeName`'s `cve_criteria` look-ups) skip the table.
        refresh = "VACUUM (ANALYZE) {}" if deferred else "ANALYZE {}"
        with self._using("refreshing the planner's statistics") as connection:
            tables = connection.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
            ).fetchall()
            for (table,) in tables:
                connection.execute(sql.SQL(refresh).format(sql.Identifier(table)))
            merge_pending(connection)  # (autovacuum may be off, or come much later)

    @contextmanager
    def _bulk_lock(self) -> Iterator[bool]:
        """Held by a bulk load on a connection of its own (a store opened meanwhile
        leaves the deferred indexes to it); False when another load holds it, or on a
        standby (this one then drops nothing)."""
        if self._standby:  # (read-only: nothing to prepare)
            yield False
            return
        connection = self._connect()
        try:
            try:
                alone = try_bulk_lock(connection, self._target.schema)
            except psycopg.Error as error:
                raise StoreError(
                    f"preparing a bulk load failed on {self._target.describe()}: {_reason(error)}"
                ) from error
            yield alone
        finally:
            connection.close()  # (ends the session, and with it the lock)

    def _drop_indexes_if_empty(self) -> list[str]:
        """The statements that build the indexes dropped (none unless the store has no
        CVE, or inside `transaction()`)."""
        if getattr(self._pinned, "connection", None) is not None:
            return []
        with self._using("preparing a bulk load") as connection, connection.transaction():
            lock_for_writing(connection, "cve")
            return drop_deferred_if_empty(connection)

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Every write of this thread in the block is one transaction, on one connection:
        all or nothing (`assay nvd import --atomic`); each write inside is a savepoint."""
        if getattr(self._pinned, "connection", None) is not None:
            raise StoreError("transaction(): already inside one")
        try:
            with (
                self._using("writing in one transaction") as connection,
                connection.transaction(),
            ):
                self._pinned.connection = connection
                try:
                    yield
                finally:
                    self._pinned.connection = None
        except BaseException:
            self._forget_pending()
            raise
        self._criteria_ids.committed()
        self._vectors.committed()
        self._wrote()

    # -- meta ------------------------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        with self._using("reading meta") as connection:
            row = connection.execute("SELECT value FROM meta WHERE key = %s", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        self._set_meta_values({key: value})

    @contextmanager
    def exclusive(self, name: str) -> Iterator[None]:
        """A session-level advisory lock, keyed by database, schema and `name`, held by a
        connection of its own: the server drops it when that connection ends."""
        key = f"assay:{self._target.schema or ''}:{check_lock_name(name)}"
        connection = self._connect()
        try:
            try:
                row = connection.execute(
                    "SELECT pg_try_advisory_lock(hashtextextended(%s, 0))", (key,)
                ).fetchone()
            except psycopg.Error as error:
                raise StoreError(
                    f"taking the {name!r} lock failed on {self._target.describe()}: "
                    f"{_reason(error)}"
                ) from error
            if row is None or not row[0]:
                raise StoreBusy(
                    f"the store at {self._target.describe()} is busy: another session "
                    f"holds its {name!r} lock"
                )
            yield
        finally:
            connection.close()  # (ends the session, and with it the lock)

    def _set_meta_values(self, meta: Mapping[str, str]) -> None:
        with self._using("writing meta") as connection, connection.transaction():
            _write_meta(connection, meta)

    def _generation(self, connection: Connection) -> int:
        row = connection.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
        assert row is not None
        return int(row[0])

    # -- CVEs ------------------------------------------------------------------------

    def generation(self) -> int:
        with self._using("reading the data generation") as connection:
            return self._generation(connection)

    def buffer_fit(self) -> BufferFit:
        """The server's `shared_buffers` against the full-text table and its index
        (`_postgres_buffers`)."""
        with self._using("reading the size of the full-text index") as connection:
            return buffer_fit(connection)

    def read_at_generation(self, read: Callable[[], T], *, at_least: int = 0) -> tuple[int, T]:
        """The data generation, then `read()`: every read in it sees every write up to
        that generation, and a `cveId` look-up in it may be answered from the records
        kept for exactly that generation (`_look_up`). The generation the server
        announced (`_postgres_watch`) spares a round trip where it is known: the reads
        see it or a later one. A single store is its own only copy, whatever `at_least`."""
        announced = None if self._watch is None else self._watch.current()
        generation = self.generation() if announced is None else announced
        self._told.generation = generation
        try:
            return generation, read()
        finally:
            self._told.generation = None

    def count_cves_by_status(self) -> dict[str, int]:
        with self._using("counting CVEs by status") as connection:
            rows = connection.execute(
                "SELECT vuln_status, count(*) FROM cve GROUP BY vuln_status"
            ).fetchall()
        return {str(status): int(count) for status, count in rows}

    def count_cves(self) -> int:
        with self._using("counting CVEs") as connection:
            row = connection.execute("SELECT count(*) FROM cve").fetchone()
        assert row is not None
        return int(row[0])

    def upsert_cves(
        self, batch: Sequence[CveFacts], *, meta: Mapping[str, str] | None = None
    ) -> UpsertCounts:
        rows = RecordRows(
            "CVEs",
            "cve",
            "cve_id",
            "last_modified",
            CVE_COLUMNS,
            _cve_values,
            key=lambda facts: facts.cve_id,
            order=lambda facts: facts.last_modified,
            children=_CveDerived(self._insert_derived),
            packed=True,
        )
        return self._upsert(rows, batch, meta)

    def _insert_derived(self, connection: Connection, written: list[tuple[int, CveFacts]]) -> None:
        """A batch's facets (and the CVSS vectors new to the store), criteria uses and
        texts."""
        self._insert_vectors(connection, written)
        copy_rows(
            connection,
            "cve_facet",
            FACET_COLUMNS,
            sorted(
                (text(kind), text(value), row_id)
                for row_id, facts in written
                for kind, value in facts.facets
            ),
        )
        ids = self._criteria_ids_of(connection, [c for _, facts in written for c in facts.criteria])
        uses = {
            (ids[criteria.identity], row_id, int(criteria.vulnerable))
            for row_id, facts in written
            for criteria in facts.criteria
        }
        copy_rows(connection, "cve_criteria", USE_COLUMNS, sorted(uses))
        copy_rows(
            connection,
            "cve_text",
            CVE_TEXT_COLUMNS,
            ((row_id, tsvector_literal(facts.search_text)) for row_id, facts in written),
        )
        if self._lexemes_deferred:
            return
        # In lexeme order, so that two writers never wait on each other's new lexemes.
        connection.execute(
            "INSERT INTO cve_lexeme (lexeme) SELECT DISTINCT unnest(tsvector_to_array("
            "search_vector)) FROM cve_text WHERE id = ANY(%s::bigint[]) ORDER BY 1 "
            "ON CONFLICT DO NOTHING",
            ([row_id for row_id, _ in written],),
        )

    def _insert_vectors(self, connection: Connection, written: list[tuple[int, CveFacts]]) -> None:
        """The CVSS vectors of `written` this process has not seen stored."""
        vectors = {
            (kind, value)
            for _, facts in written
            for kind, value in facts.facets
            if kind.startswith("vec") and self._vectors.get((kind, value)) is None
        }
        if not vectors:
            return
        connection.execute(
            "INSERT INTO cvss_vector (kind, vector) SELECT * FROM unnest(%s::text[], %s::text[]) "
            "ON CONFLICT DO NOTHING",
            ([text(kind) for kind, _ in vectors], [text(vector) for _, vector in vectors]),
        )
        for vector in vectors:
            self._vectors.learn(vector, 0)

    def _criteria_ids_of(
        self, connection: Connection, criteria: Sequence[Criteria]
    ) -> dict[bytes, int]:
        """The row id of each criteria by identity, inserting those the store lacks."""
        ids: dict[bytes, int] = {}
        unknown: dict[bytes, Criteria] = {}
        for item in criteria:
            identity = item.identity
            if identity in ids or identity in unknown:
                continue
            row_id = self._criteria_ids.get(identity)
            if row_id is not None:
                ids[identity] = row_id
            else:
                unknown[identity] = item
        if unknown:
            rows = [
                (
                    identity,
                    *texts(first.components),
                    first.version_key,
                    first.start_key,
                    int(first.start_inclusive),
                    first.end_key,
                    int(first.end_inclusive),
                    None if first.match_criteria_id is None else text(first.match_criteria_id),
                )
                for identity, first in unknown.items()
            ]
            found = insert_distinct(connection, "criteria", CRITERIA_COLUMNS, rows)
            for identity in unknown:
                ids[identity] = found[identity]
                self._criteria_ids.learn(identity, found[identity])
        return ids

    def search_cves(self, query: CveQuery) -> Page:
        if query.cve_id is not None and _lookup_only(query):
            return self._look_up(query, getattr(self._told, "generation", None))
        with self._using("searching CVEs") as connection:
            if query.cve_id is not None:
                # At most one row: no ordering, no cache.
                builder = SqlBuilder(POSTGRES)
                rows = connection.execute(
                    f"SELECT c.record FROM cve c WHERE {cve_where(query, builder)}",
                    bound(builder.params),
                )
                records = [unpack(bytes(row[0])) for row in rows]
                window = records[query.start_index : query.start_index + query.results_per_page]
                return Page(len(records), window)
            return self._page(
                connection,
                "cve",
                lambda generation: api_ordered_ids(
                    connection,
                    generation,
                    query,
                    self._orders,
                    lambda: _sorted_cve_ids(query),
                    keep=lambda stored: self._keep_records(generation, stored),
                ),
                query,
                cacheable=True,
            )

    def _look_up(self, query: CveQuery, told: int | None) -> Page:
        """One CVE by id. Inside `read_at_generation` (how a server reads), the record
        may come from the records kept for the very generation the caller was told.
        Otherwise it is read with the generation in one statement (one snapshot, so the
        record is exactly that generation's) and kept under it. Either way the answer is
        never older than the generation the caller was told, and a write (in any
        process) moves the generation, which empties the kept records."""
        assert query.cve_id is not None
        key = ("cve_id", text(query.cve_id))
        record = None if told is None else self._records.get_many(told, [key]).get(key)
        if record is None:
            _, record = self._read_and_keep(key)
        if record == ABSENT:
            return Page(0, [])
        found = [record][query.start_index : query.start_index + query.results_per_page]
        return Page(1, found)

    def cve_with_generation(self, cve_id: str) -> tuple[int, bytes | None]:
        """The data generation and the record of `cve_id` (None when there is none), read
        by one statement (one snapshot) and kept for that generation: what `search_cves`
        gives for `CveQuery(cve_id=...)` after `generation()`, for the server's `?cveId=`
        shortcut."""
        generation, record = self._read_and_keep(("cve_id", text(cve_id)))
        return generation, (None if record == ABSENT else record)

    def _read_and_keep(self, key: tuple[str, str]) -> tuple[int, bytes]:
        """The generation and the record of CVE id `key[1]` (ABSENT for none), read by
        `LOOK_UP` and kept for that generation."""
        with self._using("searching CVEs") as connection:
            row = connection.execute(LOOK_UP, (key[1],), binary=True).fetchone()
        assert row is not None
        generation, stored = int(row[0]), row[1]
        record = ABSENT if stored is None else unpack(bytes(stored))
        self._records.advance(generation)
        self._records.put_many(generation, {key: record})
        return generation, record

    def kept_cve(self, cve_id: str) -> tuple[int, bytes | None] | None:
        """`cve_with_generation` answered from memory, without the network: when the
        generation the server announced (`_postgres_watch`) is known and the record (or
        its absence) was kept for it. None otherwise: read it with `cve_with_generation`.
        Cheap enough for an event loop."""
        generation = None if self._watch is None else self._watch.current()
        if generation is None:
            return None
        key = ("cve_id", text(cve_id))
        record = self._records.get_many(generation, [key]).get(key)
        if record is None:
            return None
        return generation, (None if record == ABSENT else record)

    def find_cves(self, queries: Sequence[CveQuery]) -> Iterator[tuple[bytes, tuple[int, ...]]]:
        # One statement per query, with the filter `search_cves` applies (`cve_ids_select`),
        # sent in pipelines (no round trip each), in one read-only snapshot; records a
        # batch at a time.
        with self._using("finding CVEs") as connection, connection.transaction():
            connection.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            found: dict[int, list[int]] = {}
            for start in range(0, len(queries), FIND_PIPELINE):
                sent = []
                with connection.pipeline():
                    for index in range(start, min(start + FIND_PIPELINE, len(queries))):
                        builder = SqlBuilder(POSTGRES)
                        select = cve_ids_select(queries[index], builder)
                        cursor = connection.execute(select, bound(builder.params))
                        sent.append((index, cursor))
                for index, cursor in sent:
                    for (row_id,) in cursor.fetchall():
                        indexes = found.setdefault(int(row_id), [])
                        if not indexes or indexes[-1] != index:  # (a CVE may come twice)
                            indexes.append(index)
            keys = sorted(found)
            for start in range(0, len(keys), FIND_BATCH):
                # Binary results: the records come as they are stored, not hex-encoded.
                rows = connection.execute(
                    "SELECT id, record FROM cve WHERE id = ANY(%s::bigint[])",
                    (keys[start : start + FIND_BATCH],),
                    binary=True,
                ).fetchall()
                for row_id, record in rows:
                    yield unpack(bytes(record)), tuple(found.pop(int(row_id)))

    # -- shared paths ----------------------------------------------------------------

    def _upsert(
        self, rows: RecordRows[F], batch: Sequence[F], meta: Mapping[str, str] | None
    ) -> UpsertCounts:
        """One transaction: insert new keys, replace a record when the incoming one is at
        least as new (by `rows.order`) and differs, leave everything else as it is; bump
        the generation when anything changed; write `meta`."""
        name, key_column, order_column = rows.table, rows.key_column, rows.order_column
        key, order = rows.key, rows.order
        latest, counts = batch_writes(batch, key, order)
        if not latest:
            if meta:
                self._set_meta_values(meta)
            return counts
        try:
            with self._using(f"storing {rows.what}") as connection, connection.transaction():
                try:
                    lock_for_writing(connection, name)
                    existing = stored_versions(
                        connection, name, key_column, order_column, list(latest), packed=rows.packed
                    )
                    added: list[F] = []
                    replaced: list[tuple[int, F]] = []
                    for item_key, facts in latest.items():
                        current = existing.get(item_key)
                        if current is None:
                            added.append(facts)
                            continue
                        row_id, current_order, digest = current
                        same = _digest(facts.record) == digest
                        if stored_stays(order(facts), current_order, same=same):
                            counts.unchanged += 1
                            continue
                        replaced.append((row_id, facts))
                    if replaced:
                        rows.replace(connection, replaced)
                    if added:
                        rows.insert(connection, added)
                    if added or replaced:
                        connection.execute(
                            f"INSERT INTO {name}_written (row, generation) "
                            "SELECT id, (SELECT CAST(value AS bigint) + 1 FROM meta "
                            f"WHERE key = 'generation') FROM {name} "
                            f"WHERE {key_column} = ANY(%s::text[]) ON CONFLICT (row) "
                            "DO UPDATE SET generation = excluded.generation",
                            ([key(f) for f in added] + [key(f) for _, f in replaced],),
                        )
                        connection.execute(BUMP_GENERATION)
                    _write_meta(connection, meta)
                    counts.added += len(added)
                    counts.updated += len(replaced)
                except BaseException:
                    # Forgotten before the rollback lets another writer in.
                    self._forget_pending()
                    raise
        except BaseException:
            self._forget_pending()  # (a failed commit)
            raise
        if getattr(self._pinned, "connection", None) is None:  # (else when it commits)
            self._criteria_ids.committed()
            self._vectors.committed()
            self._wrote()
            if (counts.added or counts.updated) and not self._loading:
                with self._using("merging the full-text indexes' pending lists") as connection:
                    merge_pending(connection)
        return counts

    def _forget_pending(self) -> None:
        self._criteria_ids.rolled_back()
        self._vectors.rolled_back()

    def _page(
        self,
        connection: Connection,
        table: str,
        ids_of: Callable[[int], array[int]],
        query: Paged,
        *,
        cacheable: bool,
    ) -> Page:
        """The ordered id list of a result set (cached when it may be large), sliced:
        `ids_of(generation)` reads it.

        The generation is read before the list (or was, by `read_at_generation`), so a
        list cached under generation g reflects g or a later state; once a write has
        moved past g, no reader asks for g.
        """
        told = getattr(self._told, "generation", None)
        generation = self._generation(connection) if told is None else told
        key = (generation, query.filter_key)
        ids = self._cache.get(key) if cacheable else None
        if ids is None:
            ids = ids_of(generation)
            if cacheable:
                self._cache.put(key, ids)
        page_ids = ids[query.start_index : query.start_index + query.results_per_page]
        if table == "cve" and query.filter_key in WALK_ORDERS:
            # A walk reads each page once: its records would only push the records of
            # popular queries out of the kept ones (and keeping them costs ~4 ms of a
            # 2000-record page), as in SQLite.
            return Page(len(ids), _walk_records(connection, page_ids))
        return Page(len(ids), self._fetch(connection, table, page_ids, generation))

    def _keep_records(self, generation: int, stored: dict[int, bytes]) -> None:
        """Keep CVE records (as stored, by row id) read after `generation` was."""
        self._records.advance(generation)
        self._records.put_many(
            generation,
            {("cve", int(row_id)): unpack(bytes(record)) for row_id, record in stored.items()},
        )

    def _fetch(
        self, connection: Connection, table: str, ids: Iterable[int], generation: int
    ) -> list[bytes]:
        """The records of `ids`, in that order, read after `generation` was (so they
        are at least that new): those kept for it, the others read and kept."""
        wanted: list[tuple[str, str | int]] = [(table, row_id) for row_id in ids]
        if not wanted:
            return []
        by_key = self._records.get_many(generation, wanted)
        missing = [key[1] for key in wanted if key not in by_key]
        if missing:
            # Binary results: the records come as they are stored, not hex-encoded.
            # (Only CVE records are packed; `unpack` passes the JSON of others through.)
            read: dict[tuple[str, str | int], bytes] = {
                (table, int(row_id)): unpack(bytes(record))
                for row_id, record in connection.execute(
                    f"SELECT id, record FROM {table} WHERE id = ANY(%s::bigint[])",
                    (missing,),
                    binary=True,
                )
            }
            self._records.put_many(generation, read)
            by_key.update(read)
        return [by_key[key] for key in wanted if key in by_key]


_ONE_CVE_ID = CveQuery(cve_id="")


def _sorted_cve_ids(query: CveQuery) -> tuple[str, list[object]]:
    """The SQL (and its parameters) of `query`'s CVE ids in API order, sorted by
    PostgreSQL: built only for a filter the kept order cannot place."""
    builder = SqlBuilder(POSTGRES)
    where = cve_where(query, builder)
    return f"SELECT c.id FROM cve c WHERE {where} ORDER BY {CVE_ORDER}", bound(builder.params)


def _walk_records(connection: Connection, ids: Sequence[int]) -> list[bytes]:
    """The CVE records of `ids` (a walk's page), in that order, past the kept records.
    A store imported in API order walks its rows in order: consecutive ids are one range
    of the primary key, read in order (not 2,000 look-ups), used when every id is there."""
    # Binary results: the records come as they are stored, not hex-encoded.
    if consecutive(ids):
        rows = connection.execute(
            "SELECT record FROM cve WHERE id BETWEEN %s AND %s ORDER BY id",
            (ids[0], ids[-1]),
            binary=True,
        ).fetchall()
        if len(rows) == len(ids):
            return [unpack(bytes(stored)) for (stored,) in rows]
    stored = {
        int(row_id): bytes(record)
        for row_id, record in connection.execute(
            "SELECT id, record FROM cve WHERE id = ANY(%s::bigint[])", (list(ids),), binary=True
        )
    }
    return [unpack(stored[row_id]) for row_id in ids if row_id in stored]


def _lookup_only(query: CveQuery) -> bool:
    """Whether `query` is a `cveId` and nothing else (paging aside)."""
    return replace(query, cve_id="", start_index=0, results_per_page=MAX_RESULTS_PER_PAGE) == (
        _ONE_CVE_ID
    )


def _digest(record: bytes) -> bytes:
    return hashlib.sha256(record).digest()


def _reason(error: BaseException) -> str:
    """The first lines of a driver message, on one line."""
    return " ".join(str(error).split()) or type(error).__name__


def _write_meta(connection: Connection, meta: Mapping[str, str] | None) -> None:
    """Set `meta`'s values inside the caller's transaction."""
    if meta:
        with connection.cursor() as cursor:
            cursor.executemany(
                "INSERT INTO meta (key, value) VALUES (%s, %s) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                [(text(key), text(value)) for key, value in meta.items()],
            )


def _cve_values(facts: CveFacts) -> tuple[object, ...]:
    return (
        facts.cve_id,
        facts.published,
        facts.last_modified,
        text(facts.vuln_status),
        int(facts.rejected),
        facts.kev_added,
        pack(facts.record),
    )


@dataclass(frozen=True, slots=True)
class _CveDerived:
    """A CVE's facets, criteria uses and text: written with it, and anew when it is
    replaced."""

    insert: Callable[[Connection, list[tuple[int, CveFacts]]], None]

    def write(self, connection: Connection, written: list[tuple[int, CveFacts]]) -> None:
        self.insert(connection, written)

    def rewrite(self, connection: Connection, replaced: list[tuple[int, CveFacts]]) -> None:
        row_ids = [row_id for row_id, _ in replaced]
        connection.execute("DELETE FROM cve_facet WHERE cve = ANY(%s::bigint[])", (row_ids,))
        connection.execute("DELETE FROM cve_criteria WHERE cve = ANY(%s::bigint[])", (row_ids,))
        connection.execute("DELETE FROM cve_text WHERE id = ANY(%s::bigint[])", (row_ids,))
        self.insert(connection, replaced)
