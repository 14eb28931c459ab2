"""Read NVD records from files, streaming: a whole feed is never held in memory.

Accepted: NVD API 2.0 responses and 2.0 feed files (`{"vulnerabilities": [...]}`,
`{"products": [...]}`, `{"matchStrings": [...]}`, `{"cveChanges": [...]}`,
`{"sources": [...]}`), and JSON
Lines of records (bare or wrapped as `{"cve": {...}}`); each plain, `.gz`, `.zip`
or `.tar.gz` (every JSON member is read in name order). JSON nested deeper than
`MAX_DEPTH` levels is refused before it is parsed (`assay.nvd.ingest.depth`).
"""

from __future__ import annotations

import gzip
import io
import tarfile
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, cast

import ijson
import orjson

from assay.errors import IngestError
from assay.nvd.ingest.depth import DepthLimitedReader, TooDeep, check_depth
from assay.nvd.operations import OPERATIONS

# What each list key of an NVD response holds: (record kind, item wrapper key; None
# where the items are the records themselves, as in the Source API's `sources`).
LIST_KEYS: dict[str, tuple[str, str | None]] = {
    operation.list_key: (operation.record, operation.wrapper) for operation in OPERATIONS.values()
}
WRAPPERS = {wrapper: kind for kind, wrapper in LIST_KEYS.values() if wrapper is not None}
MAX_LINE_BYTES = 64 * 1024 * 1024
MAX_MEMBER_BYTES = 8 * 1024 * 1024 * 1024  # a decompressed member larger than this is refused
DETECT_BYTES = 1024 * 1024
LINE_BUFFER_BYTES = 1024 * 1024


@dataclass(frozen=True, slots=True)
class SourceRecord:
    kind: str  # "cve", "cpe", "cpematch", "change" or "source"
    position: str  # JSON path or line number inside the member
    value: Any


@dataclass
class Member:
    """One JSON document or JSON Lines stream inside a file (the file itself, or an archive member)."""

    name: str
    open: Callable[[], IO[bytes]]


def members(path: Path, raw: IO[bytes]) -> Iterator[Member]:
    """The JSON streams a file holds, decompressed; `raw` is the open file (its
    position tells how far the import has got)."""
    name = path.name.lower()
    if name.endswith((".tar.gz", ".tgz", ".tar")):
        yield from _tar_members(path, raw)
    elif name.endswith(".zip"):
        yield from _zip_members(path, raw)
    else:
        yield _file_member(path, raw, gzipped=name.endswith(".gz"))


def _tar_members(path: Path, raw: IO[bytes]) -> Iterator[Member]:
    with tarfile.open(fileobj=raw, mode="r:*") as archive:
        entries = sorted(
            (m for m in archive.getmembers() if m.isfile() and _is_json_name(m.name)),
            key=lambda m: m.name,
        )
        for entry in entries:
            _check_member_size(path, entry.name, entry.size)
            yield Member(f"{path}!{entry.name}", _tar_opener(archive, entry))


def _zip_members(path: Path, raw: IO[bytes]) -> Iterator[Member]:
    with zipfile.ZipFile(raw) as zipped:
        for info in sorted(zipped.infolist(), key=lambda i: i.filename):
            if info.is_dir() or not _is_json_name(info.filename):
                continue
            _check_member_size(path, info.filename, info.file_size)
            yield Member(f"{path}!{info.filename}", _zip_opener(zipped, info))


def _check_member_size(path: Path, name: str, size: int) -> None:
    if size > MAX_MEMBER_BYTES:
        raise IngestError(str(path), name, "archive member is too large")


def _file_member(path: Path, raw: IO[bytes], *, gzipped: bool) -> Member:
    """The file itself, read from its start each time it is opened."""

    def reopen() -> IO[bytes]:
        raw.seek(0)
        if gzipped:
            return cast(IO[bytes], gzip.GzipFile(fileobj=raw, mode="rb"))  # leaves `raw` open
        return open(raw.fileno(), "rb", closefd=False)

    return Member(str(path), reopen)


def _is_json_name(name: str) -> bool:
    lowered = name.lower()
    return lowered.endswith((".json", ".jsonl", ".json.gz", ".jsonl.gz"))


def _tar_opener(archive: tarfile.TarFile, entry: tarfile.TarInfo) -> Callable[[], IO[bytes]]:
    def open_entry() -> IO[bytes]:
        handle = archive.extractfile(entry)
        assert handle is not None
        if entry.name.lower().endswith(".gz"):
            return cast(IO[bytes], gzip.GzipFile(fileobj=handle))
        return handle

    return open_entry


