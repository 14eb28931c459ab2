"""Follow a central mirror by its published snapshots instead of its pages: one download
per change set (`assay nvd sync --upstream ... --key PUB`).

The upstream publishes a series (`assay.snapshot.publish`): an assay server at
`/api/snapshots/`, or any static web server (or a folder) holding the series' files. The
follower reads the index, finds the chain that continues the store (the newest full
snapshot for an empty store, then each delta from the generation the store reached),
downloads each file and its signature, checks the signature and the listed digest before
anything is applied, and applies each snapshot all or nothing
(`assay.snapshot.store_io.apply_snapshot`). When no chain continues the store (it was
built from another series, or a delta is missing), nothing is applied and `NoChain` says
why; the caller falls back to pages or refuses.
"""

from __future__ import annotations

import hashlib
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final
from urllib.parse import urljoin

import httpx

from assay.errors import ClientError
from assay.nvd.storage import Store
from assay.snapshot.format import SnapshotError, SnapshotReader
from assay.snapshot.publish import INDEX_NAME, Chain, Published, SnapshotIndex, chain
from assay.snapshot.signing import SignedSnapshot, check_manifest
from assay.snapshot.store_io import (
    SOURCE_GENERATION_KEY,
    SOURCE_KEY,
    ApplyResult,
    apply_snapshot,
)

API_PATH: Final = "/api/snapshots/"
LEGACY_API_SUFFIX: Final = "/rest/json"
MAX_SIGNATURE_BYTES: Final = 1024 * 1024

Verify = Callable[[Path, dict[str, Path]], SignedSnapshot]
"""(snapshot file, its downloaded signatures by kind) -> what the trusted signature says,
or `SnapshotError` (the trust the caller was given: keys or identities)."""


class NoChain(ClientError):
    """The upstream offers no snapshots, or none that continue this store."""


@dataclass(slots=True)
class FollowReport:
    listing: str = ""
    applied: list[ApplyResult] = field(default_factory=list)
    generation: int | None = None
    """The upstream generation the store is at after the run."""

    @property
    def records(self) -> int:
        return sum(result.manifest.records for result in self.applied)


def series_urls(upstream: str) -> list[str]:
    """Where a series may be, for `--upstream`: an assay server's `/api/snapshots/` (its
    API base `.../rest/json` named or not), then the URL itself as a static folder."""
    base = upstream.rstrip("/")
    root = base.removesuffix(LEGACY_API_SUFFIX)
    return [root + API_PATH, base + "/"]


class SnapshotFollower:
    def __init__(self, store: Store, verify: Verify, *, client: httpx.Client) -> None:
        self.store = store
        self.verify = verify
        self.client = client

    def find_series(self, upstream: str) -> tuple[str, SnapshotIndex]:
        """The first of `series_urls` that lists a series, and its index."""
        tried = []
        for base in series_urls(upstream):
            url = urljoin(base, INDEX_NAME)
            answer = self._get(url)
            if answer.status_code == httpx.codes.OK:
                return base, SnapshotIndex.from_bytes(answer.content, url)
            tried.append(f"{url} ({answer.status_code})")
        raise NoChain(f"{upstream}: no snapshots published there (tried {', '.join(tried)})")

    def plan(self, index: SnapshotIndex, where: str) -> Chain:
        source, reached = self._position(where)
        found = chain(index, source=source, reached=reached)
        if not found.complete:
            at = "an empty store" if reached is None else f"generation {reached} of {source}"
            raise NoChain(
                f"{where}: no chain of snapshots leads from {at} to the series' newest "
                f"(generation {found.newest} of {index.store})"
            )
        return found

    def _position(self, where: str) -> tuple[str | None, int | None]:
        """(source store, its generation reached); (None, None) for an empty store."""
        source = self.store.get_meta(SOURCE_KEY)
        reached = self.store.get_meta(SOURCE_GENERATION_KEY)
        if source is not None and reached is not None and reached.isdigit():
            return source, int(reached)
        if source is None and not self.store.generation():
            return None, None
        raise NoChain(
            f"{where}: this store holds data that no snapshot of the series brought "
            "(synced by pages or imported): snapshots apply to an empty store or one "
            "built from them"
        )

    def run(self, upstream: str) -> FollowReport:
        base, index = self.find_series(upstream)
        report = FollowReport(listing=urljoin(base, INDEX_NAME))
        steps = self.plan(index, report.listing)
        for step in steps.steps:
            report.applied.append(self._apply(base, step))
        report.generation = steps.reaches
        return report

    def _apply(self, base: str, step: Published) -> ApplyResult:
        with tempfile.TemporaryDirectory(prefix="assay-follow-") as folder:
            path = Path(folder) / step.name
            self._download(urljoin(base, step.name), path, step)
            signatures = {}
            for kind, name in step.signatures.items():
                signatures[kind] = Path(folder) / name
                answer = self._get(urljoin(base, name))
                if (
                    answer.status_code != httpx.codes.OK
                    or len(answer.content) > MAX_SIGNATURE_BYTES
                ):
                    raise ClientError(f"{urljoin(base, name)}: HTTP {answer.status_code}")
                signatures[kind].write_bytes(answer.content)
            signed = self.verify(path, signatures)
            with path.open("rb") as stream:
                reader = SnapshotReader(stream, str(path))
                check_manifest(signed, reader.manifest, urljoin(base, step.name))
                reader.close()
                stream.seek(0)
                return apply_snapshot(self.store, stream, urljoin(base, step.name))

    def _download(self, url: str, path: Path, step: Published) -> None:
        digest = hashlib.sha256()
        size = 0
        try:
            with self.client.stream("GET", url) as answer, path.open("wb") as out:
                if answer.status_code != httpx.codes.OK:
                    raise ClientError(f"{url}: HTTP {answer.status_code}")
                for chunk in answer.iter_bytes(1 << 20):
                    size += len(chunk)
                    if size > step.bytes:
                        raise SnapshotError(url, f"expected {step.bytes} bytes, found more")
                    digest.update(chunk)
                    out.write(chunk)
        except httpx.HTTPError as error:
            raise ClientError(f"{url}: {type(error).__name__}: {error}") from None
        if size != step.bytes or digest.hexdigest() != step.sha256:
            raise SnapshotError(url, "its size or SHA-256 is not what the index lists")

    def _get(self, url: str) -> httpx.Response:
        try:
            return self.client.get(url)
        except httpx.HTTPError as error:
            raise ClientError(f"{url}: {type(error).__name__}: {error}") from None
