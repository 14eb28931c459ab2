"""The indexes an empty PostgreSQL store builds at the end of a bulk load.

Kept up row by row, an index whose keys arrive in no order touches a random page of a
growing B-tree for every row: after each checkpoint that page is written to the WAL
whole, pages split half full, and the index ends up about twice its size. Built once at
the end, it is sorted and written sequentially. Deferred here: the full-text GIN index,
the CVE and criteria B-trees whose keys arrive in no order, and the primary keys of the
facet and criteria-use tables (no write relies on them: their rows are appended with
COPY, and deleted by CVE row id through the `_by_cve` indexes, which stay). The unique
keys the writes look rows up by (`cve_id`, criteria `identity`) stay, as do the indexes
by row id, which a load only appends to.

A load holds a session advisory lock (`bulk_lock_key`) while the indexes are away; a
store opened meanwhile (a server) leaves them to it, and a store opened later without
them (the load was killed) builds them again (`restore_deferred`).
"""

from __future__ import annotations

from collections.abc import Sequence

from assay.nvd.storage._postgres_rows import Connection
from assay.nvd.storage._sql import LEXEMES_COMPLETE

# maintenance_work_mem for building the deferred indexes (sorts in memory, not on disk)
BULK_INDEX_MEMORY_MB = 256

# name: (statement that removes it, statement that builds it)
DEFERRED: dict[str, tuple[str, str]] = {
    "cve_by_published": (
        "DROP INDEX cve_by_published",
        "CREATE INDEX IF NOT EXISTS cve_by_published ON cve (published, cve_id)",
    ),
    "cve_by_last_modified": (
        "DROP INDEX cve_by_last_modified",
        "CREATE INDEX IF NOT EXISTS cve_by_last_modified ON cve (last_modified)",
    ),
    "cve_by_text": (
        "DROP INDEX cve_by_text",
        "CREATE INDEX IF NOT EXISTS cve_by_text ON cve_text USING GIN (search_vector)",
    ),
    "criteria_by_product": (
        "DROP INDEX criteria_by_product",
        "CREATE INDEX IF NOT EXISTS criteria_by_product ON criteria (product, version, vendor)",
    ),
    "criteria_by_id": (
        "DROP INDEX criteria_by_id",
        "CREATE INDEX IF NOT EXISTS criteria_by_id ON criteria (match_criteria_id)",
    ),
    "cve_facet_pkey": (
        "ALTER TABLE cve_facet DROP CONSTRAINT cve_facet_pkey",
        "ALTER TABLE cve_facet ADD CONSTRAINT cve_facet_pkey PRIMARY KEY (kind, value, cve)",
    ),
    "cve_criteria_pkey": (
        "ALTER TABLE cve_criteria DROP CONSTRAINT cve_criteria_pkey",
        "ALTER TABLE cve_criteria ADD CONSTRAINT cve_criteria_pkey "
        "PRIMARY KEY (criteria, cve, vulnerable)",
    ),
}


# `cve_lexeme` lists every lexeme of `cve_text` when it holds `LEXEMES_COMPLETE`; a
# keyword search reads a prefix as its lexemes only then. A load into an empty store
# leaves the lexemes to its end (one pass over the vectors, where writing them with each
# batch costs a read of every batch's vectors back), as it does the indexes.
_LEXEMES_PENDING = f"DELETE FROM cve_lexeme WHERE lexeme = {LEXEMES_COMPLETE}"
_FILL_LEXEMES = (
    "INSERT INTO cve_lexeme (lexeme) SELECT word FROM ts_stat('SELECT search_vector FROM "
    "cve_text') ORDER BY 1 ON CONFLICT DO NOTHING",
    f"INSERT INTO cve_lexeme (lexeme) VALUES ({LEXEMES_COMPLETE}) ON CONFLICT DO NOTHING",
)


def bulk_lock_key(schema: str | None) -> str:
    """The advisory lock a bulk load holds while the store's indexes may be away."""
    return f"assay-bulk:{schema or ''}"


def present_deferred(connection: Connection) -> set[str]:
    """Which of the deferred indexes the store's schema has."""
    return {
        str(name)
        for (name,) in connection.execute(
            "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() "
            "AND indexname = ANY(%s::text[])",
            (list(DEFERRED),),
        )
    }


def drop_deferred_if_empty(connection: Connection) -> list[str]:
    """Inside the caller's transaction, which holds the CVE table against writers: drop
    the deferred indexes when the store holds no CVE; the statements that build them
    again (none when it holds some)."""
    if connection.execute("SELECT 1 FROM cve LIMIT 1").fetchone() is not None:
        return []
    present = present_deferred(connection)
    dropped = [name for name in DEFERRED if name in present]
    for name in dropped:
        connection.execute(DEFERRED[name][0])
    connection.execute(_LEXEMES_PENDING)
    return [DEFERRED[name][1] for name in dropped] + list(_FILL_LEXEMES)


def build(connection: Connection, statements: Sequence[str]) -> None:
    """Build indexes, sorting in memory; inside the caller's transaction."""
    if statements:
        connection.execute(f"SET LOCAL maintenance_work_mem = '{BULK_INDEX_MEMORY_MB}MB'")
    for statement in statements:
        connection.execute(statement)


def restore_deferred(connection: Connection, schema: str | None) -> None:
    """Inside the caller's transaction: build the deferred indexes the store lacks, and
    its lexemes when they are not complete (a killed load left it so), unless a bulk
    load under way holds them off."""
    missing = [DEFERRED[name][1] for name in DEFERRED if name not in present_deferred(connection)]
    complete = connection.execute(
        f"SELECT 1 FROM cve_lexeme WHERE lexeme = {LEXEMES_COMPLETE}"
    ).fetchone()
    if complete is None:
        missing += _FILL_LEXEMES
    if not missing:
        return
    row = connection.execute(
        "SELECT pg_try_advisory_xact_lock(hashtextextended(%s, 0))", (bulk_lock_key(schema),)
    ).fetchone()
    if row is not None and row[0]:
        build(connection, missing)


def try_bulk_lock(connection: Connection, schema: str | None) -> bool:
    """Take the bulk-load lock on `connection`'s session; False when another load has it."""
    row = connection.execute(
        "SELECT pg_try_advisory_lock(hashtextextended(%s, 0))", (bulk_lock_key(schema),)
    ).fetchone()
    return row is not None and bool(row[0])
