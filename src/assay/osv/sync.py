"""Mirror osv.dev's bucket layout into a store, per ecosystem, resumably.

    report = OsvSync(store, upstream=DEFAULT_UPSTREAM).sync("PyPI")

The layout (https://osv-vulnerabilities.storage.googleapis.com, and any copy of it):

    {upstream}/{ECOSYSTEM}/all.zip           every record of the ecosystem
    {upstream}/{ECOSYSTEM}/modified_id.csv   `modified,id` per record, newest first
    {upstream}/{ECOSYSTEM}/{ID}.json         one record

The first run of an ecosystem imports `all.zip`, then records its checkpoint: the latest
`modified` of the records read (store meta `sync.osv.<ECOSYSTEM>`, JSON
`{"phase": "incremental", "since": ...}`). Every run then reads `modified_id.csv` and
fetches the records modified at or after the checkpoint, oldest first; each batch is
stored with the checkpoint of its last record in the same transaction, so a run stopped
at any moment resumes where it stopped (records at exactly the checkpoint time are
fetched again and found unchanged). A run that dies during `all.zip` starts it again.

Limits: `MAX_ARCHIVE_BYTES` per archive, `MAX_INDEX_BYTES` for `modified_id.csv`,
`assay.osv.record.MAX_RECORD_BYTES` per record.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final
from urllib.parse import quote

from assay._bounded import copy_bounded
from assay.errors import ClientError, InputError
from assay.osv.importer import ImportReport, OsvImporter
from assay.osv.record import MAX_RECORD_BYTES, timestamp_key

if TYPE_CHECKING:
    import httpx

    from assay.nvd.storage.interface import Store

__all__ = ["DEFAULT_UPSTREAM", "OsvSync", "checkpoint_key"]

DEFAULT_UPSTREAM: Final = "https://osv-vulnerabilities.storage.googleapis.com"
MAX_ARCHIVE_BYTES: Final = 4 * 2**30
MAX_INDEX_BYTES: Final = 512 * 2**20
BATCH: Final = 500


def checkpoint_key(ecosystem: str) -> str:
    return f"sync.osv.{ecosystem}"


@dataclass(frozen=True, slots=True)
class _Change:
    key: str
    """`modified` as `timestamp_key` writes it."""
    modified: str
    osv_id: str


class OsvSync:
    def __init__(
        self,
        store: Store,
        *,
        upstream: str = DEFAULT_UPSTREAM,
        client: httpx.Client | None = None,
        timeout: float = 60.0,
        on_problem: Callable[[str], None] | None = None,
        on_step: Callable[[str, int, int], None] | None = None,
        batch: int = BATCH,
    ) -> None:
        if not upstream.startswith(("http://", "https://")):
            raise InputError("upstream", f"expected an http(s) URL, found {upstream!r}")
        import httpx

        self.store = store
        self.upstream = upstream.rstrip("/")
        self._client = client or httpx.Client(timeout=timeout, follow_redirects=True)
        self._on_problem = on_problem
        self._on_step = on_step
        self._batch = batch

    def close(self) -> None:
        self._client.close()

    def sync(self, ecosystem: str) -> ImportReport:
        """Bring the store's records of `ecosystem` up to date with the upstream."""
        importer = OsvImporter(self.store, batch_size=self._batch, on_problem=self._on_problem)
        since = self._checkpoint(ecosystem)
        if since is None:
            since = self._baseline(ecosystem, importer)
        self._changes(ecosystem, since, importer)
        return importer.report

    def _checkpoint(self, ecosystem: str) -> str | None:
        text = self.store.get_meta(checkpoint_key(ecosystem))
        if not text:
            return None
        try:
            value = json.loads(text)
        except ValueError:
            return None
        since = value.get("since") if isinstance(value, dict) else None
        return since if isinstance(since, str) and value.get("phase") == "incremental" else None

    def _url(self, ecosystem: str, name: str) -> str:
        return f"{self.upstream}/{quote(ecosystem, safe='')}/{quote(name, safe='')}"

    def _baseline(self, ecosystem: str, importer: OsvImporter) -> str:
        url = self._url(ecosystem, "all.zip")
        with tempfile.TemporaryDirectory(prefix="assay-osv-") as folder:
            path = Path(folder) / "all.zip"
            self._download(url, path, MAX_ARCHIVE_BYTES, "archive")
            before = importer.report.records
            importer.import_path(path)
            importer.report.files -= 1  # (a download, not a path named by the user)
            if self._on_step is not None:
                self._on_step(f"{ecosystem}/all.zip", importer.report.records - before, 0)
        since = importer.report.newest_modified or "0001-01-01T00:00:00.000000Z"
        importer.flush(meta={checkpoint_key(ecosystem): _checkpoint_value(since)})
        return since

    def _changes(self, ecosystem: str, since: str, importer: OsvImporter) -> None:
        url = self._url(ecosystem, "modified_id.csv")
        with tempfile.TemporaryDirectory(prefix="assay-osv-") as folder:
            path = Path(folder) / "modified_id.csv"
            self._download(url, path, MAX_INDEX_BYTES, "index")
            changes = _read_index(path, url, timestamp_key(since))
        changes.sort(key=lambda change: change.key)
        for done, change in enumerate(changes, 1):
            data = self._get(self._url(ecosystem, f"{change.osv_id}.json"))
            if data is None:
                importer.report.rejected += 1
                importer.report.problem(
                    f"{self._url(ecosystem, change.osv_id + '.json')}: not found"
                )
            else:
                importer.add(data, f"{ecosystem}/{change.osv_id}.json")
            if self._on_step is not None:
                self._on_step(f"{ecosystem}: modified records", done, len(changes))
            if done % self._batch == 0 or done == len(changes):
                importer.flush(meta={checkpoint_key(ecosystem): _checkpoint_value(change.key)})

    def _download(self, url: str, path: Path, limit: int, what: str) -> None:
        import httpx

        try:
            with self._client.stream("GET", url) as response:
                if response.status_code != 200:
                    raise ClientError(f"GET {url}: HTTP {response.status_code}")
                with path.open("wb") as out:
                    if not copy_bounded(response.iter_bytes(), out, limit):
                        raise ClientError(f"GET {url}: the {what} is larger than {limit} bytes")
        except httpx.HTTPError as error:
            raise ClientError(f"GET {url}: {error}") from error

    def _get(self, url: str) -> bytes | None:
        import httpx

        try:
            with self._client.stream("GET", url) as response:
                if response.status_code == 404:
                    return None
                if response.status_code != 200:
                    raise ClientError(f"GET {url}: HTTP {response.status_code}")
                chunks: list[bytes] = []
                size = 0
                for chunk in response.iter_bytes():
                    chunks.append(chunk)
                    size += len(chunk)
                    if size > MAX_RECORD_BYTES:
                        break  # (the reader refuses it, naming the limit)
                return b"".join(chunks)
        except httpx.HTTPError as error:
            raise ClientError(f"GET {url}: {error}") from error


def _checkpoint_value(since: str) -> str:
    return json.dumps({"phase": "incremental", "since": since})


def _read_index(path: Path, url: str, since: str) -> list[_Change]:
    changes: list[_Change] = []
    with path.open("rb") as stream:
        for number, line in enumerate(stream, 1):
            text = line.decode("utf-8", "replace").strip()
            if not text:
                continue
            change = _index_line(text, f"{url} line {number}")
            if change.key >= since:
                changes.append(change)
    return changes


def _index_line(text: str, where: str) -> _Change:
    """One `modified,ecosystem/id` line of the index."""
    modified, _, name = text.partition(",")
    osv_id = name.rsplit("/", 1)[-1].strip()
    try:
        key = timestamp_key(modified.strip())
    except ValueError as error:
        raise ClientError(f"{where}: {error}") from None
    if not osv_id or "/" in osv_id or osv_id in (".", ".."):
        raise ClientError(f"{where}: expected `modified,id`, found {text[:80]!r}")
    return _Change(key, modified.strip(), osv_id)
