"""What was fetched, kept under its digest, so a verification can run again offline.

Layout of a cache directory (`$XDG_CACHE_HOME/assay`, `--cache-dir`, or the `--out` of
`assay fetch`, which `--attestation-dir` reads):

    blobs/sha256/HEX          every fetched document, named by the SHA-256 of its bytes
    refs/sha256/HEX.json      one answer that is not addressed by digest (a tag, a
                              referrers list, an npm or PyPI or GitHub API answer):
                              {"key": ..., "digest": ..., "mediaType": ...}, named by
                              the SHA-256 of its key

A document read back is checked against its digest, so a cache that was altered gives
an error, never a different verdict.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import platformdirs

from assay._bounded import read_if_present
from assay.errors import InputError
from assay.registry.client import MAX_BLOB_BYTES, Manifest, _manifest, sha256_digest
from assay.registry.reference import DIGEST, Reference

MAX_REF_BYTES: Final = 64 * 1024
ABSENT: Final = "absent"
"""The media type recorded for a tag the registry answered 404 for."""


def default_cache_dir() -> Path:
    return Path(platformdirs.user_cache_dir("assay"))


@dataclass(frozen=True, slots=True)
class Cache:
    root: Path

    def _blob(self, digest: str) -> Path:
        if not DIGEST.match(digest):
            raise InputError(str(self.root), f"expected a sha256 digest, got {digest!r}")
        return self.root / "blobs" / "sha256" / digest.split(":", 1)[1]

    def _ref(self, key: str) -> Path:
        name = hashlib.sha256(key.encode()).hexdigest()
        return self.root / "refs" / "sha256" / f"{name}.json"

    def put(self, data: bytes) -> str:
        digest = sha256_digest(data)
        path = self._blob(digest)
        if not path.exists():
            _write(path, data)
        return digest

    def get(self, digest: str, limit: int = MAX_BLOB_BYTES) -> bytes | None:
        path = self._blob(digest)
        data = read_if_present(path, limit)
        if data is None:
            return None
        if sha256_digest(data) != digest:
            raise InputError(str(path), f"the cached content does not have the digest {digest}")
        return data

    def put_ref(self, key: str, data: bytes, media_type: str = "", next_url: str = "") -> str:
        digest = self.put(data)
        record = {"key": key, "digest": digest, "mediaType": media_type, "next": next_url}
        _write(self._ref(key), json.dumps(record).encode())
        return digest

    def get_ref(self, key: str) -> tuple[bytes, str] | None:
        """(bytes, media type) of the answer kept for `key`, or None."""
        found = self.get_ref_record(key)
        return None if found is None else (found[0], found[1])

    def get_ref_record(self, key: str) -> tuple[bytes, str, str] | None:
        """(bytes, media type, next page URL) of the answer kept for `key`, or None."""
        path = self._ref(key)
        raw = _read_ref(path)
        if raw is None:
            return None
        stored_key, digest, media_type, next_url = _ref_record(raw, path)
        if stored_key != key:
            raise InputError(str(path), f"expected the answer for {key!r}")
        data = self.get(digest)
        if data is None:
            raise InputError(str(path), f"the cache lacks the document {digest}")
        return data, str(media_type), next_url


def _read_ref(path: Path) -> bytes | None:
    """A kept answer's record (at most MAX_REF_BYTES and one), None when there is none."""
    try:
        return path.read_bytes()[: MAX_REF_BYTES + 1]
    except FileNotFoundError:
        return None
    except OSError as error:
        raise InputError(str(path), f"cannot read: {error.strerror}") from None


def _ref_record(raw: bytes, path: Path) -> tuple[Any, Any, Any, str]:
    """(key, digest, media type, next page URL) of a kept answer's record."""
    try:
        record = json.loads(raw)
        digest, media_type = record["digest"], record.get("mediaType", "")
        return record["key"], digest, media_type, str(record.get("next") or "")
    except (ValueError, KeyError, TypeError):
        raise InputError(str(path), 'expected {"key", "digest", "mediaType"}') from None


