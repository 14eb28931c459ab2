"""A published series of snapshots: a folder of snapshot files, their signatures and an
index (`index.json`) that lists them with their base and target generations, sizes and
digests. The folder is what `assay serve --snapshots DIR` serves at `/api/snapshots/`,
what any static web server can serve as it is, and what `assay store push` puts in an OCI
registry; a follower reads the index and applies the chain of snapshots that continues
its store (`chain`).

    index.json                    {"format", "store", "snapshots": [entry, ...]}
    full-1842.snap                a full snapshot at generation 1842
    full-1842.snap.intoto.json    its DSSE envelope (`--key`)
    full-1842.snap.sigstore.json  or its Sigstore bundle (`--identity-token`)
    delta-1842-1907.snap          the records written after 1842, up to 1907
"""

from __future__ import annotations

import os
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Final, cast

import orjson

from assay.snapshot.format import Manifest, SnapshotError, strict_json

INDEX_NAME: Final = "index.json"
INDEX_FORMAT: Final = 1
MAX_INDEX_BYTES: Final = 4 * 1024 * 1024
SIGNATURE_SUFFIXES: Final = {"dsse": ".intoto.json", "sigstore": ".sigstore.json"}
"""The signature files beside a snapshot, by kind."""
FILE_NAME: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,200}")
"""The names of published files (no folders: the index lists files of its own folder)."""


@dataclass(frozen=True, slots=True)
class Published:
    """One snapshot of the series."""

    name: str
    since: int | None
    generation: int
    records: int
    bytes: int
    sha256: str
    created: str
    signatures: dict[str, str]
    """Kind (`dsse`, `sigstore`) -> the file name of that signature."""

    def to_dict(self) -> dict[str, Any]:
        # The index's keys are the field names, in order; signatures sorted by kind.
        return {**asdict(self), "signatures": dict(sorted(self.signatures.items()))}

    @classmethod
    def from_dict(cls, value: Any, where: str) -> Published:
        if not isinstance(value, dict):
            raise SnapshotError(where, "expected an object")
        since, generation, records, size = _counts(value, where)
        return cls(
            _file_name(value.get("name"), f"{where}.name"),
            since,
            generation,
            records,
            size,
            _sha256(value.get("sha256"), f"{where}.sha256"),
            str(value.get("created") or ""),
            _signatures(value.get("signatures", {}), f"{where}.signatures"),
        )


def _file_name(name: object, where: str) -> str:
    if not isinstance(name, str) or not FILE_NAME.fullmatch(name):
        raise SnapshotError(where, f"expected a file name, found {name!r:.60}")
    return name


def _counts(value: dict[str, Any], where: str) -> tuple[int | None, int, int, int]:
    since = value.get("since")
    numbers = [value.get(key) for key in ("generation", "records", "bytes")]
    if not all(_count(n) for n in numbers) or not (since is None or _count(since)):
        raise SnapshotError(where, "expected since, generation, records, bytes as counts")
    generation, records, size = (int(cast(int, n)) for n in numbers)
    return since, generation, records, size


def _sha256(value: object, where: str) -> str:
    if not isinstance(value, str) or not re.fullmatch(r"[0-9a-f]{64}", value):
        raise SnapshotError(where, "expected 64 lowercase hex digits")
    return value


def _signatures(value: object, where: str) -> dict[str, str]:
    if not isinstance(value, dict) or not all(
        kind in SIGNATURE_SUFFIXES and isinstance(file, str) and FILE_NAME.fullmatch(file)
        for kind, file in value.items()
    ):
        raise SnapshotError(where, "expected {dsse|sigstore: file name}")
    return dict(value)


def _count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


@dataclass(frozen=True, slots=True)
class SnapshotIndex:
    store: str | None
    """The id of the store the series comes from (None while it is empty)."""
    snapshots: tuple[Published, ...]

    @property
    def newest(self) -> int | None:
        return max((s.generation for s in self.snapshots), default=None)

    def to_bytes(self) -> bytes:
        document = {
            "format": INDEX_FORMAT,
            "store": self.store,
            "snapshots": [s.to_dict() for s in self.snapshots],
        }
        return orjson.dumps(document, option=orjson.OPT_INDENT_2) + b"\n"

    @classmethod
    def from_bytes(cls, data: bytes, where: str) -> SnapshotIndex:
        if len(data) > MAX_INDEX_BYTES:
            raise SnapshotError(where, f"expected at most {MAX_INDEX_BYTES} bytes")
        store, listed = _index_parts(strict_json(data, where), where)
        entries = tuple(
            Published.from_dict(item, f"{where}: $.snapshots[{i}]") for i, item in enumerate(listed)
        )
        return cls(store, entries)


