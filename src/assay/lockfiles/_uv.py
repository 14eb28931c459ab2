"""uv.lock (version 1): registry packages with their sdist and wheel hashes."""

from __future__ import annotations

from typing import Any

from packaging.utils import canonicalize_name

from assay.lockfiles import _toml
from assay.lockfiles._digests import parse_pip_hash, single_digests
from assay.lockfiles._model import LockedFile, LockedPackage, LockFile, LockfileError, SkippedEntry
from assay.lockfiles._purl import pypi_purl

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
        packages.append(
            LockedPackage(
                name=canonicalize_name(name),
                version=pinned,
                purl=pypi_purl(name, pinned, index_url=where if isinstance(where, str) else None),
                digests=single_digests([f.digests for f in files]),
                ecosystem="pypi",
                files=files,
                location=position,
            )
        )
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
    files: list[LockedFile] = []
    for key, item in items:
        if not isinstance(item, dict):
            raise LockfileError(
                filename, positions.of(index, key), "expected a table with url and hash"
            )
        raw_hash = item.get("hash")
        if raw_hash is None:
            continue  # a file without a recorded hash (a local sdist): nothing to pin
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
        files.append(LockedFile(digests={algorithm: value}, name=name, url=url))
    return tuple(files)
