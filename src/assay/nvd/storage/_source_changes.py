"""The change cursor of the sources beside NVD's: OSV, CVE 5, KEV and EPSS (both backends).

Their tables are keyed by a text id and keep no generation of their own; each has a
`<table>_written` table beside it (key -> the data generation of its last write), the
counterpart of the NVD tables' `<table>_written` rows (`_sql.WRITTEN_TABLES`). A key whose
row is gone (a KEV entry CISA removed) keeps its `_written` row: the removal is a change
too, and a delta carries it.

A store written before these tables existed gains them when it is opened (`backfill`):
every row it holds is marked written at a new generation, so that a delta after any
earlier generation carries them (more than changed, never less; applying a record twice
is harmless).

The SQL is written with `?` placeholders and runs through a backend's `Executor`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Final, Protocol

from assay.nvd.storage._records import unpack


class Executor(Protocol):
    """What runs a statement here (`_cve5_sql.Executor` is one)."""

    def rows(self, statement: str, params: Sequence[object] = ()) -> list[tuple[Any, ...]]: ...

    def many(self, statement: str, params: Sequence[Sequence[object]]) -> int: ...

    def load(
        self, table: str, columns: Sequence[str], rows: Sequence[Sequence[object]], conflict: str
    ) -> int: ...


KEY_COLUMNS: Final = {"osv": "osv_id", "cve5": "cve_id", "kev": "cve_id", "epss": "cve_id"}
"""Each tracked table and its key column."""
VALUE_COLUMNS: Final = {
    "osv": ("record",),
    "cve5": ("record",),
    "kev": ("entry",),
    "epss": ("score", "percentile", "score_date", "model_version"),
}
"""What a change reads of each table's row."""
_BUMP: Final = (
    "UPDATE meta SET value = CAST(CAST(value AS BIGINT) + 1 AS TEXT) WHERE key = 'generation'"
)
_GENERATION: Final = "SELECT CAST(value AS BIGINT) FROM meta WHERE key = 'generation'"


def _schema(key_type: str, generation_type: str, table_options: str) -> str:
    # No index on the generation: a change page walks the key in order from where the
    # last one stopped (all pages together read each row once), and a write then keeps
    # one tree up to date rather than two.
    return "".join(
        f"""
CREATE TABLE IF NOT EXISTS {table}_written (
    key {key_type} PRIMARY KEY,
    generation {generation_type} NOT NULL
){table_options};
"""
        for table in KEY_COLUMNS
    )


SQLITE_CHANGES_SCHEMA: Final = _schema("TEXT", "INTEGER", " WITHOUT ROWID")
POSTGRES_CHANGES_SCHEMA: Final = _schema('TEXT COLLATE "C"', "BIGINT", "")


def bump_and_mark(run: Executor, table: str, keys: Iterable[str]) -> None:
    """Advance the store's generation and mark `keys` of `table` written at it (the
    caller's transaction; nothing when `keys` is empty)."""
    marked = list(dict.fromkeys(keys))
    if not marked:
        return
    run.rows(_BUMP)
    generation = int(run.rows(_GENERATION)[0][0])
    run.load(
        f"{table}_written",
        ("key", "generation"),
        [(key, generation) for key in marked],
        "ON CONFLICT (key) DO UPDATE SET generation = excluded.generation",
    )


def backfill(run: Executor) -> None:
    """Mark the rows of a store written before change tracking (a table with rows and
    no `_written` row) written at one new generation."""
    bumped = False
    for table, column in KEY_COLUMNS.items():
        if run.rows(f"SELECT 1 FROM {table}_written LIMIT 1"):
            continue
        if not run.rows(f"SELECT 1 FROM {table} LIMIT 1"):
            continue
        if not bumped:
            run.rows(_BUMP)
            bumped = True
        run.rows(
            f"INSERT INTO {table}_written (key, generation) "
            f"SELECT {column}, ({_GENERATION}) FROM {table}"
        )


def change_query(table: str, since: int | None) -> str:
    """A page of `table`'s rows in key order after a key: all of them (`since` None), or
    those last written after `since`, removed ones with NULL values."""
    key = KEY_COLUMNS[table]
    values = VALUE_COLUMNS[table]
    if since is None:
        return (
            f"SELECT {key}, {', '.join(values)} FROM {table} WHERE {key} > ? ORDER BY {key} LIMIT ?"
        )
    return (
        f"SELECT w.key, {', '.join('t.' + v for v in values)} FROM {table}_written w "
        f"LEFT JOIN {table} t ON t.{key} = w.key WHERE w.generation > ? AND w.key > ? "
        "ORDER BY w.key LIMIT ?"
    )


class SourceChanges:
    """The change cursor's reader (a mixin of both backends' stores)."""

    if TYPE_CHECKING:

        def _cve5_reading(self, action: str) -> AbstractContextManager[Executor]: ...

    def source_changes(
        self, table: str, since: int | None, after: str, limit: int
    ) -> list[tuple[Any, ...]]:
        """Up to `limit` rows of `table` (`osv`, `cve5`, `kev`, `epss`) with keys after
        `after`, in key order: every row (`since` None), or those last written after
        generation `since`. Each is its key, then `VALUE_COLUMNS[table]` (all None for a
        removed row)."""
        if table not in KEY_COLUMNS:
            raise ValueError(f"expected one of {', '.join(KEY_COLUMNS)}, found {table!r}")
        params: Sequence[object] = (after, limit) if since is None else (since, after, limit)
        with self._cve5_reading(f"reading the changes of {table}") as run:
            rows = run.rows(change_query(table, since), params)
        if VALUE_COLUMNS[table] == ("record",):  # kept packed (`_records.pack`)
            return [(key, None if r is None else unpack(bytes(r))) for key, r in rows]
        return rows
