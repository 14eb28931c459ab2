"""package-lock.json and npm-shrinkwrap.json, lockfileVersion 2 and 3 (npm 7 and newer)."""

from __future__ import annotations

from typing import Any

from assay.lockfiles._digests import parse_sri
from assay.lockfiles._json import load_object, member, type_name
from assay.lockfiles._model import LockedFile, LockedPackage, LockFile, LockfileError, SkippedEntry
from assay.lockfiles._purl import npm_purl

_MODULES = "node_modules/"
# `resolved` schemes that are not a registry tarball: the version pins no release.
_NOT_A_RELEASE = ("git+", "git:", "github:", "file:", "link:")


def read_package_lock(text: str, filename: str) -> LockFile:
    data = load_object(text, filename)
    version = data.get("lockfileVersion")
    if version not in (2, 3) or isinstance(version, bool):
        raise LockfileError(
            filename,
            "$.lockfileVersion",
            f"expected 2 or 3 (written by npm 7 or newer), found {version!r}",
        )
    entries = data.get("packages")
    if not isinstance(entries, dict):
        raise LockfileError(
            filename, "$.packages", f"expected an object, found {type_name(entries)}"
        )
    packages: list[LockedPackage] = []
    skipped: list[SkippedEntry] = []
    for key, entry in entries.items():
        path = member("$.packages", key)
        if not isinstance(entry, dict):
            raise LockfileError(filename, path, f"expected an object, found {type_name(entry)}")
        outcome = _entry(key, entry, filename, path)
        if isinstance(outcome, SkippedEntry):
            skipped.append(outcome)
        else:
            packages.append(outcome)
    return LockFile(filename, "package-lock", tuple(packages), tuple(skipped))


def _skipped(key: str, entry: dict[str, Any], path: str) -> SkippedEntry | None:
    """Why an entry is not a package from a registry (the project, a link, a workspace)."""
    if key == "":
        return SkippedEntry(path, str(entry.get("name", "")), "the project itself")
    if entry.get("link") is True:
        return SkippedEntry(path, key, f"a link to {entry.get('resolved')}")
    if _MODULES not in key and not key.startswith("node_modules"):
        return SkippedEntry(path, key, "a workspace package of the project")
    return None


def _text(entry: dict[str, Any], key: str, filename: str, path: str, expected: str) -> str:
    value = entry.get(key)
    if not isinstance(value, str) or not value:
        raise LockfileError(filename, member(path, key), f"{expected}, found {type_name(value)}")
    return value


def _integrity(entry: dict[str, Any], filename: str, path: str) -> dict[str, str]:
    integrity = entry.get("integrity")
    if integrity is None:
        return {}
    if not isinstance(integrity, str):
        raise LockfileError(filename, member(path, "integrity"), "expected an SRI string")
    try:
        return parse_sri(integrity)
    except ValueError as error:
        raise LockfileError(filename, member(path, "integrity"), str(error)) from None


def _name(key: str, entry: dict[str, Any], filename: str, path: str) -> str:
    """The package's name: its own `name`, else the last `node_modules/` part of its key."""
    name = entry.get("name", key.rsplit(_MODULES, 1)[-1])
    if not isinstance(name, str) or not name:
        raise LockfileError(filename, member(path, "name"), "expected a package name")
    return name


def _resolved(entry: dict[str, Any], filename: str, path: str) -> str | None:
    """Where the tarball was fetched from, if the entry says."""
    resolved = entry.get("resolved")
    if not isinstance(resolved, str | None):
        raise LockfileError(filename, member(path, "resolved"), "expected a URL string")
    return resolved


def _entry(
    key: str, entry: dict[str, Any], filename: str, path: str
) -> LockedPackage | SkippedEntry:
    skipped = _skipped(key, entry, path)
    if skipped is not None:
        return skipped
    name = _name(key, entry, filename, path)
    version = _text(entry, "version", filename, path, "expected a version string")
    resolved = _resolved(entry, filename, path)
    if resolved and resolved.startswith(_NOT_A_RELEASE):
        return SkippedEntry(path, f"{name}@{version}", f"not a registry release ({resolved})")
    digests = _integrity(entry, filename, path)
    files = (LockedFile(digests=dict(digests), url=resolved),) if digests else ()
    return LockedPackage(
        name=name,
        version=version,
        purl=npm_purl(name, version, resolved=resolved),
        digests=digests,
        ecosystem="npm",
        files=files,
        location=path,
        dev=entry.get("dev") is True,
    )
