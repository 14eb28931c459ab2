"""The importer's two readers (a thread, or a process of its own as `assay nvd import`
uses for large inputs) give the same store, the same report and the same problems."""

from __future__ import annotations

import contextlib
import gzip
from importlib import resources
from pathlib import Path
from typing import Any

import orjson
import pytest
from tests.conftest import make_store_url

from assay._cli import main
from assay.nvd.cve_query import parse_cve_query
from assay.nvd.ingest.importer import Importer, ImportReport
from assay.nvd.storage import open_store


def _sample() -> list[dict[str, Any]]:
    data = resources.files("assay.data").joinpath("nvd-cves.jsonl.gz")
    with data.open("rb") as raw, gzip.open(raw) as lines:
        return [orjson.loads(line) for line in lines if line.strip()]


SAMPLE = _sample()
BATCH = 10


def _files(folder: Path) -> list[Path]:
    """Good records with two malformed ones, then a file that breaks off part-way."""
    records = [dict(record) for record in SAMPLE]
    records[5]["published"] = "yesterday"
    records[40]["id"] = "CVE-19-1"
    good = folder / "cves.jsonl.gz"
    good.write_bytes(gzip.compress(b"".join(orjson.dumps(r) + b"\n" for r in records[:200])))
    body = b"".join(orjson.dumps(r) + b"\n" for r in records[200:])
    broken = folder / "broken.jsonl"
    # a rejected record, whole lines, then one cut in half
    broken.write_bytes(
        orjson.dumps({**records[200], "lastModified": 7}) + b"\n" + body[: len(body) // 2]
    )
    return [good, broken]


def _import(folder: Path, *, reader_process: bool) -> tuple[ImportReport, list[bytes]]:
    for url in make_store_url("sqlite", folder):
        store = open_store(url)
        try:
            with Importer(store, batch_size=BATCH, reader_process=reader_process) as importer:
                report = importer.import_files(_files(folder))
            records = store.search_cves(parse_cve_query([])).records
        finally:
            store.close()
        return report, records
    raise AssertionError("no store")


def test_the_reader_process_gives_what_the_thread_gives(tmp_path: Path) -> None:
    (tmp_path / "thread").mkdir()
    (tmp_path / "process").mkdir()
    by_thread, stored_by_thread = _import(tmp_path / "thread", reader_process=False)
    by_process, stored_by_process = _import(tmp_path / "process", reader_process=True)
    assert stored_by_process == stored_by_thread
    assert by_process.counts == by_thread.counts
    assert (by_process.rejected, by_process.failed_files) == (3, 1)
    assert (by_thread.rejected, by_thread.failed_files) == (3, 1)
    strip = lambda problems: [p.replace(str(tmp_path / "process"), "") for p in problems]  # noqa: E731
    assert strip(by_process.problems) == [
        p.replace(str(tmp_path / "thread"), "") for p in by_thread.problems
    ]
    text = "\n".join(by_process.problems)
    assert "at line 6.published: expected a timestamp" in text
    assert "at line 41.id: expected a CVE id" in text
    assert "broken.jsonl at line 1.lastModified" in text  # told before the file broke off
    assert "the batch in progress was not stored" in text
    # Whole batches of the broken file were kept, the one in progress was not.
    body = b"".join(orjson.dumps(r) + b"\n" for r in SAMPLE[200:])
    whole_lines = body[: len(body) // 2].count(b"\n")
    assert whole_lines >= BATCH
    assert len(stored_by_process) == 198 + whole_lines // BATCH * BATCH


def test_a_reader_process_serves_file_after_file_and_stops(tmp_path: Path) -> None:
    files = _files(tmp_path)[:1]
    for url in make_store_url("sqlite", tmp_path):
        store = open_store(url)
        importer = Importer(store, batch_size=50, reader_process=True)
        importer.import_files(files)
        process = importer._reader._process if importer._reader else None
        importer.import_files(files)  # the same process again: everything unchanged
        assert importer._reader is not None
        assert importer._reader._process is process
        importer.close()
        assert process is not None
        assert not process.is_alive()
        assert importer.report.counts["cve"].added == 198
        assert importer.report.counts["cve"].unchanged == 198
        store.close()


def test_a_missing_file_is_reported_by_the_reader_process(tmp_path: Path) -> None:
    for url in make_store_url("sqlite", tmp_path):
        store = open_store(url)
        with Importer(store, reader_process=True) as importer:
            report = importer.import_files([tmp_path / "absent.json", *_files(tmp_path)[:1]])
        store.close()
        assert report.failed_files == 1
        assert "absent.json: cannot read" in report.problems[0]
        assert report.counts["cve"].added == 198


def test_the_cli_checks_large_inputs_in_a_reader_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import assay._cli.nvd as nvd_cli

    monkeypatch.setattr(nvd_cli, "READER_PROCESS_BYTES", 0)
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    assert main(["nvd", "import", "--store", url, str(_files(tmp_path)[0])]) == 1
    assert "expected a timestamp" in capsys.readouterr().err
    store = open_store(url)
    assert store.count_cves() == 198
    store.close()


def _children(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_the_reader_process_ends_when_its_importer_is_killed(tmp_path: Path) -> None:
    import os
    import signal
    import subprocess
    import sys
    import time

    from assay._cli.nvd import READER_PROCESS_BYTES

    big = tmp_path / "cves.jsonl"
    with big.open("wb") as out:  # the sample many times over: a reader process is used
        while out.tell() <= READER_PROCESS_BYTES * 3:
            out.write(b"".join(orjson.dumps(record) + b"\n" for record in SAMPLE))
    importer = subprocess.Popen(
        [sys.executable, "-m", "assay", "nvd", "import", "--batch-size", "50",
         "--store", f"sqlite:///{tmp_path / 'store.db'}", str(big)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while not (readers := _children(importer.pid)):
            assert importer.poll() is None, "the import ended before its reader was seen"
            assert time.monotonic() < deadline
            time.sleep(0.02)
        os.kill(importer.pid, signal.SIGKILL)
        importer.wait()
        deadline = time.monotonic() + 10
        while any(Path(f"/proc/{pid}").exists() for pid in readers):
            assert time.monotonic() < deadline, f"reader {readers} outlived its importer"
            time.sleep(0.05)
    finally:
        importer.kill()
        importer.wait()
        for pid in _children(os.getpid()):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
