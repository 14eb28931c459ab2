"""Oversized answers from a hostile upstream: a gzip bomb and endless bodies end the run
with exit 2 naming the URL, read no further than the caps, and leave memory bounded.
The real CLI runs in a subprocess, so that its peak RSS can be measured."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

from assay.nvd.storage import open_store

from .hostile import Answer, Request, Upstream, endless, gzip_bomb

pytestmark = pytest.mark.slow

MIB = 1 << 20
QUICK = ["--kinds", "cves", "--by-date", "--timeout", "30", "--retries", "2", "--backoff", "0"]


@dataclass(frozen=True)
class Run:
    code: int
    err: str
    peak_mib: float


# `python -m assay`, writing its peak RSS (VmHWM) to $PEAK_FILE on the way out. Neither
# wait4's nor getrusage's ru_maxrss would do: Linux carries the parent's high-water mark
# across fork and exec, and the parent here is the test process.
_MEASURED = """
import atexit, os, sys
def peak():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            open(os.environ["PEAK_FILE"], "w").write(line.split()[1])
atexit.register(peak)
from assay._cli import main
raise SystemExit(main(sys.argv[1:]))
"""


def _sync(peak_file: Path, store: str, upstream: str, *extra: str) -> Run:
    command = [sys.executable, "-c", _MEASURED, "nvd", "sync", "--store", store]
    result = subprocess.run(
        [*command, "--upstream", upstream, *QUICK, *extra],
        check=False,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "COLUMNS": "400", "PEAK_FILE": str(peak_file)},
    )
    peak_kib = int(peak_file.read_text())
    return Run(result.returncode, result.stderr, peak_kib / 1024)


@cache
def _bomb(decoded_mib: int) -> bytes:
    return gzip_bomb(decoded_mib)


def _answering(body: object, **headers: str) -> Iterator[Upstream]:
    def script(_request: Request) -> Answer:
        return Answer(headers={"Content-Type": "application/json", **headers}, body=body)  # type: ignore[arg-type]

    with Upstream(script) as upstream:
        yield upstream


def _nothing_stored(store: str) -> None:
    opened = open_store(store)
    try:
        assert opened.count_cves() == 0
        assert opened.get_meta("sync.cves") is None
    finally:
        opened.close()


def _unusable(run: Run, upstream: Upstream) -> None:
    assert run.code == 2, run.err
    assert "Traceback" not in run.err
    assert f"{upstream.base_url}/cves/2.0?resultsPerPage=1&startIndex=0" in run.err
    assert len(upstream.api_requests()) == 1  # refused at once, not retried
    assert "run again" not in run.err  # the next run would get the same


def test_a_gzip_bomb_is_cut_at_the_decoded_cap(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'm.db'}"
    for upstream in _answering(_bomb(1024), **{"Content-Encoding": "gzip"}):
        run = _sync(tmp_path / "peak", store, upstream.base_url)
        _unusable(run, upstream)
        assert "more than 256 MiB once decoded" in run.err
    assert run.peak_mib < 512, run.peak_mib
    _nothing_stored(store)


def test_the_decoded_cap_is_configurable(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'm.db'}"
    for upstream in _answering(_bomb(64), **{"Content-Encoding": "gzip"}):
        run = _sync(tmp_path / "peak", store, upstream.base_url, "--max-decoded-page-mib", "8")
        _unusable(run, upstream)
        assert "more than 8 MiB once decoded" in run.err
    assert run.peak_mib < 200, run.peak_mib


def test_an_endless_body_is_cut_at_the_cap_on_the_wire(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'm.db'}"
    for upstream in _answering(endless(b"\x20" * MIB, 400 * MIB)):
        run = _sync(tmp_path / "peak", store, upstream.base_url)
        _unusable(run, upstream)
        assert "more than 64 MiB" in run.err
    assert run.peak_mib < 256, run.peak_mib
    _nothing_stored(store)


def test_a_declared_length_over_the_cap_is_refused_before_reading(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'm.db'}"
    size = 3 * 1024 * MIB
    for upstream in _answering(endless(b"\x20" * MIB, size), **{"Content-Length": str(size)}):
        run = _sync(tmp_path / "peak", store, upstream.base_url, "--max-page-mib", "16")
        _unusable(run, upstream)
        assert "more than 16 MiB" in run.err
    assert run.peak_mib < 200, run.peak_mib
