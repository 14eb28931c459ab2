"""Storage backends behind one interface, chosen by URL scheme.

sqlite:///path/to/assay.db       embedded (the default)
postgresql://user@host/db        PostgreSQL (`?schema=NAME` selects a schema)

`open_store(url, read_urls=[...])`: a PostgreSQL primary read through its streaming
replicas (`replicated.py`).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from assay.errors import StoreError
from assay.nvd.storage._postgres_buffers import BufferFit
from assay.nvd.storage._records import DamagedRecord
from assay.nvd.storage.interface import (
    ApiKey,
    Page,
    ServiceStore,
    Store,
    UpsertCounts,
    service_store,
)
from assay.urls import redact_url

__all__ = [
    "ApiKey",
    "BufferFit",
    "DamagedRecord",
    "Page",
    "ServiceStore",
    "Store",
    "UpsertCounts",
    "buffer_fit",
    "open_store",
    "service_store",
    "store_exists",
]


def buffer_fit(store: Store) -> BufferFit | None:
    """A PostgreSQL store's `shared_buffers` against its full-text table and index
    (`_postgres_buffers`); None for any other store."""
    # (A store of a module never imported is not PostgreSQL: SQLite's users don't pay
    # for importing it.)
    postgres = sys.modules.get("assay.nvd.storage.postgres")
    if postgres is None or not isinstance(store, postgres.PostgresStore):
        return None
    fit: BufferFit = store.buffer_fit()
    return fit


def open_store(
    url: str,
    *,
    timeout: float | None = None,
    create: bool = True,
    read_urls: Sequence[str] = (),
) -> Store:
    """Open (creating and migrating if needed) the store named by `url`. `timeout`:
    seconds a server-backed store may take to answer before a `StoreError`. With
    `create=False` a store that does not exist yet is a `StoreError` instead: a mistyped
    URL must not become an empty store that answers "no vulnerabilities".

    With `read_urls` (PostgreSQL replicas of `url`, itself PostgreSQL), the store reads
    from them and writes to `url`, each copy opened when first used (`replicated.py`)."""
    if read_urls:
        return _replicated(url, read_urls, timeout=timeout)
    if not create and not store_exists(url):
        raise StoreError(
            f"{_shown(url)}: no store there (it is made by `assay nvd import` or sync)"
        )
    if _is_postgres(url):
        return _postgres_store(url, timeout=timeout)
    scheme = _scheme(url)
    if scheme in ("sqlite", "") or len(scheme) == 1:  # bare paths, including C:\ on Windows
        from assay.nvd.storage.sqlite import SqliteStore

        return SqliteStore(url)
    raise StoreError(f"unsupported store URL scheme {scheme!r}: expected sqlite: or postgresql:")


def _postgres_store(url: str, *, timeout: float | None) -> Store:
    try:
        from assay.nvd.storage.postgres import PostgresStore
    except ImportError as error:
        raise StoreError(
            f"{redact_url(url)}: a PostgreSQL store needs the PostgreSQL driver, "
            f"installed with assay's postgres extra (pip install 'assay[postgres]'); "
            f"found {error}"
        ) from None
    return PostgresStore(url, timeout=timeout)


def _replicated(url: str, read_urls: Sequence[str], *, timeout: float | None) -> Store:
    from assay.nvd.storage.replicated import COPY_WAIT, ReplicatedStore

    for given in (url, *read_urls):
        if not _is_postgres(given):
            raise StoreError(
                f"{_shown(given)}: read replicas are PostgreSQL streaming replicas of a "
                "PostgreSQL primary: expected postgresql:// URLs"
            )
        _shown(given)  # (parses it: a bad URL fails now, not at its first use)

    def opener(copy_url: str) -> Store:
        wait = COPY_WAIT if timeout is None else min(timeout, COPY_WAIT)
        return open_store(copy_url, timeout=wait, create=False)

    return ReplicatedStore(url, read_urls, opener, timeout=timeout)


def store_exists(url: str) -> bool:
    """Whether the store named by `url` has been created (by an import, a sync or --create)."""
    if _is_postgres(url):
        return _postgres_store_exists(url)
    from assay.nvd.storage.sqlite import path_from_url

    path = path_from_url(url)
    return str(path) == ":memory:" or path.exists()


def _scheme(url: str) -> str:
    return url.split(":", 1)[0].lower() if ":" in url else ""


def _is_postgres(url: str) -> bool:
    return _scheme(url) in ("postgres", "postgresql")


def _shown(url: str) -> str:
    """`url` as an error may show it: a PostgreSQL URL without its credentials."""
    if _is_postgres(url):
        from assay.nvd.storage.postgres import parse_url

        return parse_url(url).describe()
    return url


def _postgres_store_exists(url: str) -> bool:
    import psycopg

    from assay.nvd.storage.postgres import parse_url

    target = parse_url(url)
    table = f"{target.schema}.meta" if target.schema else "meta"
    try:
        with psycopg.connect(target.conninfo, connect_timeout=10) as connection:
            row = connection.execute("SELECT to_regclass(%s)", (table,)).fetchone()
    except psycopg.Error as error:
        raise StoreError(f"cannot reach {target.describe()}: {type(error).__name__}") from None
    return row is not None and row[0] is not None
