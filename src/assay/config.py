"""Where assay keeps its data unless told otherwise."""

from __future__ import annotations

import os
from pathlib import Path

STORE_ENV = "ASSAY_STORE"
# Replicas of the store to read from (`assay serve --read-store`), one URL per line.
READ_STORES_ENV = "ASSAY_READ_STORES"


def default_store_url() -> str:
    """`$ASSAY_STORE`, else a SQLite file in the user's data directory."""
    configured = os.environ.get(STORE_ENV)
    if configured:
        return configured
    import platformdirs  # only when no store is named: it costs start-up time

    path = Path(platformdirs.user_data_dir("assay")) / "assay.db"
    return f"sqlite:///{path}"


def read_store_urls() -> tuple[str, ...]:
    """`$ASSAY_READ_STORES`: the replicas `assay serve` hands its workers (none if unset)."""
    return tuple(line for line in os.environ.get(READ_STORES_ENV, "").splitlines() if line)
