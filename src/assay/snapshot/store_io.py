"""A store's records into a snapshot file, and a snapshot file into a store.

`export_snapshot` writes everything the store holds, or only what was written after a
generation (a delta). `apply_snapshot` writes a snapshot into a store in one transaction:
a full snapshot only into an empty store, a delta only into a store that a snapshot of the
same source brought exactly to the delta's base generation. A refused or interrupted
apply leaves the store as it was. Signatures are checked before this module is reached
(`assay.snapshot.signing`).
"""

from __future__ import annotations

import tempfile
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, Final

from assay.nvd.dates import format_nvd_timestamp
from assay.nvd.ingest.importer import Importer
from assay.nvd.storage import Store, UpsertCounts
from assay.snapshot.format import (
    Manifest,
    MemberInfo,
    SnapshotError,
    SnapshotReader,
    SnapshotWriter,
)
from assay.snapshot.kinds import BY_MEMBER, KINDS
from assay.snapshot.sources import SOURCE_BY_MEMBER, SOURCE_KINDS

STORE_ID_KEY: Final = "store.id"
"""This store's own id, made the first time a snapshot is exported from it."""
SOURCE_KEY: Final = "snapshot.source"
"""The id of the store whose snapshots this store was built from."""
SOURCE_GENERATION_KEY: Final = "snapshot.generation"
"""The source store's generation that the snapshots applied so far brought this store to."""
MAX_EXPORT_ATTEMPTS: Final = 3


@dataclass(frozen=True, slots=True)
class ApplyResult:
    manifest: Manifest
    added: int
    updated: int
    unchanged: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "store": self.manifest.store,
            "since": self.manifest.since,
            "generation": self.manifest.generation,
            "records": self.manifest.records,
            "added": self.added,
            "updated": self.updated,
            "unchanged": self.unchanged,
        }


def store_id(store: Store) -> str:
    """The store's id, made and kept on first use."""
    known = store.get_meta(STORE_ID_KEY)
    if known:
        return known
    made = str(uuid.uuid4())
    store.set_meta(STORE_ID_KEY, made)
    return store.get_meta(STORE_ID_KEY) or made


def export_snapshot(store: Store, out: IO[bytes], *, since: int | None = None) -> Manifest:
    """Write a snapshot of `store` to `out`: every record, or those last written after
    generation `since`. Records written while the export runs may be in it too; its
    `generation` is the one read before the first record, so the next delta (`since` that
    generation) misses nothing."""
    if since is not None and since < 0:
        raise SnapshotError("since", f"expected a generation of 0 or more, found {since}")
    identity = store_id(store)
    generation = store.generation()
    if since is not None and since > generation:
        raise SnapshotError(
            "since", f"expected at most the store's generation {generation}, found {since}"
        )
    cursors = _cursors(store)
    writer = SnapshotWriter()
    for kind in (*KINDS, *SOURCE_KINDS):  # NVD's kinds first, then the other sources
        writer.member(kind.member, kind.name, kind.records(store, since))
    return writer.write(
        out,
        store=identity,
        since=since,
        generation=generation,
        created=format_nvd_timestamp(datetime.now(UTC)),
        cursors=cursors,
    )


OTHER_CURSOR_KEYS: Final = (
    "sync.cve5",
    "kev.catalogVersion",
    "epss.scoreDate",
    "epss.modelVersion",
)
"""The checkpoints of the other sources' syncs and imports (`sync.osv.<ECOSYSTEM>` too)."""
OSV_CURSOR_PREFIX: Final = "sync.osv."


def _cursors(store: Store) -> dict[str, str]:
    """The store's sync checkpoints that are set, by meta key."""
    values = {key: store.get_meta(key) for key in _cursor_keys(store)}
    return {key: value for key, value in values.items() if value is not None}


def _cursor_keys(store: Store) -> list[str]:
    # The upstream checkpoints of `assay nvd sync` (not its cursors into another assay's
    # generations, which mean nothing to a store built from snapshots), and those of the
    # other sources.
    from assay.nvd.sync import SPECS

    osv = [OSV_CURSOR_PREFIX + ecosystem for ecosystem in store.osv_ecosystems()]
    return [*(spec.meta_key for spec in SPECS.values()), *OTHER_CURSOR_KEYS, *osv]


def _is_cursor_key(key: str) -> bool:
    from assay.nvd.sync import SPECS

    known = {spec.meta_key for spec in SPECS.values()}
    return key in known or key in OTHER_CURSOR_KEYS or key.startswith(OSV_CURSOR_PREFIX)


