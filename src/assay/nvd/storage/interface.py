"""The store seam: what the importer, the server and the mirror need from storage.

One interface, one module per backend (`sqlite.py`, `postgres.py`), chosen by URL
scheme in `open_store`. Every write method is one transaction: it either applies the
whole batch or leaves the store as it was. Its `meta` values (a mirror's checkpoint) are
written in that same transaction, so they never get ahead of, or behind, the records.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Protocol, TypeVar, cast

from assay.errors import StoreError
from assay.nvd.change_record import ChangeFacts
from assay.nvd.cpe_query import CpeQuery
from assay.nvd.cpe_record import CpeFacts
from assay.nvd.cpematch_query import CpeMatchQuery
from assay.nvd.cpematch_record import MatchFacts
from assay.nvd.cve_query import CveQuery
from assay.nvd.cve_record import CveFacts
from assay.nvd.history_query import HistoryQuery
from assay.nvd.source_query import SourceQuery
from assay.nvd.source_record import SourceFacts
from assay.osv.record import OsvRecord

T = TypeVar("T")
LOCK_NAME = re.compile(r"[A-Za-z0-9._-]{1,64}")


def check_lock_name(name: str) -> str:
    """A lock name is a short plain word (SQLite makes a file name of it)."""
    if not LOCK_NAME.fullmatch(name) or name.startswith("."):
        raise StoreError(
            f"lock name {name!r}: expected 1-64 letters, digits, '.', '_' or '-', "
            "not starting with '.'"
        )
    return name


@dataclass(slots=True)
class UpsertCounts:
    added: int = 0
    updated: int = 0
    unchanged: int = 0

    def __iadd__(self, other: UpsertCounts) -> UpsertCounts:
        self.added += other.added
        self.updated += other.updated
        self.unchanged += other.unchanged
        return self


@dataclass(frozen=True, slots=True)
class Page:
    """One page of a result set: the total size and the NVD-encoded records."""

    total: int
    records: list[bytes]


class Store(Protocol):
    url: str
    inline_reads: bool
    """Whether a read of a few rows costs microseconds and no network round trip
    (SQLite), so that the server may run it on its event loop rather than in a thread."""

    def upsert_cves(
        self, batch: Sequence[CveFacts], *, meta: Mapping[str, str] | None = None
    ) -> UpsertCounts:
        """Insert or update by CVE id; an older `lastModified` never replaces a newer one."""
        ...

    def search_cves(self, query: CveQuery) -> Page:
        """The page of matching records, ordered by published then id."""
        ...

    def find_cves(self, queries: Sequence[CveQuery]) -> Iterator[tuple[bytes, tuple[int, ...]]]:
        """Every CVE that some of `queries` selects (each filtered as `search_cves` filters
        it; paging and order do not apply), once: its NVD-encoded record and the indexes
        of the queries that select it, in no particular order. One snapshot of the store;
        records are read in batches as the caller goes and are not cached."""
        ...

    def count_cves(self) -> int: ...

    def generation(self) -> int:
        """The data generation: it moves with every write that changes a record, and each
        record's last write is kept with it (the change cursor, `sinceGeneration`)."""
        ...

    def read_at_generation(self, read: Callable[[], T], *, at_least: int = 0) -> tuple[int, T]:
        """The data generation and `read()`, both from one copy of the data: every read
        of this thread inside `read` sees every write up to that generation. A store
        with replicas (`replicated.py`) picks a copy at least `at_least` new when one
        answers; a single store is its own only copy, whatever `at_least`."""
        ...

    def count_cves_by_status(self) -> dict[str, int]:
        """How many CVEs the store holds in each `vulnStatus` (as stored)."""
        ...

    # -- CPE products, match criteria, change history (see storage/_sql_products.py) ----

    def upsert_cpes(
        self, batch: Sequence[CpeFacts], *, meta: Mapping[str, str] | None = None
    ) -> UpsertCounts:
        """Insert or update by cpeNameId; an older `lastModified` never replaces a newer one."""
        ...

    def search_cpes(self, query: CpeQuery) -> Page:
        """The page of matching products, ordered by created then cpeNameId."""
        ...

    def upsert_match_strings(
        self, batch: Sequence[MatchFacts], *, meta: Mapping[str, str] | None = None
    ) -> UpsertCounts:
        """Insert or update by matchCriteriaId; an older `lastModified` never replaces a
        newer one. A stored record's `matches` become the criteria's expansion for the CVE
        API's `cpeName` filter."""
        ...

    def search_match_strings(self, query: CpeMatchQuery) -> Page:
        """The page of matching match-criteria records, ordered by created then id."""
        ...

    def cve_naming_criteria(self, match_criteria_id: str) -> str | None:
        """The id of a CVE whose configurations name this match criteria (the first by
        id), or None: what a criteria known only from a CVE is read from."""
        ...

    def upsert_changes(
        self, batch: Sequence[ChangeFacts], *, meta: Mapping[str, str] | None = None
    ) -> UpsertCounts:
        """Insert or update by cveChangeId; a change with an older `created` never
        replaces a newer one."""
        ...

    def search_changes(self, query: HistoryQuery) -> Page:
        """The page of matching changes, ordered by created then cveChangeId."""
        ...

    def upsert_sources(
        self, batch: Sequence[SourceFacts], *, meta: Mapping[str, str] | None = None
    ) -> UpsertCounts:
        """Insert or update by first sourceIdentifier; an older `lastModified` never
        replaces a newer one."""
        ...

    def search_sources(self, query: SourceQuery) -> Page:
        """The page of matching sources, ordered by created then first identifier."""
        ...

    # -- OSV records (see storage/_osv_sql.py) -------------------------------------------

    def upsert_osv(
        self, batch: Sequence[OsvRecord], *, meta: Mapping[str, str] | None = None
    ) -> UpsertCounts:
        """Insert or update by OSV id; a record with an earlier `modified` never replaces
        the stored one."""
        ...

    def count_osv(self) -> int: ...

    def osv_by_id(self, osv_id: str) -> bytes | None:
        """The record (compact JSON) with this id, withdrawn or not."""
        ...

    def osv_for_packages(
        self, packages: Sequence[tuple[str, str]]
    ) -> dict[tuple[str, str], list[bytes]]:
        """For each (ecosystem, name) asked, the records not withdrawn whose `affected[]`
        names that package (names compared as `assay.osv.names.normalized_name` gives
        them; `Debian` also finds `Debian:12`), ordered by id. One snapshot."""
        ...

    def osv_for_package(self, ecosystem: str, name: str) -> list[bytes]: ...

    def osv_by_alias(self, alias: str) -> list[bytes]:
        """Records not withdrawn that list `alias` among their aliases, ordered by id."""
        ...

    def osv_for_commit(self, commit: str) -> list[bytes]:
        """Records not withdrawn with a GIT range naming `commit` as affected."""
        ...

    def osv_ecosystems(self) -> list[str]:
        """The ecosystems (without release suffixes) the stored records name, sorted."""
        ...

    def iter_osv(self, ecosystem: str | None = None) -> Iterator[bytes]:
        """Every stored record (withdrawn ones too), or those naming a package of
        `ecosystem` (without its release suffix), ordered by id, read in batches."""
        ...

    def get_meta(self, key: str) -> str | None:
        """A small named value (sync checkpoints, data generation)."""
        ...

    def set_meta(self, key: str, value: str) -> None: ...

    def exclusive(self, name: str) -> AbstractContextManager[None]:
        """Hold the lock `name` of this store, across processes and machines that share
        it, until the block ends (or the holder dies); raises `StoreBusy` at once when
        another holder has it. Readers and other writers are not blocked: it is for
        writers that must not overlap, such as two mirrors of one upstream."""
        ...

    def bulk_load(self) -> AbstractContextManager[None]:
        """The writes of the block are a bulk load (`assay nvd import`): a backend may
        prepare for it, e.g. build the indexes of an empty store once at the end rather
        than row by row. Every write keeps its meaning and its transaction; queries made
        meanwhile are answered, perhaps more slowly."""
        ...

    def transaction(self) -> AbstractContextManager[None]:
        """Every write of this thread in the block is one transaction: all or nothing.
        Each write method inside it is a part of it rather than a transaction of its own."""
        ...

    def close(self) -> None: ...


