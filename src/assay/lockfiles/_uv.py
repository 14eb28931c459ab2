"""uv.lock (version 1): registry packages with their sdist and wheel hashes."""

from __future__ import annotations

from typing import Any

from assay.lockfiles import _toml
from assay.lockfiles._digests import parse_pip_hash
from assay.lockfiles._model import LockedFile, LockedPackage, LockFile, LockfileError, SkippedEntry
from assay.lockfiles._purl import pypi_package

_NOT_A_RELEASE = {
    "editable": "an editable local project",
    "virtual": "the project itself (virtual)",
    "directory": "a local directory",
    "path": "a local path",
    "git": "a git checkout",
    "url": "a direct URL",
}


def read_uv(text: str, filename: str) -> LockFile:
    data = _toml.load(text, filename)
    version = data.get("version")
    if version != 1:
        raise LockfileError(filename, "version", f"expected uv.lock version 1, found {version!r}")
    positions = _toml.Positions(text)
    packages: list[LockedPackage] = []
    skipped: list[SkippedEntry] = []
    for index, entry in enumerate(_toml.packages(data, filename)):
        position = positions.of(index)
        name = _toml.text_field(entry, "name", filename, position)
        source = entry.get("source", {})
        if not isinstance(source, dict) or len(source) != 1:
            raise LockfileError(
                filename, positions.of(index, "source"), "expected a table with one source kind"
            )
        ((kind, where),) = source.items()
        if kind != "registry":
            reason = _NOT_A_RELEASE.get(kind, f"a {kind} source")
            pinned = entry.get("version")
            text_pinned = f"{name} {pinned}" if isinstance(pinned, str) else name
            skipped.append(SkippedEntry(position, text_pinned, f"{reason} ({where})"))
            continue
        pinned = _toml.text_field(entry, "version", filename, position)
        files = _files(entry, filename, index, positions)
        packages.append(pypi_package(name, pinned, files, position, index_url=where))
    return LockFile(filename, "uv", tuple(packages), tuple(skipped))


def _files(
    entry: dict[str, Any], filename: str, index: int, positions: _toml.Positions
) -> tuple[LockedFile, ...]:
    items: list[tuple[str, Any]] = []
    if "sdist" in entry:
        items.append(("sdist", entry["sdist"]))
    wheels = entry.get("wheels", [])
    if not isinstance(wheels, list):
        raise LockfileError(filename, positions.of(index, "wheels"), "expected an array")
    items.extend((f"wheels[{n}]", wheel) for n, wheel in enumerate(wheels))
    files = (_file(item, filename, positions, index, key) for key, item in items)
    return tuple(file for file in files if file is not None)


def _file(
    item: Any, filename: str, positions: _toml.Positions, index: int, key: str
) -> LockedFile | None:
    """An sdist or wheel table (`key` in the package's entry); None when it records no
    hash."""
    if not isinstance(item, dict):
        raise LockfileError(
            filename, positions.of(index, key), "expected a table with url and hash"
        )
    raw_hash = item.get("hash")
    if raw_hash is None:
        return None  # a file without a recorded hash (a local sdist): nothing to pin
    if not isinstance(raw_hash, str):
        raise LockfileError(
            filename, positions.of(index, f"{key}.hash"), "expected a string ALGORITHM:HEX"
        )
    try:
        algorithm, value = parse_pip_hash(raw_hash)
    except ValueError as error:
        raise LockfileError(filename, positions.of(index, f"{key}.hash"), str(error)) from None
    url = item.get("url") if isinstance(item.get("url"), str) else None
    name = url.rsplit("/", 1)[-1].split("#", 1)[0] if url else None
    return LockedFile(digests={algorithm: value}, name=name, url=url)
