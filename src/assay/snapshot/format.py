"""The snapshot file: a zstd-compressed tar of a manifest and one JSON Lines member per
record kind. Pure apart from the streams it is handed.

    snapshot.json       the manifest (`Manifest`): format, source store, generations,
                        and per member its kind, record count, bytes and SHA-256
    nvd/cve.jsonl       one NVD record per line, as the API serves it
    nvd/cpe.jsonl  nvd/cpematch.jsonl  nvd/change.jsonl  nvd/source.jsonl

The manifest comes first so that a reader knows what to expect before it reads a record;
every member is checked against it (name, size, digest) as it is read, and nothing else
may be in the archive. The file as a whole is what a signature covers (its SHA-256 is
the signed statement's subject), and it is verified before any of this is read.
"""

from __future__ import annotations

import hashlib
import io
import re
import tarfile
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from typing import IO, Any, Final

import orjson

from assay import _json_strict
from assay.errors import InputError

FORMAT: Final = 1
MANIFEST_NAME: Final = "snapshot.json"
MAX_MANIFEST_BYTES: Final = 1024 * 1024
MAX_MEMBER_BYTES: Final = 16 * 1024 * 1024 * 1024
"""Largest member read (the whole of NVD's CVE records is about 3 GiB as JSON Lines)."""
MAX_MEMBERS: Final = 64
_MEMBER_NAME: Final = re.compile(r"[a-z0-9]+/[a-z0-9-]+\.jsonl")
_HEX64: Final = re.compile(r"[0-9a-f]{64}")


class SnapshotError(InputError):
    """A snapshot file that cannot be used: names the file and what is wrong."""


@dataclass(frozen=True, slots=True)
class MemberInfo:
    """One member as the manifest describes it."""

    name: str
    kind: str
    records: int
    bytes: int
    sha256: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)  # the manifest's keys are the field names, in order


@dataclass(frozen=True, slots=True)
class Manifest:
    """What a snapshot holds and where it fits in its store's history."""

    store: str
    """The source store's id (`store.id` in its meta table): deltas apply only to a
    store that came from the same one."""
    since: int | None
    """The generation a delta starts after; `None` for a full snapshot."""
    generation: int
    """The source store's generation the snapshot brings a store to."""
    created: str
    cursors: dict[str, str]
    """The source store's upstream checkpoints (`sync.*` meta values) at export."""
    members: tuple[MemberInfo, ...]

    @property
    def records(self) -> int:
        return sum(member.records for member in self.members)

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "store": self.store,
            "since": self.since,
            "generation": self.generation,
            "created": self.created,
            "cursors": dict(sorted(self.cursors.items())),
            "members": [member.to_dict() for member in self.members],
        }

    @classmethod
    def from_bytes(cls, data: bytes, where: str) -> Manifest:
        return _manifest(
            strict_json(data, f"{where}: {MANIFEST_NAME}"), f"{where}: {MANIFEST_NAME}"
        )


def strict_json(data: bytes, where: str, max_depth: int = 8) -> Any:
    """A small JSON document that a signature or an import decision depends on: no
    repeated key, no deep nesting, valid UTF-8 (`SnapshotError` naming the path)."""
    try:
        value, problem = _json_strict.parse_checked(data, max_depth)
    except (ValueError, RecursionError) as error:
        raise SnapshotError(where, f"expected JSON: {error}") from None
    if problem is not None:
        path, kind = problem
        raise SnapshotError(f"{where}: {path}", _json_strict.problem_reason(kind, max_depth))
    return value


def _field(document: dict[str, Any], name: str, kind: type[Any], where: str) -> Any:
    value = document.get(name)
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        expected = kind.__name__
        raise SnapshotError(f"{where}: $.{name}", f"expected {expected}, found {value!r:.60}")
    return value


