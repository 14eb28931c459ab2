"""poetry.lock (lock-version 1.x with `[metadata.files]`, 2.x with per-package `files`)."""

from __future__ import annotations

from typing import Any

from assay.lockfiles import _toml
from assay.lockfiles._digests import parse_pip_hash
from assay.lockfiles._model import LockedFile, LockedPackage, LockFile, LockfileError, SkippedEntry
from assay.lockfiles._purl import pypi_package

# Sources that are not a package index: the version pins no registry release.
_NOT_A_RELEASE = {
    "git": "a git checkout",
    "directory": "a local directory",
    "file": "a local file",
    "url": "a direct URL",
}


def read_poetry(text: str, filename: str) -> LockFile:
    data = _toml.load(text, filename)
    legacy_files = _legacy_files(data, filename)
    positions = _toml.Positions(text)
    packages: list[LockedPackage] = []
    skipped: list[SkippedEntry] = []
    for index, entry in enumerate(_toml.packages(data, filename)):
        position = positions.of(index)
        name = _toml.text_field(entry, "name", filename, position)
        version = _toml.text_field(entry, "version", filename, position)
        source = entry.get("source", {})
        if not isinstance(source, dict):
            raise LockfileError(filename, positions.of(index, "source"), "expected a table")
        kind = source.get("type")
        if kind in _NOT_A_RELEASE:
            skipped.append(SkippedEntry(position, f"{name} {version}", _not_a_release(source)))
            continue
        raw_files = entry.get("files")
        if raw_files is None:
            raw_files = legacy_files.get(name, [])
        files = _files(raw_files, filename, positions, index)
        packages.append(
            pypi_package(
                name,
                version,
                files,
                position,
                index_url=source.get("url") if kind == "legacy" else None,
                dev=entry.get("category") == "dev",
            )
        )
    return LockFile(filename, "poetry", tuple(packages), tuple(skipped))


def _legacy_files(data: dict[str, Any], filename: str) -> dict[str, Any]:
    """Lock-version 1.x's `[metadata.files]`: each package's file list, by name."""
    metadata = data.get("metadata", {})
    if not isinstance(metadata, dict):
        raise LockfileError(filename, "metadata", "expected a [metadata] table")
    legacy_files = metadata.get("files", {})
    if not isinstance(legacy_files, dict):
        raise LockfileError(filename, "metadata.files", "expected a table of file lists")
    return legacy_files


def _not_a_release(source: dict[str, Any]) -> str:
    """Why a package from a git, directory, file or URL source is skipped, and where."""
    where = source.get("url", "")
    reference = source.get("resolved_reference") or source.get("reference")
    detail = f"{where}@{reference}" if reference else str(where)
    return f"{_NOT_A_RELEASE[source['type']]} ({detail})"


def _files(
    raw: Any, filename: str, positions: _toml.Positions, index: int
) -> tuple[LockedFile, ...]:
    if not isinstance(raw, list):
        raise LockfileError(
            filename, positions.of(index, "files"), "expected an array of {file, hash} tables"
        )
    files: list[LockedFile] = []
    for number, item in enumerate(raw):
        if not isinstance(item, dict) or not isinstance(item.get("hash"), str):
            raise LockfileError(
                filename,
                positions.of(index, f"files[{number}]"),
                "expected a table with a hash string",
            )
        try:
            algorithm, value = parse_pip_hash(item["hash"])
        except ValueError as error:
            raise LockfileError(
                filename, positions.of(index, f"files[{number}].hash"), str(error)
            ) from None
        name = item.get("file")
        files.append(
            LockedFile(digests={algorithm: value}, name=name if isinstance(name, str) else None)
        )
    return tuple(files)