def _write(path: Path, data: bytes) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
        partial.write_bytes(data)
        partial.replace(path)
    except OSError as error:
        raise InputError(str(path.parent), f"cannot write: {error.strerror}") from None


class CachingClient:
    """A registry client that keeps what it fetches in a cache (used online)."""

    def __init__(self, inner: Any, cache: Cache) -> None:
        self.inner = inner
        self.cache = cache

    def manifest(self, ref: Reference, reference: str | None = None) -> Manifest:
        manifest: Manifest = self.inner.manifest(ref, reference)
        wanted = reference or ref.reference
        self.cache.put(manifest.data)
        if not DIGEST.match(wanted):
            self.cache.put_ref(_manifest_key(ref, wanted), manifest.data, manifest.media_type)
        return manifest

    def find_manifest(self, ref: Reference, reference: str) -> Manifest | None:
        found: Manifest | None = self.inner.find_manifest(ref, reference)
        key = _manifest_key(ref, reference)
        if found is None:
            self.cache.put_ref(key, b"", ABSENT)
        else:
            self.cache.put(found.data)
            self.cache.put_ref(key, found.data, found.media_type)
        return found

    def blob(self, ref: Reference, digest: str, limit: int = MAX_BLOB_BYTES) -> bytes:
        data: bytes = self.inner.blob(ref, digest, limit)
        self.cache.put(data)
        return data

    def referrers(
        self, ref: Reference, digest: str, artifact_type: str | None = None
    ) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = self.inner.referrers(ref, digest, artifact_type)
        body = json.dumps({"manifests": found}, sort_keys=True).encode()
        self.cache.put_ref(_referrers_key(ref, digest, artifact_type), body, "referrers")
        return found


class OfflineClient:
    """Answers from a cache only: `--offline`, `--attestation-dir`."""

    def __init__(self, cache: Cache) -> None:
        self.cache = cache

    def _missing(self, what: str) -> InputError:
        return InputError(
            str(self.cache.root),
            f"offline: {what} is not in the cache (fetch it first: `assay fetch`, or run online)",
        )

    def manifest(self, ref: Reference, reference: str | None = None) -> Manifest:
        wanted = reference or ref.reference
        if DIGEST.match(wanted):
            data = self.cache.get(wanted)
            media_type = ""
        else:
            found = self.cache.get_ref(_manifest_key(ref, wanted))
            if found is None or found[1] == ABSENT:
                raise self._missing(f"the manifest {ref.with_tag(wanted)}")
            data, media_type = found
        if data is None:
            raise self._missing(f"the manifest {ref.with_digest(wanted)}")
        return _manifest(data, f"{self.cache.root} ({wanted})", media_type)

    def find_manifest(self, ref: Reference, reference: str) -> Manifest | None:
        found = self.cache.get_ref(_manifest_key(ref, reference))
        if found is None:
            raise self._missing(f"whether {ref.with_tag(reference)} exists")
        if found[1] == ABSENT:
            return None
        return _manifest(found[0], f"{self.cache.root} ({reference})", found[1])

    def blob(self, ref: Reference, digest: str, limit: int = MAX_BLOB_BYTES) -> bytes:
        data = self.cache.get(digest, limit)
        if data is None:
            raise self._missing(f"the blob {digest} of {ref.registry}/{ref.repository}")
        return data

    def referrers(
        self, ref: Reference, digest: str, artifact_type: str | None = None
    ) -> list[dict[str, Any]]:
        found = self.cache.get_ref(_referrers_key(ref, digest, artifact_type))
        if found is None:
            raise self._missing(f"the referrers of {ref.with_digest(digest)}")
        try:
            manifests = json.loads(found[0])["manifests"]
        except (ValueError, KeyError, TypeError):
            raise InputError(str(self.cache.root), "expected a cached referrers list") from None
        return [m for m in manifests if isinstance(m, dict)]


def _manifest_key(ref: Reference, reference: str) -> str:
    return f"manifest {ref.registry}/{ref.repository}:{reference}"


def _referrers_key(ref: Reference, digest: str, artifact_type: str | None) -> str:
    return f"referrers {ref.registry}/{ref.repository}@{digest} {artifact_type or ''}"