def _manifest(document: Any, where: str) -> Manifest:
    if not isinstance(document, dict):
        raise SnapshotError(where, "expected a JSON object")
    if document.get("format") != FORMAT:
        raise SnapshotError(
            f"{where}: $.format", f"expected {FORMAT}, found {document.get('format')!r:.40}"
        )
    since, generation = _generations(document, where)
    cursors = _field(document, "cursors", dict, where)
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in cursors.items()):
        raise SnapshotError(f"{where}: $.cursors", "expected string values")
    return Manifest(
        store=_field(document, "store", str, where),
        since=since,
        generation=generation,
        created=_field(document, "created", str, where),
        cursors=dict(cursors),
        members=_members(_field(document, "members", list, where), where),
    )


def _generations(document: dict[str, Any], where: str) -> tuple[int | None, int]:
    since = document.get("since")
    # A parsed JSON number is an int or a float; a bool is no generation.
    if since is not None and (type(since) is not int or since < 0):
        raise SnapshotError(
            f"{where}: $.since", f"expected null or a generation, found {since!r:.40}"
        )
    generation: int = _field(document, "generation", int, where)
    if generation < (since or 0):  # since is None or a generation of 0 or more
        raise SnapshotError(
            f"{where}: $.generation", f"expected at least {since or 0}, found {generation}"
        )
    return since, generation


def _members(listed: list[Any], where: str) -> tuple[MemberInfo, ...]:
    if len(listed) > MAX_MEMBERS:
        raise SnapshotError(f"{where}: $.members", f"expected at most {MAX_MEMBERS} members")
    members: list[MemberInfo] = []
    for index, item in enumerate(listed):
        member = _member(item, f"{where}: $.members[{index}]")
        if member.name in {m.name for m in members}:
            raise SnapshotError(
                f"{where}: $.members[{index}].name", f"expected a new name, found {member.name!r}"
            )
        members.append(member)
    return tuple(members)


def _member(item: Any, at: str) -> MemberInfo:
    if not isinstance(item, dict):
        raise SnapshotError(at, "expected an object")
    name = _field(item, "name", str, at)
    if not _MEMBER_NAME.fullmatch(name):
        raise SnapshotError(f"{at}.name", f"expected a SOURCE/KIND.jsonl name, found {name!r:.60}")
    digest = _field(item, "sha256", str, at)
    if not _HEX64.fullmatch(digest):
        raise SnapshotError(f"{at}.sha256", "expected 64 lowercase hex digits")
    size = _field(item, "bytes", int, at)
    records = _field(item, "records", int, at)
    if not 0 <= size <= MAX_MEMBER_BYTES or records < 0:
        raise SnapshotError(at, f"expected sizes from 0 to {MAX_MEMBER_BYTES} bytes")
    return MemberInfo(name, _field(item, "kind", str, at), records, size, digest)


class SnapshotWriter:
    """Writes a snapshot to `out` (a binary stream): members first go to spooled
    temporary files, since a tar member's size comes before its bytes and the manifest,
    which lists every member's digest, comes before them all."""

    def __init__(self) -> None:
        self._members: list[tuple[MemberInfo, IO[bytes]]] = []

    def member(self, name: str, kind: str, lines: Iterator[bytes]) -> MemberInfo:
        """Add a member of JSON Lines from `lines` (each a record without its newline)."""
        import tempfile

        spool: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115  (closed in write)
        digest = hashlib.sha256()
        records = size = 0
        for line in lines:
            chunk = line + b"\n"
            spool.write(chunk)
            digest.update(chunk)
            records += 1
            size += len(chunk)
        info = MemberInfo(name, kind, records, size, digest.hexdigest())
        self._members.append((info, spool))
        return info

    def write(
        self,
        out: IO[bytes],
        *,
        store: str,
        since: int | None,
        generation: int,
        created: str,
        cursors: dict[str, str],
    ) -> Manifest:
        import zstandard

        manifest = Manifest(
            store, since, generation, created, cursors, tuple(info for info, _ in self._members)
        )
        compressor = zstandard.ZstdCompressor(level=6, threads=-1)
        with (
            compressor.stream_writer(out, closefd=False) as packed,
            tarfile.open(fileobj=packed, mode="w|", format=tarfile.PAX_FORMAT) as archive,
        ):
            manifest_bytes = orjson.dumps(manifest.to_dict(), option=orjson.OPT_INDENT_2)
            _add(archive, MANIFEST_NAME, len(manifest_bytes), io.BytesIO(manifest_bytes))
            for info, spool in self._members:
                spool.seek(0)
                _add(archive, info.name, info.bytes, spool)
                spool.close()
        self._members.clear()
        return manifest


