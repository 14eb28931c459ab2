"""What a lock file pins: the typed result every reader returns, its limits and its error."""

from __future__ import annotations

from dataclasses import dataclass, field

from assay.errors import InputError

MAX_LOCKFILE_BYTES = 64 * 1024 * 1024
"""Largest lock file read (a monorepo's package-lock.json runs to tens of MB)."""

MAX_PACKAGES = 200_000
"""Most packages one lock file may pin."""

MAX_JSON_DEPTH = 64
"""Deepest nesting of a JSON lock file (package-lock.json needs 4)."""

MAX_LINE_CHARS = 64 * 1024
"""Longest logical requirements line (continuations joined)."""


class LockfileError(InputError):
    """A lock file cannot be read: names the file and the line or JSON path."""

    def __init__(self, filename: str, position: str, message: str) -> None:
        super().__init__(f"{filename}, {position}" if position else filename, message)
        self.filename = filename
        self.position = position


@dataclass(frozen=True, slots=True)
class LockedFile:
    """One distribution file a lock file lists for a package (a wheel, an sdist, a tarball)."""

    digests: dict[str, str] = field(hash=False)
    """Algorithm to lowercase hex (`{"sha256": "ab12..."}`)."""
    name: str | None = None
    """The file name when the lock file gives it (`Django-4.2-py3-none-any.whl`)."""
    url: str | None = None


@dataclass(frozen=True, slots=True)
class LockedPackage:
    """A dependency pinned to one version.

    `digests` holds the package's digests when the lock file names exactly one per
    algorithm (npm's `integrity`, a requirement with one `--hash`); when it lists one per
    distribution file (poetry, uv, pip-compile with several hashes) the files are in
    `files` and `digests` is empty, since which of them was installed is not recorded.
    """

    name: str
    """Ecosystem-normalised name: PEP 503 for Python, as written for npm (`@scope/name`)."""
    version: str
    purl: str
    digests: dict[str, str] = field(hash=False)
    ecosystem: str
    """The purl type: `pypi` or `npm`."""
    files: tuple[LockedFile, ...] = ()
    location: str = ""
    """Where in the lock file it is pinned (`line 12`, `$.packages["node_modules/x"]`)."""
    dev: bool = False
    """Pinned for development only, where the lock file says so."""


@dataclass(frozen=True, slots=True)
class SkippedEntry:
    """An entry that pins no registry version (an editable install, the project itself, a link)."""

    location: str
    text: str
    """The entry as written (`-e ./src`, `tscommon@0.0.0`)."""
    reason: str

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True, slots=True)
class UnpinnedRequirement:
    """A requirement that names a package but no single version (`django>=4.2`): known to
    be there, but not placeable in any version range, so a scan lists it as unidentified."""

    name: str
    """Ecosystem-normalised name, as in `LockedPackage`."""
    specifier: str
    """The version constraint as written, normalised (`>=4.2`; empty for none)."""
    purl: str
    """The package's purl without a version (`pkg:pypi/django`)."""
    location: str
    ecosystem: str


@dataclass(frozen=True, slots=True)
class LockFile:
    """Every package one lock file pins, in file order."""

    filename: str
    format: str
    """One of `FORMATS`: `requirements`, `poetry`, `uv`, `package-lock`."""
    packages: tuple[LockedPackage, ...]
    skipped: tuple[SkippedEntry, ...] = ()
    """Entries read but not pinned to a registry version, listed so none is lost silently."""
    unpinned: tuple[UnpinnedRequirement, ...] = ()
    """Registry packages named without one version (a requirements line `name>=1`)."""


FORMATS = ("requirements", "poetry", "uv", "package-lock")
