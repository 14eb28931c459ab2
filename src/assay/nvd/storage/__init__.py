"""Storage backends behind one interface, chosen by URL scheme.

sqlite:///path/to/assay.db       embedded (the default)
postgresql://user@host/db        PostgreSQL (`?schema=NAME` selects a schema)
"""

from __future__ import annotations

from assay.errors import StoreError
from assay.nvd.storage.interface import Page, Store, UpsertCounts
from assay.urls import redact_url

__all__ = ["Page", "Store", "UpsertCounts", "open_store"]


def open_store(url: str, *, timeout: float | None = None) -> Store:
    """Open (creating and migrating if needed) the store named by `url`. `timeout`:
    seconds a server-backed store may take to answer before a `StoreError`."""
    scheme = url.split(":", 1)[0].lower() if ":" in url else ""
    if scheme in ("postgres", "postgresql"):
        try:
            from assay.nvd.storage.postgres import PostgresStore
        except ImportError as error:
            raise StoreError(
                f"{redact_url(url)}: a PostgreSQL store needs the PostgreSQL driver, "
                f"installed with assay's postgres extra (pip install 'assay[postgres]'); "
                f"found {error}"
            ) from None
        return PostgresStore(url, timeout=timeout)
    if scheme in ("sqlite", "") or len(scheme) == 1:  # bare paths, including C:\ on Windows
        from assay.nvd.storage.sqlite import SqliteStore

        return SqliteStore(url)
    raise StoreError(f"unsupported store URL scheme {scheme!r}: expected sqlite: or postgresql:")