def _index_parts(document: Any, where: str) -> tuple[str | None, list[Any]]:
    """An index document's store id and its list of snapshots, checked."""
    if not isinstance(document, dict) or document.get("format") != INDEX_FORMAT:
        raise SnapshotError(f"{where}: $.format", f"expected an index of format {INDEX_FORMAT}")
    store, listed = document.get("store"), document.get("snapshots")
    if not (store is None or isinstance(store, str)) or not isinstance(listed, list):
        raise SnapshotError(where, "expected store (a string) and snapshots (a list)")
    return store, listed


def read_index(folder: Path) -> SnapshotIndex:
    """The folder's index; an empty series when it has none yet."""
    path = folder / INDEX_NAME
    if not path.is_file():
        return SnapshotIndex(None, ())
    return SnapshotIndex.from_bytes(path.read_bytes(), str(path))


def snapshot_name(manifest: Manifest) -> str:
    if manifest.since is None:
        return f"full-{manifest.generation}.snap"
    return f"delta-{manifest.since}-{manifest.generation}.snap"


def _signatures_beside(folder: Path, name: str) -> dict[str, str]:
    """The signature files of the snapshot `name` in `folder`, by kind."""
    files = {kind: name + suffix for kind, suffix in SIGNATURE_SUFFIXES.items()}
    return {kind: file for kind, file in files.items() if (folder / file).is_file()}


def publish(folder: Path, snapshot: Path, manifest: Manifest, sha256: str) -> SnapshotIndex:
    """List `snapshot` (a file in `folder`) and the signatures beside it in the folder's
    index, replacing the index at once (a reader sees the old one or the new one)."""
    index = read_index(folder)
    if index.store is not None and index.store != manifest.store:
        raise SnapshotError(
            str(folder / INDEX_NAME),
            f"the series comes from store {index.store}, this snapshot from {manifest.store}",
        )
    entry = Published(
        snapshot.name,
        manifest.since,
        manifest.generation,
        manifest.records,
        snapshot.stat().st_size,
        sha256,
        manifest.created,
        _signatures_beside(folder, snapshot.name),
    )
    kept = tuple(s for s in index.snapshots if s.name != entry.name)
    updated = SnapshotIndex(manifest.store, (*kept, entry))
    part = folder / f".{INDEX_NAME}.part"
    part.write_bytes(updated.to_bytes())
    os.replace(part, folder / INDEX_NAME)
    return updated


@dataclass(frozen=True, slots=True)
class Chain:
    """The snapshots that bring a store from where it is to the series' newest."""

    steps: tuple[Published, ...]
    reaches: int | None
    """The generation the steps end at (where the store already is when there are none)."""
    newest: int | None

    @property
    def complete(self) -> bool:
        return self.reaches is not None and self.reaches == self.newest


def chain(index: SnapshotIndex, *, source: str | None, reached: int | None) -> Chain:
    """The chain from a store built from `source` at its generation `reached` (both None
    for an empty store: the newest full snapshot first), each step a delta starting at
    the generation the previous one ends at (the longest when several do). A store built
    from another series gets no steps."""
    steps = _first_steps(index, source, reached)
    if steps is None:
        return Chain((), None, index.newest)
    at = steps[0].generation if steps else reached
    while (step := _next_step(index, at)) is not None:
        steps.append(step)
        at = step.generation
    return Chain(tuple(steps), at, index.newest)


def _first_steps(
    index: SnapshotIndex, source: str | None, reached: int | None
) -> list[Published] | None:
    """Where the chain starts: the newest full snapshot for an empty store, nothing more
    for a store of this series; None when the store cannot follow the series."""
    if reached is not None:
        return [] if source == index.store else None
    fulls = [s for s in index.snapshots if s.since is None]
    return [max(fulls, key=lambda s: s.generation)] if fulls else None


def _next_step(index: SnapshotIndex, at: int | None) -> Published | None:
    following = [
        s for s in index.snapshots if s.since is not None and s.since == at and s.generation > at
    ]
    return max(following, key=lambda s: s.generation) if following else None
