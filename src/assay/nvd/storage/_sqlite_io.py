"""What every part of the SQLite store shares: its write transactions, its `meta` writes,
look-ups by many keys at once, and SQLite's errors as `StoreError`s."""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, ParamSpec, TypeVar

from assay.errors import StoreError

T = TypeVar("T")
P = ParamSpec("P")

BUMP_GENERATION = "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'"


@contextmanager
def write_transaction(
    connection: sqlite3.Connection, *, outer: bool, forget: Callable[[], None] | None = None
) -> Iterator[None]:
    """One write transaction, or a part of the enclosing one (`outer`, which commits or
    rolls back the whole). When it fails, `forget` runs before the rollback: what the
    writes taught a cache goes before another writer can get in."""
    if outer:
        yield
        return
    try:
        connection.execute("BEGIN IMMEDIATE")
        yield
        connection.execute("COMMIT")
    except BaseException:
        if forget is not None:
            forget()
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise


def write_meta(connection: sqlite3.Connection, meta: Mapping[str, str] | None) -> None:
    """Set `meta`'s values inside the caller's transaction."""
    if meta:
        connection.executemany(
            "INSERT INTO meta (key, value) VALUES (?, ?) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            list(meta.items()),
        )


def chunks(items: Sequence[T], size: int) -> Iterable[Sequence[T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def select_in(
    connection: sqlite3.Connection, select: str, values: Sequence[object], size: int = 500
) -> Iterator[Any]:
    """The rows of `select`, a statement ending in `IN`, for every one of `values`: run
    for `size` of them at a time (SQLite bounds a statement's parameters)."""
    for chunk in chunks(values, size):
        yield from connection.execute(f"{select} ({', '.join('?' * len(chunk))})", chunk).fetchall()


def store_errors(method: Callable[P, T]) -> Callable[P, T]:
    """`method` of a store, an SQLite failure in it (a full disk, a damaged file) a
    `StoreError` naming the store, which callers turn into one line or a 503."""

    @functools.wraps(method)
    def call(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return method(*args, **kwargs)
        except sqlite3.Error as error:
            path = getattr(args[0], "path", "")
            raise StoreError(f"the SQLite store at {path}: {error}") from error

    return call


@contextmanager
def read_snapshot(connection: sqlite3.Connection) -> Iterator[None]:
    """One snapshot for every read of the block (the caller's, when it is inside a
    transaction already)."""
    began = not connection.in_transaction
    if began:
        connection.execute("BEGIN")
    try:
        yield
    finally:
        if began and connection.in_transaction:
            connection.execute("COMMIT")