def _zip_opener(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> Callable[[], IO[bytes]]:
    def open_entry() -> IO[bytes]:
        handle: IO[bytes] = archive.open(info)
        if info.filename.lower().endswith(".gz"):
            return cast(IO[bytes], gzip.GzipFile(fileobj=handle))
        return handle

    return open_entry


def read_member(member: Member) -> Iterator[SourceRecord]:
    """Every record of one member, in order."""
    with member.open() as stream:
        head = stream.read(DETECT_BYTES)
    start = head.lstrip()[:1]
    if not start:
        raise IngestError(
            member.name, "byte 0", "the file is empty: expected NVD JSON or JSON Lines of records"
        )
    if start != b"{":
        raise IngestError(member.name, "byte 0", "expected a JSON object or JSON Lines of objects")
    if _looks_like_json_lines(head):
        yield from _json_lines(member)
    else:
        yield from _json_document(member)


def _looks_like_json_lines(head: bytes) -> bool:
    """JSON Lines when the first line is a whole object that is not an API response."""
    first, newline, _ = head.lstrip().partition(b"\n")
    if not newline:
        return False
    try:
        value = orjson.loads(first)
    except orjson.JSONDecodeError:
        return False
    return isinstance(value, dict) and not any(key in value for key in LIST_KEYS)


def _json_lines(member: Member) -> Iterator[SourceRecord]:
    # Lines from a 1 MiB buffer: a gzip stream then decompresses in large pieces rather
    # than 8 KiB ones (a fifth of the time it takes).
    with member.open() as stream, io.BufferedReader(cast(Any, stream), LINE_BUFFER_BYTES) as lines:
        for number, line in enumerate(lines, start=1):
            if len(line) > MAX_LINE_BYTES:
                raise IngestError(member.name, f"line {number}", "line is longer than 64 MiB")
            if not line.strip():
                continue
            try:
                check_depth(line, "")
                value = orjson.loads(line)
            except TooDeep as error:
                raise IngestError(member.name, f"line {number}", error.reason) from None
            except orjson.JSONDecodeError as error:
                raise IngestError(member.name, f"line {number}", f"invalid JSON: {error}") from None
            yield _classify(value, member.name, f"line {number}")


# The kind of a record given without its wrapper, by the keys only it has (in this order;
# a record with none of them is a CVE when its `id` is text).
_KIND_BY_KEYS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("cveChangeId",), "change"),
    (("matchCriteriaId", "criteria"), "cpematch"),
    (("cpeNameId",), "cpe"),
    (("sourceIdentifiers",), "source"),
)


def _classify(value: Any, source: str, position: str) -> SourceRecord:
    if isinstance(value, dict):
        if len(value) == 1:
            ((key, inner),) = value.items()
            if key in WRAPPERS:
                return SourceRecord(WRAPPERS[key], position, inner)
        kind = _unwrapped_kind(value)
        if kind is not None:
            return SourceRecord(kind, position, value)
    raise IngestError(
        source, position, "expected a CVE, CPE, match-criteria, change or source record"
    )


def _unwrapped_kind(value: dict[str, Any]) -> str | None:
    for keys, kind in _KIND_BY_KEYS:
        if all(key in value for key in keys):
            return kind
    return "cve" if isinstance(value.get("id"), str) else None


def _json_document(member: Member) -> Iterator[SourceRecord]:
    list_key = _find_list_key(member)
    kind, wrapper = LIST_KEYS[list_key]
    with member.open() as stream:
        index = -1
        checked = DepthLimitedReader(stream, member.name)
        try:
            for index, item in enumerate(ijson.items(checked, f"{list_key}.item", use_float=True)):
                position = f"$.{list_key}[{index}]"
                if wrapper is None:
                    yield SourceRecord(kind, position, item)
                    continue
                if not isinstance(item, dict) or wrapper not in item:
                    raise IngestError(
                        member.name, position, f"expected an object with key {wrapper!r}"
                    )
                yield SourceRecord(kind, f"{position}.{wrapper}", item[wrapper])
        except ijson.JSONError as error:
            raise IngestError(
                member.name, f"after $.{list_key}[{index}]", f"invalid JSON: {error}"
            ) from None
        except TooDeep as error:
            raise IngestError(member.name, f"after $.{list_key}[{index}]", error.reason) from None


def _find_list_key(member: Member) -> str:
    with member.open() as stream:
        try:
            for prefix, event, value in ijson.parse(DepthLimitedReader(stream, member.name)):
                if prefix == "" and event == "map_key":
                    if value in LIST_KEYS:
                        return str(value)
                    if value == "CVE_Items":
                        raise IngestError(
                            member.name,
                            "$.CVE_Items",
                            "NVD 1.1 feeds were retired in 2023; expected an NVD 2.0 feed or API response",
                        )
        except ijson.JSONError as error:
            raise IngestError(member.name, "$", f"invalid JSON: {error}") from None
        except TooDeep as error:
            raise IngestError(member.name, "$", error.reason) from None
    raise IngestError(
        member.name,
        "$",
        "expected an NVD 2.0 response with vulnerabilities, products, matchStrings, "
        "cveChanges or sources",
    )
