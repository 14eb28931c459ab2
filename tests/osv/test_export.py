"""`assay osv export`: the store's records as osv.dev's bucket layout (read back by
`assay osv sync` from a loopback static server) and as Renovate's osv-offline files."""

from __future__ import annotations

import functools
import json
import threading
import zipfile
from collections.abc import Callable, Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from tests.osv.conftest import osv_sample_paths

from assay.nvd.storage import open_store
from assay.osv.record import timestamp_key


@pytest.fixture
def loaded(store_url: str, cli: Callable[..., int]) -> str:
    assert cli("osv", "import", "--store", store_url, "--json", *map(str, osv_sample_paths())) == 0
    return store_url


def _serve(folder: Path) -> Iterator[str]:
    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=folder))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_a_bucket_export_mirrors_into_another_store(
    loaded: str, cli: Callable[..., int], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "bucket"
    capsys.readouterr()
    assert cli("osv", "export", "--store", loaded, "--json", str(out)) == 0
    written = json.loads(capsys.readouterr().out)["records"]
    assert set(written) >= {"PyPI", "Go", "crates.io", "Maven"}
    with zipfile.ZipFile(out / "PyPI" / "all.zip") as archive:
        assert len(archive.namelist()) == written["PyPI"]
    lines = (out / "PyPI" / "modified_id.csv").read_text().splitlines()
    assert len(lines) == written["PyPI"]
    keys = [timestamp_key(line.split(",")[0]) for line in lines]
    assert keys == sorted(keys, reverse=True)  # newest first, as osv.dev lists them
    mirror = f"sqlite:///{tmp_path / 'mirror.db'}"
    for upstream in _serve(out):
        assert cli("osv", "sync", "--store", mirror, "--upstream", upstream,
                   "--ecosystem", *written, "--json") == 0  # fmt: skip
    source, copy = open_store(loaded), open_store(mirror)
    try:
        assert copy.count_osv() == source.count_osv()
        for raw in source.iter_osv():
            osv_id = json.loads(raw)["id"]
            assert copy.osv_by_id(osv_id) == raw, osv_id
    finally:
        source.close()
        copy.close()


def test_a_renovate_export_is_a_record_per_line(
    loaded: str, cli: Callable[..., int], tmp_path: Path
) -> None:
    out = tmp_path / "osv-offline"
    assert cli("osv", "export", "--store", loaded, "--layout", "renovate",
               "--ecosystem", "PyPI", "crates.io", "--", str(out)) == 0  # fmt: skip
    assert sorted(p.name for p in out.iterdir()) == ["crates.io.nedb", "pypi.nedb"]
    records = [json.loads(line) for line in (out / "pypi.nedb").read_text().splitlines()]
    store = open_store(loaded)
    try:
        expected = sorted(json.loads(raw)["id"] for raw in store.iter_osv("PyPI"))
    finally:
        store.close()
    assert sorted(r["id"] for r in records) == expected
    assert all(any(a["package"]["ecosystem"] == "PyPI" for a in r["affected"]) for r in records)