# -- the service's part: API keys and rate-limit counts (tables in _service_rows.py) --


@dataclass(frozen=True, slots=True)
class ApiKey:
    """A stored key, without the key: its name, creation and last-use times (NVD-style
    UTC timestamps; `last_used` None until first used)."""

    name: str
    created: str
    last_used: str | None

    def to_dict(self) -> dict[str, str | None]:
        return {"name": self.name, "created": self.created, "lastUsed": self.last_used}


class ServiceStore(Protocol):
    """What the service asks of a store besides the NVD data (both backends have it)."""

    def add_api_key(self, name: str, key_digest: bytes, created: str) -> None: ...

    def api_keys(self) -> list[ApiKey]: ...

    def revoke_api_key(self, name: str) -> bool: ...

    def api_key_named_by(self, key_digest: bytes) -> tuple[str, bytes] | None:
        """The name and stored digest of the key with this digest."""
        ...

    def note_api_key_use(self, name: str, when: str) -> None: ...

    def take_hits(
        self, client: str, bucket: int, *, window_start: int, want: int, limit: int, expires: int
    ) -> tuple[int, int]: ...

    def hits_in_window(
        self, client: str, window_start: int, bucket: int
    ) -> list[tuple[int, int]]: ...

    def prune_hits(self, now: int) -> None: ...

    def table_rows(self) -> dict[str, int]: ...

    def get_meta(self, key: str) -> str | None: ...


def service_store(store: object) -> ServiceStore:
    """`store` as a `ServiceStore` (every backend's store is one)."""
    return cast(ServiceStore, store)
