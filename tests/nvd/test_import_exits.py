"""`assay nvd import` and the store on unusable input: one clear line, the documented
exit code (2 unusable, 1 rejected records), no traceback, bounded memory."""

from __future__ import annotations

import gzip
import os
import resource
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from assay.errors import StoreError
from assay.nvd.storage import open_store

from .conftest import CVE_32223_FILE, bundled_cves

SOURCES_FILE = Path(__file__).parent.parent / "assets" / "nvd" / "cves-1999.json.gz"


def _assay(
    *argv: str, limits: Callable[[], None] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "assay", *argv],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=limits,
        env={**os.environ, "COLUMNS": "400"},
    )


def _one_clear_error(result: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert "Traceback" not in result.stderr, result.stderr
    for needle in needles:
        assert needle in result.stderr, result.stderr


def _memory_limit(megabytes: int) -> Callable[[], None]:
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (megabytes * 2**20, megabytes * 2**20))

    return limit


def _file_size_limit(size: int) -> Callable[[], None]:
    def limit() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past it fails with EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))

    return limit


@pytest.mark.parametrize(
    "document",
    [
        b'{"vulnerabilities": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
        b'{"vulnerabilities": [{"cve": ' + b"[" * 100_000 + b"]" * 100_000 + b"}]}",
        b'{"cve": {"id": "CVE-2020-0001", "x": ' + b"{" * 50_000 + b"}" * 50_000 + b"}}\n",
    ],
    ids=["list", "record", "json-lines"],
)
def test_deeply_nested_json_is_refused_with_bounded_memory(tmp_path: Path, document: bytes) -> None:
    path = tmp_path / "deep.json.gz"
    path.write_bytes(gzip.compress(document))
    result = _assay(
        "nvd", "import", "--store", f"sqlite:///{tmp_path / 's.db'}", str(path),
        limits=_memory_limit(1024),
    )  # fmt: skip
    assert result.returncode == 2, result.stderr
    _one_clear_error(result, "deep.json.gz", "nested deeper than 64 levels")


def test_a_truncated_gz_is_one_line_and_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "cut.json.gz"
    path.write_bytes(SOURCES_FILE.read_bytes()[:20_000])
    result = _assay("nvd", "import", "--store", f"sqlite:///{tmp_path / 's.db'}", str(path))
    assert result.returncode == 2
    _one_clear_error(result, "cut.json.gz", "damaged or truncated")


def test_an_empty_file_exits_2_and_a_rejected_one_beside_a_good_one_exits_1(
    tmp_path: Path,
) -> None:
    empty = tmp_path / "empty.json"
    empty.write_bytes(b"")
    store = f"sqlite:///{tmp_path / 's.db'}"
    result = _assay("nvd", "import", "--store", store, str(empty))
    assert result.returncode == 2
    _one_clear_error(result, "empty.json", "the file is empty")
    result = _assay("nvd", "import", "--store", store, str(empty), str(CVE_32223_FILE))
    assert result.returncode == 1
    _one_clear_error(result, "empty.json")


def test_an_empty_file_is_not_turned_into_a_store(tmp_path: Path) -> None:
    path = tmp_path / "emptied.db"
    path.write_bytes(b"")
    with pytest.raises(StoreError, match="is an empty file, not an assay store"):
        open_store(f"sqlite:///{path}")
    result = _assay("nvd", "import", "--store", f"sqlite:///{path}", str(CVE_32223_FILE))
    assert result.returncode == 2
    _one_clear_error(result, "is an empty file")
    assert path.stat().st_size == 0


def test_a_full_disk_during_import_is_one_line_and_exit_2(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 's.db'}"
    open_store(url).close()  # the store exists; its writes are what cannot grow
    result = _assay(
        "nvd", "import", "--store", url, str(bundled_cves()), limits=_file_size_limit(256 * 1024)
    )
    assert result.returncode == 2, result.stderr
    _one_clear_error(result, "assay: error: the SQLite store at", str(tmp_path / "s.db"))


def test_a_lock_file_that_cannot_be_written_is_one_line_and_exit_2(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 's.db'}"
    open_store(url).close()
    (tmp_path / "s.db.sync.lock").symlink_to("/dev/full")  # every write: no space left
    result = _assay(
        "nvd",
        "sync",
        "--store",
        url,
        "--upstream",
        "http://127.0.0.1:9/rest/json",
        "--retries",
        "0",
    )
    assert result.returncode == 2
    _one_clear_error(result, "cannot write the lock file", "s.db.sync.lock")


def test_a_corrupt_store_is_refused_by_serve_before_any_worker_starts(tmp_path: Path) -> None:
    import sqlite3

    from assay.nvd.ingest.importer import Importer

    path = tmp_path / "s.db"
    store = open_store(f"sqlite:///{path}")
    assert Importer(store).import_files([bundled_cves()]).ok
    store.close()
    with sqlite3.connect(path) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        pages = [
            row[0]
            for row in connection.execute(
                "SELECT rootpage FROM sqlite_master WHERE tbl_name = 'cve' AND rootpage > 0"
            )
        ]
        page_size = connection.execute("PRAGMA page_size").fetchone()[0]
    with path.open("r+b") as raw:
        for page in pages:
            raw.seek((page - 1) * page_size)
            raw.write(b"\xa5" * page_size)
    result = _assay("serve", "--store", f"sqlite:///{path}", "--workers", "2", "--port", "9")
    assert result.returncode == 2
    _one_clear_error(result, "assay: error: the SQLite store at", "malformed")
