"""Resolved dependencies: the source checkout, lock-file pins and ones named by hand (pure)."""

from __future__ import annotations

import hashlib
import re

from assay.attestation import ResourceDescriptor
from assay.errors import InputError
from assay.lockfiles import LockedPackage, LockFile, LockfileError
from assay.provenance.source import SourceRevision

# Digest algorithms accepted on the command line, with their hex lengths.
_HEX_LENGTHS = {
    "sha256": (64,),
    "sha384": (96,),
    "sha512": (128,),
    "sha1": (40,),
    "gitCommit": (40, 64),
}
_DIGEST = re.compile(r"^[A-Za-z][A-Za-z0-9_]*:[0-9a-fA-F]+$")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def source_dependency(source: SourceRevision) -> ResourceDescriptor:
    """The checkout as SLSA records it: `git+https://host/o/r@ref` with a `gitCommit` digest."""
    return ResourceDescriptor(uri=source.uri, digest={"gitCommit": source.commit})


def _checked_digest(part: str, text: str, where: str) -> tuple[str, str]:
    """`ALG:HEX` as (algorithm, lower-case hex), of a known algorithm and its length."""
    algorithm, _, value = part.partition(":")
    lengths = _HEX_LENGTHS.get(algorithm)
    if lengths is None:
        raise InputError(
            where,
            f"expected a digest algorithm among {', '.join(_HEX_LENGTHS)}, "
            f"found {algorithm!r} in {text!r}",
        )
    if len(value) not in lengths:
        raise InputError(
            where,
            f"expected {' or '.join(map(str, lengths))} hex characters for {algorithm}, "
            f"found {len(value)} in {text!r}",
        )
    return algorithm, value.lower()


def _uri_and_digests(text: str, where: str) -> tuple[str, dict[str, str]]:
    """The URI and the digests after its last `@`; the whole text when no digests follow."""
    uri, at, tail = text.rpartition("@")
    parts = tail.split(",")
    if at and tail and all(_DIGEST.fullmatch(part) for part in parts):
        return uri, dict(_checked_digest(part, text, where) for part in parts)
    return text, {}


def parse_dependency(text: str, *, where: str = "--dependency") -> ResourceDescriptor:
    """`URI`, or `URI@ALG:HEX[,ALG:HEX...]` (the digest follows the last `@`)."""
    uri, digests = _uri_and_digests(text, where)
    if not _SCHEME.match(uri):
        raise InputError(where, f"expected URI[@ALG:HEX] with a URI scheme, found {text!r}")
    return ResourceDescriptor(uri=uri, digest=digests or None)


def lockfile_dependencies(lock: LockFile, data: bytes) -> list[ResourceDescriptor]:
    """The lock file itself (by SHA-256), then each pinned package as a purl.

    A package gets a `digest` when the lock file names one artifact for it (npm's
    `integrity`, a single `--hash`). When it lists one per distribution file (wheels and
    sdists) which one was installed is not recorded, so the descriptor carries no digest
    and lists the candidates in `annotations.distributions`; the lock file's own digest
    binds them all.
    """
    for unpinned in lock.unpinned:
        # A provenance records what was resolved: a range is not a dependency it can name.
        raise LockfileError(
            lock.filename,
            unpinned.location,
            f"expected a pinned requirement (name==version), found {unpinned.name!r} "
            f"with {unpinned.specifier or 'no version'}",
        )
    result = [
        ResourceDescriptor(name=lock.filename, digest={"sha256": hashlib.sha256(data).hexdigest()})
    ]
    return result + [_package(package) for package in lock.packages]


def _package(package: LockedPackage) -> ResourceDescriptor:
    """A pinned package: with its digest, or with the candidate distribution files."""
    if package.digests or not package.files:
        return ResourceDescriptor(uri=package.purl, digest=package.digests or None)
    distributions = [
        {**({"name": file.name} if file.name else {}), "digest": dict(file.digests)}
        for file in package.files
    ]
    return ResourceDescriptor(uri=package.purl, annotations={"distributions": distributions})