def _add(archive: tarfile.TarFile, name: str, size: int, data: IO[bytes]) -> None:
    entry = tarfile.TarInfo(name)
    entry.size = size
    entry.mode = 0o644
    archive.addfile(entry, data)


class SnapshotReader:
    """Reads a snapshot from a stream, in one pass: `manifest` first, then `members()`
    yields each member in the manifest's order as `(info, stream)`; each stream must be
    read to its end before the next member is asked for, and its size and SHA-256 are
    checked when it is (`SnapshotError`, naming the member)."""

    def __init__(self, stream: IO[bytes], where: str) -> None:
        import zstandard

        self.where = where
        try:
            unpacked = zstandard.ZstdDecompressor().stream_reader(stream, closefd=False)
            self._archive = tarfile.open(fileobj=unpacked, mode="r|")  # noqa: SIM115
        except (tarfile.TarError, zstandard.ZstdError) as error:
            raise SnapshotError(where, f"expected a zstd-compressed snapshot: {error}") from None
        self._entries = iter(self._archive)
        first = self._manifest_entry()
        handle = self._archive.extractfile(first)
        assert handle is not None
        self.manifest = Manifest.from_bytes(handle.read(), where)

    def _manifest_entry(self) -> tarfile.TarInfo:
        """The archive's first entry: the manifest, bounded in size."""
        first = _next_entry(self._entries, self.where)
        if first is None or first.name != MANIFEST_NAME or not first.isfile():
            raise SnapshotError(self.where, f"expected {MANIFEST_NAME} as the first member")
        if first.size > MAX_MANIFEST_BYTES:
            raise SnapshotError(
                self.where, f"{MANIFEST_NAME}: expected at most {MAX_MANIFEST_BYTES} bytes"
            )
        return first

    def _member_entry(self, info: MemberInfo) -> tarfile.TarInfo:
        """The archive's next entry: the member the manifest lists next, of its size."""
        entry = _next_entry(self._entries, self.where)
        if entry is None or entry.name != info.name or not entry.isfile():
            found = "the end" if entry is None else repr(entry.name)
            raise SnapshotError(self.where, f"expected member {info.name!r} next, found {found}")
        if entry.size != info.bytes:
            raise SnapshotError(
                f"{self.where}: {info.name}", f"expected {info.bytes} bytes, found {entry.size}"
            )
        return entry

    def members(self) -> Iterator[tuple[MemberInfo, IO[bytes]]]:
        where = self.where
        for info in self.manifest.members:
            member = self._archive.extractfile(self._member_entry(info))
            assert member is not None
            yield info, io.BufferedReader(_Checked(member, info, where))
        extra = _next_entry(self._entries, where)
        if extra is not None:
            raise SnapshotError(
                where, f"expected nothing after the listed members, found {extra.name!r}"
            )

    def close(self) -> None:
        self._archive.close()


def _next_entry(entries: Iterator[tarfile.TarInfo], where: str) -> tarfile.TarInfo | None:
    import zstandard

    try:
        return next(entries, None)
    except (tarfile.TarError, zstandard.ZstdError, EOFError) as error:
        raise SnapshotError(where, f"the archive is damaged: {error}") from None


class _Checked(io.RawIOBase):
    """A member's stream that checks its SHA-256 when it reaches the end."""

    def __init__(self, raw: IO[bytes], info: MemberInfo, where: str) -> None:
        self._raw = raw
        self._info = info
        self._where = where
        self._digest = hashlib.sha256()
        self._done = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self._raw.read(len(buffer))
        if not data:
            self._finish()
            return 0
        self._digest.update(data)
        buffer[: len(data)] = data
        return len(data)

    def _finish(self) -> None:
        if self._done:
            return
        self._done = True
        if self._digest.hexdigest() != self._info.sha256:
            raise SnapshotError(
                f"{self._where}: {self._info.name}",
                "its SHA-256 does not match the manifest: the snapshot was altered",
            )
