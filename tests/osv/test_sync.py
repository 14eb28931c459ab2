"""`assay osv sync` against a real loopback HTTP server serving osv.dev's bucket layout,
built from the real PyPA records of the sample (as JSON, as osv.dev serves them)."""

from __future__ import annotations

import io
import json
import threading
import zipfile
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import orjson
import pytest
from tests.osv.conftest import OSV_ASSETS

from assay.nvd.storage import open_store
from assay.osv.record import OsvRecord, read_record
from assay.osv.sync import checkpoint_key


class Bucket:
    """Files by path, the requests seen, and paths that answer 500."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.requests: list[str] = []
        self.failing: set[str] = set()


@pytest.fixture
def bucket() -> Iterator[tuple[Bucket, str]]:
    state = Bucket()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            state.requests.append(self.path)
            body = state.files.get(self.path)
            status = 500 if self.path in state.failing else 200 if body is not None else 404
            self.send_response(status)
            payload = body if status == 200 and body is not None else b"no"
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _records() -> list[OsvRecord]:
    paths = sorted((OSV_ASSETS / "pypa" / "vulns").rglob("*.yaml"))
    records = [read_record(path.read_bytes(), str(path)) for path in paths]
    return sorted(records, key=lambda r: r.modified_key)


def _publish(state: Bucket, in_zip: list[OsvRecord], every: list[OsvRecord]) -> None:
    """all.zip with `in_zip`; modified_id.csv and one file per record for `every`."""
    state.files.clear()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as out:
        for record in in_zip:
            out.writestr(f"{record.id}.json", record.raw)
    state.files["/PyPI/all.zip"] = buffer.getvalue()
    newest_first = sorted(every, key=lambda r: r.modified_key, reverse=True)
    state.files["/PyPI/modified_id.csv"] = "".join(
        f"{r.modified},{r.id}\n" for r in newest_first
    ).encode()
    for record in every:
        state.files[f"/PyPI/{record.id}.json"] = record.raw


def _edited(record: OsvRecord, **changes: object) -> OsvRecord:
    document = orjson.loads(record.raw)
    document.update(changes)
    return read_record(orjson.dumps(document), f"{record.id}.json")


def _run(cli: Callable[..., int], store: str, upstream: str, *extra: str) -> int:
    return cli(
        "osv", "sync", "--store", store, "--ecosystem", "PyPI", "--upstream", upstream, *extra
    )


def test_first_the_archive_then_only_what_changed(
    bucket: tuple[Bucket, str],
    store_url: str,
    cli: Callable[..., int],
    capsys: pytest.CaptureFixture[str],
) -> None:
    state, upstream = bucket
    records = _records()
    _publish(state, records[:-2], records)  # two records are newer than the archive
    assert _run(cli, store_url, upstream, "--json") == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["ok"] is True
    assert summary["ecosystems"]["PyPI"]["records"]["added"] == len(records)
    assert "/PyPI/all.zip" in state.requests
    fetched = [p for p in state.requests if p.endswith(".json")]
    assert f"/PyPI/{records[-1].id}.json" in fetched
    assert f"/PyPI/{records[0].id}.json" not in fetched  # (in the archive, older)
    store = open_store(store_url)
    try:
        assert store.count_osv() == len(records)
        checkpoint = json.loads(store.get_meta(checkpoint_key("PyPI")) or "{}")
        assert checkpoint["phase"] == "incremental"
        assert checkpoint["since"] == records[-1].modified_key
        generation = store.generation()
    finally:
        store.close()

    # One record changes upstream: the next run fetches it alone, never the archive.
    changed = _edited(records[3], modified="2030-01-01T00:00:00Z", aliases=["CVE-2030-0001"])
    _publish(state, records[:-2], [*records[:3], changed, *records[4:]])
    state.requests.clear()
    assert _run(cli, store_url, upstream, "--json") == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["ecosystems"]["PyPI"]["records"]["updated"] == 1
    assert "/PyPI/all.zip" not in state.requests
    assert [p for p in state.requests if p.endswith(".json")] == [
        f"/PyPI/{records[-1].id}.json",  # (at the checkpoint time itself: seen unchanged)
        f"/PyPI/{changed.id}.json",
    ]
    store = open_store(store_url)
    try:
        assert store.osv_by_id(changed.id) == changed.raw
        assert store.generation() > generation
        assert [json.loads(r)["id"] for r in store.osv_by_alias("CVE-2030-0001")] == [changed.id]
    finally:
        store.close()


def test_a_stopped_run_resumes_after_its_last_batch(
    bucket: tuple[Bucket, str], tmp_path: Path
) -> None:
    from assay.errors import ClientError
    from assay.osv.sync import OsvSync

    state, upstream = bucket
    records = _records()
    _publish(state, records[:5], records)
    state.failing.add(f"/PyPI/{records[8].id}.json")
    store = open_store(f"sqlite:///{tmp_path / 'store.db'}")
    try:
        syncer = OsvSync(store, upstream=upstream, batch=2)
        with pytest.raises(ClientError, match="HTTP 500"):
            syncer.sync("PyPI")
        checkpoint = json.loads(store.get_meta(checkpoint_key("PyPI")) or "{}")
        assert checkpoint["since"] == records[7].modified_key  # batches up to the failure
        assert store.count_osv() == 8
        state.failing.clear()
        state.requests.clear()
        report = syncer.sync("PyPI")
        syncer.close()
        assert report.ok
        assert store.count_osv() == len(records)
        fetched = [p for p in state.requests if p.endswith(".json")]
        assert fetched[0] == f"/PyPI/{records[7].id}.json"
        assert "/PyPI/all.zip" not in state.requests
    finally:
        store.close()


def test_a_broken_record_upstream_is_rejected_by_name(
    bucket: tuple[Bucket, str],
    tmp_path: Path,
    cli: Callable[..., int],
    capsys: pytest.CaptureFixture[str],
) -> None:
    state, upstream = bucket
    records = _records()
    _publish(state, records[:-1], records)
    state.files[f"/PyPI/{records[-1].id}.json"] = b'{"id": 1}'
    store = f"sqlite:///{tmp_path / 'store.db'}"
    assert _run(cli, store, upstream, "--json") == 1
    summary = json.loads(capsys.readouterr().out)
    assert summary["ecosystems"]["PyPI"]["problems"] == [
        f"PyPI/{records[-1].id}.json at $.id: expected `str`, got `int`"
    ]


def test_an_upstream_that_cannot_be_used_exits_2(
    bucket: tuple[Bucket, str],
    tmp_path: Path,
    cli: Callable[..., int],
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, upstream = bucket  # (serves nothing: all.zip is a 404)
    store = f"sqlite:///{tmp_path / 'store.db'}"
    assert _run(cli, store, upstream) == 2
    assert "PyPI/all.zip: HTTP 404" in capsys.readouterr().err
    assert _run(cli, store, upstream, "--json") == 2
    document = json.loads(capsys.readouterr().out)
    assert document["ok"] is False
    assert document["error"].endswith("/PyPI/all.zip: HTTP 404")
    assert _run(cli, store, "ftp://example") == 2
