"""Lock files: what a project pins, read into one typed list of packages.

    >>> from assay.lockfiles import read_lockfile
    >>> lock = read_lockfile(b"requests==2.32.3 --hash=sha256:70761c...", "requirements.txt")
    >>> [(p.name, p.version, p.purl) for p in lock.packages]

`read_lockfile(data, filename) -> LockFile` reads pinned `requirements.txt` and
`pip freeze` output (with `--hash` digests), `poetry.lock`, `uv.lock` and
`package-lock.json` / `npm-shrinkwrap.json` (lockfileVersion 2 and 3). The format comes
from the file name and, for other names, from the content. Every `LockedPackage` has
`name`, `version`, `purl`, `digests` (lowercase hex per algorithm, when the lock file
names exactly one file), `ecosystem` (the purl type), `files` (every distribution file
listed, with its digests), `location` and `dev`. Entries that pin no registry release
(editable installs, the project itself, git sources, links) are in `LockFile.skipped`.

Errors are `LockfileError` (an `assay.errors.InputError`) naming the file and the line
or JSON path. Pure: bytes in, a result out; no file or network access.
"""

from __future__ import annotations

import os
import re
from typing import Final

from assay.lockfiles._model import (
    FORMATS,
    MAX_JSON_DEPTH,
    MAX_LOCKFILE_BYTES,
    MAX_PACKAGES,
    LockedFile,
    LockedPackage,
    LockFile,
    LockfileError,
    SkippedEntry,
    UnpinnedRequirement,
)

__all__ = [
    "FORMATS",
    "MAX_JSON_DEPTH",
    "MAX_LOCKFILE_BYTES",
    "MAX_PACKAGES",
    "LockFile",
    "LockedFile",
    "LockedPackage",
    "LockfileError",
    "SkippedEntry",
    "UnpinnedRequirement",
    "detect_format",
    "read_lockfile",
]

_UV_VERSION = re.compile(r"^version\s*=\s*1\s*$", re.MULTILINE)


_BY_NAME: Final = {
    "poetry.lock": "poetry",
    "uv.lock": "uv",
    "package-lock.json": "package-lock",
    "npm-shrinkwrap.json": "package-lock",
}


def detect_format(text: str, filename: str) -> str:
    """Which of `FORMATS` a file is: by its name, else by its content."""
    base = os.path.basename(filename).lower()
    if base in _BY_NAME:
        return _BY_NAME[base]
    if base.endswith(".json"):
        return "package-lock"
    return _by_content(text)


def _by_content(text: str) -> str:
    """A JSON object is a package-lock; `[[package]]` tables are poetry's (with its
    `lock-version` or `content-hash`) or uv's (`version = 1`); the rest requirements."""
    head = text.lstrip()[:4096]
    if head.startswith("{"):
        return "package-lock"
    if "[[package]]" in text[:1_000_000]:
        if "lock-version" in text or "content-hash" in text:
            return "poetry"
        if _UV_VERSION.search(head):
            return "uv"
    return "requirements"


def read_lockfile(data: bytes, filename: str) -> LockFile:
    """Read a lock file's bytes; `filename` names it in errors and chooses the format."""
    if len(data) > MAX_LOCKFILE_BYTES:
        raise LockfileError(
            filename, "", f"expected at most {MAX_LOCKFILE_BYTES} bytes, found {len(data)}"
        )
    text = _decoded(data, filename)
    kind = detect_format(text, filename)
    if kind == "poetry":
        from assay.lockfiles._poetry import read_poetry

        lock = read_poetry(text, filename)
    elif kind == "uv":
        from assay.lockfiles._uv import read_uv

        lock = read_uv(text, filename)
    elif kind == "package-lock":
        from assay.lockfiles._npm import read_package_lock

        lock = read_package_lock(text, filename)
    else:
        from assay.lockfiles._requirements import read_requirements

        lock = read_requirements(text, filename)
    if len(lock.packages) > MAX_PACKAGES:
        raise LockfileError(
            filename, "", f"expected at most {MAX_PACKAGES} packages, found {len(lock.packages)}"
        )
    return lock


def _decoded(data: bytes, filename: str) -> str:
    """The file's UTF-8 text (a byte-order mark dropped); the line of a byte that is not."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise LockfileError(
            filename, f"line {line}", f"expected UTF-8 text, found byte 0x{data[error.start]:02x}"
        ) from None
