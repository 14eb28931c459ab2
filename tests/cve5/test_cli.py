"""`assay cve|kev|epss import|sync` from the command line, against real stores and a real
loopback HTTP server serving real records."""

from __future__ import annotations

import gzip
import io
import json
import threading
import zipfile
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from assay._cli import main
from assay.cve5.sync import CHECKPOINT, sync_cvelist
from assay.errors import ClientError, StoreError
from assay.nvd.storage import open_store
from assay.nvd.storage._cve5_sql import cve5_store

from .conftest import ASSETS, EPSS_FILE, KEV_FILE, record_paths


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any, str]:
    try:
        code = main([*args, "--json"])
    except SystemExit as stop:
        code = int(stop.code or 0)
    out, err = capsys.readouterr()
    return code, json.loads(out) if out.strip() else None, err


def test_cve_import_of_a_folder_counts_what_it_skips(
    store_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, summary, err = _run(capsys, "cve", "import", "--store", store_url, str(ASSETS))
    assert code == 0, err
    assert summary["records"]["cve5"] == {"added": 90, "updated": 0, "unchanged": 0}
    assert summary["skipped"] == 7  # SOURCES.md, the KEV catalogue, 2 CSV, 3 NVD files
    code, summary, _ = _run(capsys, "cve", "import", "--store", store_url, str(ASSETS))
    assert summary["records"]["cve5"]["unchanged"] == 90


def test_a_rejected_record_exits_1_naming_file_and_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = record_paths()[0]
    broken = json.loads(good.read_bytes())
    broken["containers"]["cna"]["affected"] = {"vendor": "x"}
    (tmp_path / "records").mkdir()
    (tmp_path / "records" / "CVE-broken.json").write_text(json.dumps(broken))
    (tmp_path / "records" / good.name).write_bytes(good.read_bytes())
    store = f"sqlite:///{tmp_path / 's.db'}"
    code, summary, err = _run(capsys, "cve", "import", "--store", store, str(tmp_path / "records"))
    assert code == 1
    assert summary["records"]["cve5"]["added"] == 1
    assert "CVE-broken.json at $.containers.cna.affected: expected an array" in err
    assert "Traceback" not in err
    code, _, err = _run(capsys, "cve", "import", "--store", store, str(tmp_path / "nothing"))
    assert code == 2
    assert "no such file" in err


def _zip(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def _records(paths: list[Path], folder: str) -> dict[str, bytes]:
    return {f"{folder}/{p.name}": p.read_bytes() for p in paths}


def test_a_release_zip_with_a_zip_inside_is_imported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inner = _zip({**_records(record_paths()[:10], "cves/2022/1xxx"), "cves/delta.json": b"{}"})
    archive = tmp_path / "2025-07-02_all_CVEs_at_midnight.zip.zip"
    archive.write_bytes(_zip({"cves.zip": inner}))
    store = f"sqlite:///{tmp_path / 's.db'}"
    code, summary, err = _run(capsys, "cve", "import", "--store", store, str(archive))
    assert code == 0, err
    assert summary["records"]["cve5"]["added"] == 10
    assert summary["skipped"] == 1


def test_kev_and_epss_import(
    store_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, summary, err = _run(capsys, "kev", "import", "--store", store_url, str(KEV_FILE))
    assert code == 0, err
    assert (summary["catalogVersion"], summary["added"]) == ("2025.08.25", 36)
    compressed = tmp_path / "epss.csv.gz"
    compressed.write_bytes(gzip.compress(EPSS_FILE.read_bytes()))
    code, summary, err = _run(capsys, "epss", "import", "--store", store_url, str(compressed))
    assert code == 0, err
    assert (summary["scoreDate"], summary["added"]) == ("2026-08-16", 100)
    broken = tmp_path / "broken.csv"
    broken.write_bytes(
        b"#model_version:v1,score_date:2025-01-01\ncve,epss,percentile\nCVE-2020-1234,x,y\n"
    )
    code, _, err = _run(capsys, "epss", "import", "--store", store_url, str(broken))
    assert code == 2
    assert "broken.csv at line 3: expected epss as a number" in err


class _Upstream:
    """A loopback HTTP server serving a folder, noting every path asked for."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.asked: list[str] = []
        self.failing: set[str] = set()
        upstream = self

        class Handler(SimpleHTTPRequestHandler):
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                super().__init__(*args, directory=str(root), **kwargs)

            def do_GET(self) -> None:
                upstream.asked.append(self.path)
                if self.path in upstream.failing:
                    self.send_error(503)
                    return
                super().do_GET()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def put(self, path: str, data: bytes) -> None:
        target = self.root / path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


@pytest.fixture
def upstream(tmp_path: Path) -> Iterator[_Upstream]:
    served = _Upstream(tmp_path / "served")
    yield served
    served.server.shutdown()
    served.server.server_close()


def test_cve_sync_loads_a_baseline_then_the_newest_deltas_and_resumes(
    upstream: _Upstream, store_url: str
) -> None:
    paths = record_paths()
    upstream.put(
        "/cve_2026-08-20_0000Z/2026-08-20_all_CVEs_at_midnight.zip.zip",
        _zip({"cves.zip": _zip(_records(paths[:40], "cves/2022/0xxx"))}),
    )
    changed = json.loads(paths[0].read_bytes())
    changed["cveMetadata"]["dateUpdated"] = "2026-08-20T01:00:00.000Z"
    delta = {"deltaCves/CVE-changed.json": json.dumps(changed).encode()}
    delta |= _records(paths[40:45], "deltaCves")
    upstream.put("/cve_2026-08-20_0300Z/2026-08-20_delta_CVEs_at_0300Z.zip", _zip(delta))
    upstream.put(
        "/cve_2026-08-20_at_end_of_day/2026-08-20_delta_CVEs_at_end_of_day.zip",
        _zip(_records(paths[40:50], "deltaCves")),
    )
    upstream.put(
        "/cve_2026-08-21_0100Z/2026-08-21_delta_CVEs_at_0100Z.zip",
        _zip(_records(paths[50:52], "deltaCves")),
    )
    store = cve5_store(open_store(store_url))
    try:
        # 05:30 on the 20th: no baseline of the 20th's yet? It is there; the 0300Z delta
        # is the newest of the day.
        upstream.failing.add("/cve_2026-08-20_0300Z/2026-08-20_delta_CVEs_at_0300Z.zip")
        with pytest.raises(Exception, match="HTTP 503"):
            sync_cvelist(store, upstream.url, now=datetime(2026, 8, 20, 5, 30, tzinfo=UTC))
        assert json.loads(store.get_meta(CHECKPOINT) or "{}") == {
            "day": "2026-08-20",
            "hour": "0000Z",
        }
        assert store.count_cve5() == 40
        upstream.failing.clear()
        upstream.asked.clear()
        report = sync_cvelist(store, upstream.url, now=datetime(2026, 8, 20, 5, 30, tzinfo=UTC))
        assert report.archives == ["2026-08-20_delta_CVEs_at_0300Z.zip"]
        assert not any("all_CVEs" in asked for asked in upstream.asked)
        assert (report.imported.added, report.imported.updated) == (5, 1)
        report = sync_cvelist(store, upstream.url, now=datetime(2026, 8, 21, 2, 0, tzinfo=UTC))
        assert report.archives == [
            "2026-08-20_delta_CVEs_at_end_of_day.zip",
            "2026-08-21_delta_CVEs_at_0100Z.zip",
        ]
        assert store.count_cve5() == 52
        assert json.loads(store.get_meta(CHECKPOINT) or "{}") == {
            "day": "2026-08-21",
            "hour": "0100Z",
        }
    finally:
        store.close()


def test_cve_sync_from_the_command_line(
    upstream: _Upstream, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    today = datetime.now(UTC).date().isoformat()
    upstream.put(
        f"/cve_{today}_0000Z/{today}_all_CVEs_at_midnight.zip.zip",
        _zip({"cves.zip": _zip(_records(record_paths()[:5], "cves/2022/0xxx"))}),
    )
    store = f"sqlite:///{tmp_path / 's.db'}"
    code, summary, err = _run(capsys, "cve", "sync", "--store", store, "--upstream", upstream.url)
    assert code == 0, err
    assert summary["archives"] == [f"{today}_all_CVEs_at_midnight.zip.zip"]
    assert summary["records"]["cve5"]["added"] == 5
    code, _, err = _run(
        capsys,
        "cve",
        "sync",
        "--store",
        f"sqlite:///{tmp_path / 'e.db'}",
        "--upstream",
        upstream.url + "/none",
    )
    assert code == 2
    assert "no baseline archive" in err


def test_kev_and_epss_sync(
    upstream: _Upstream, store_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    upstream.put("/kev.json", KEV_FILE.read_bytes())
    upstream.put("/epss_scores-current.csv.gz", gzip.compress(EPSS_FILE.read_bytes()))
    code, summary, err = _run(
        capsys, "kev", "sync", "--store", store_url, "--upstream", upstream.url + "/kev.json"
    )
    assert code == 0, err
    assert summary["added"] == 36
    code, summary, err = _run(
        capsys,
        "epss",
        "sync",
        "--store",
        store_url,
        "--upstream",
        upstream.url + "/epss_scores-current.csv.gz",
    )
    assert code == 0, err
    assert summary["added"] == 100
    code, _, err = _run(
        capsys, "kev", "sync", "--store", store_url, "--upstream", upstream.url + "/gone"
    )
    assert code == 2
    assert "HTTP 404" in err


def test_a_named_file_that_is_no_record_is_unusable_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = f"sqlite:///{tmp_path / 's.db'}"
    code, summary, err = _run(capsys, "cve", "import", "--store", store, str(KEV_FILE))
    assert code == 2
    assert summary["failedFiles"] == 1
    assert "expected a CVE JSON 5 record (dataType CVE_RECORD)" in err
    broken = tmp_path / "broken.json"
    broken.write_bytes(b'{"dataType": "CVE_RECORD", "dataType": "CVE_RECORD"}')
    code, summary, err = _run(capsys, "cve", "import", "--store", store, str(broken))
    assert code == 1  # a record, rejected
    assert summary["rejected"] == 1
    assert "broken.json at $.dataType: duplicate key" in err


def test_a_checkpoint_assay_did_not_write_is_named(upstream: _Upstream, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 's.db'}"
    store = cve5_store(open_store(url))
    try:
        store.upsert_cve5([], meta={CHECKPOINT: '{"day": "yesterday"}'})
        with pytest.raises(StoreError, match="checkpoint is not one assay wrote"):
            sync_cvelist(store, upstream.url)
    finally:
        store.close()


def test_a_broken_archive_stops_the_sync_without_moving_the_checkpoint(
    upstream: _Upstream, tmp_path: Path
) -> None:
    upstream.put("/cve_2026-08-20_0000Z/2026-08-20_all_CVEs_at_midnight.zip.zip", b"PK\x03\x04 cut")
    url = f"sqlite:///{tmp_path / 's.db'}"
    store = cve5_store(open_store(url))
    try:
        with pytest.raises(ClientError, match="not a usable archive"):
            sync_cvelist(store, upstream.url, now=datetime(2026, 8, 20, 5, 0, tzinfo=UTC))
        assert store.get_meta(CHECKPOINT) is None
    finally:
        store.close()