def check_fits(store: Store, manifest: Manifest, where: str) -> None:
    """Refuse a snapshot that does not continue this store's history exactly."""
    source = store.get_meta(SOURCE_KEY)
    if manifest.since is None:
        _check_empty(store, source, where)
        return
    reached = _reached(store)
    if source is None or reached is None:
        raise SnapshotError(
            where,
            f"a delta (after generation {manifest.since}) needs a store built from a full "
            "snapshot of the same source first; this store was not",
        )
    _check_delta(manifest, source, reached, where)


def _check_empty(store: Store, source: str | None, where: str) -> None:
    """A full snapshot starts a store: it goes into one with no data and no source."""
    if source is not None or store.count_cves() or store.generation():
        raise SnapshotError(
            where,
            "a full snapshot goes into an empty store only; this one holds data "
            f"(generation {store.generation()}): use a new store or a delta",
        )


def _reached(store: Store) -> int | None:
    """The generation of its source the store was last brought to (None: not recorded)."""
    text = store.get_meta(SOURCE_GENERATION_KEY)
    return int(text) if text and text.isdigit() else None


def _check_delta(manifest: Manifest, source: str, reached: int, where: str) -> None:
    if source != manifest.store:
        raise SnapshotError(
            where, f"the delta comes from store {manifest.store}, this store from {source}"
        )
    if manifest.since != reached:
        gap = "a gap" if (manifest.since or 0) > reached else "an overlap"
        raise SnapshotError(
            where,
            f"{gap}: the delta starts after generation {manifest.since}, this store is at "
            f"generation {reached} of its source",
        )


def apply_snapshot(
    store: Store,
    stream: IO[bytes],
    where: str,
    *,
    on_member: Callable[[MemberInfo], None] | None = None,
) -> ApplyResult:
    """Write the snapshot read from `stream` into `store`, all or nothing."""
    reader = SnapshotReader(stream, where)
    try:
        return _apply(store, reader, on_member)
    finally:
        reader.close()


def _apply(
    store: Store, reader: SnapshotReader, on_member: Callable[[MemberInfo], None] | None
) -> ApplyResult:
    manifest, where = reader.manifest, reader.where
    check_fits(store, manifest, where)
    unknown = [m.name for m in manifest.members if m.name not in BY_MEMBER | SOURCE_BY_MEMBER]
    if unknown:
        raise SnapshotError(where, f"members this assay cannot apply: {', '.join(unknown)}")
    with tempfile.TemporaryDirectory(prefix="assay-snapshot-") as folder:
        # Every member is read (and its digest checked) before anything is written.
        files = _spooled(reader, Path(folder))
        importer = Importer(store)
        try:
            with store.transaction():
                counts = _write_members(store, importer, files, manifest, where, on_member)
                store.set_meta(SOURCE_KEY, manifest.store)
                store.set_meta(SOURCE_GENERATION_KEY, str(manifest.generation))
                for key, value in manifest.cursors.items():
                    if _is_cursor_key(key):
                        store.set_meta(key, value)
        finally:
            importer.close()
        counts += importer.report.total()
    return ApplyResult(manifest, counts.added, counts.updated, counts.unchanged)


def _spooled(reader: SnapshotReader, folder: Path) -> list[Path]:
    files: list[Path] = []
    for info, member in reader.members():
        path = folder / info.name.replace("/", "-")
        with path.open("wb") as handle:
            while chunk := member.read(1 << 20):
                handle.write(chunk)
        files.append(path)
    return files


def _write_members(  # noqa: PLR0917 - one call site, the apply's state
    store: Store,
    importer: Importer,
    files: list[Path],
    manifest: Manifest,
    where: str,
    on_member: Callable[[MemberInfo], None] | None,
) -> UpsertCounts:
    counts = UpsertCounts()
    for path, info in zip(files, manifest.members, strict=True):
        if info.records == 0:
            continue
        if info.name in SOURCE_BY_MEMBER:
            counts += _apply_source(store, path, info, where)
        else:
            _apply_nvd(importer, path, info, where)
        if on_member is not None:
            on_member(info)
    return counts


def _apply_nvd(importer: Importer, path: Path, info: MemberInfo, where: str) -> None:
    before = importer.report.rejected, importer.report.failed_files
    importer.import_file(path)
    if (importer.report.rejected, importer.report.failed_files) != before:
        problem = importer.report.problems[-1] if importer.report.problems else ""
        raise SnapshotError(
            f"{where}: {info.name}", f"a record was refused, so nothing was applied: {problem}"
        )


def _apply_source(store: Store, path: Path, info: MemberInfo, where: str) -> UpsertCounts:
    with path.open("rb") as lines:
        return SOURCE_BY_MEMBER[info.name].apply(store, iter(lines), f"{where}: {info.name}")
