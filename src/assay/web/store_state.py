"""What a store holds, in a few numbers: `read_state(store) -> StoreState`.

Counts are asked through the same query layer the API uses (a page of size 0 gives the
total) and kept per data generation: any write moves the generation, so a state is never
older than the data it describes and is not recounted on every page view.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass

from assay.nvd.checkpoint import sync_status, utc_text
from assay.nvd.cpe_query import CpeQuery
from assay.nvd.cpematch_query import CpeMatchQuery
from assay.nvd.operations import OPERATIONS
from assay.nvd.storage import Store
from assay.urls import redact_url

STORE_UNAVAILABLE = "the store is unavailable; try again shortly"
"""What a public page or probe says when the store fails: what failed (host, database,
user) goes to the server's log only."""
_log = logging.getLogger("assay.serve")


def log_store_error(error: Exception) -> None:
    """The details of a store failure, for the operator (stderr of `assay serve`)."""
    _log.warning("store: %s", error)


@dataclass(frozen=True, slots=True)
class SyncState:
    kind: str
    upstream: str
    phase: str
    since: str


@dataclass(frozen=True, slots=True)
class StoreState:
    url: str  # secrets masked (`redact_url`); for the operator, never on a public page
    generation: int
    cves: int
    products: int
    criteria: int
    schema: str
    syncs: tuple[SyncState, ...]

    @property
    def empty(self) -> bool:
        return self.cves == 0 and self.products == 0 and self.criteria == 0


def generation_of(store: Store) -> int:
    text = store.get_meta("generation")
    return int(text) if text and text.isdigit() else 0


def _syncs(store: Store) -> tuple[SyncState, ...]:
    found: list[SyncState] = []
    for operation in OPERATIONS.values():
        status = sync_status(store.get_meta, operation)
        if status is not None:
            found.append(
                SyncState(
                    kind=operation.name,
                    upstream=redact_url(status.upstream),
                    phase=status.phase,
                    since="" if status.since is None else utc_text(status.since),
                )
            )
    return tuple(found)


def count_state(store: Store) -> StoreState:
    """Count afresh (a few cached list look-ups; the first after a write walks the ids)."""
    generation = generation_of(store)
    return StoreState(
        url=redact_url(store.url),
        generation=generation,
        cves=store.count_cves(),
        products=store.search_cpes(CpeQuery(results_per_page=0)).total,
        criteria=store.search_match_strings(CpeMatchQuery(results_per_page=0)).total,
        schema=_schema(store),
        syncs=_syncs(store),
    )


def _schema(store: Store) -> str:
    backend = "PostgreSQL" if store.url.lower().startswith("postgres") else "SQLite"
    version = store.get_meta("schema") or ""
    return f"{backend} schema {version}".strip()


class StateCache:
    """The state of one store, recounted only when its generation moves."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._state: StoreState | None = None
        self._lock = threading.Lock()

    def read(self) -> StoreState:
        generation = generation_of(self.store)
        with self._lock:
            state = self._state
        if state is not None and state.generation == generation:
            return state
        state = count_state(self.store)
        with self._lock:
            self._state = state
        return state
