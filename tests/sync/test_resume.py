"""`assay nvd sync` killed (SIGKILL) mid-run, twice, then run again: nothing lost or doubled."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time

import orjson
import pytest

from assay.nvd.storage import open_store

from .harness import FaultProxy, assert_mirrored

pytestmark = pytest.mark.slow


def _command(proxy: FaultProxy, mirror_url: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "assay",
        "nvd",
        "sync",
        "--store",
        mirror_url,
        "--upstream",
        proxy.base_url,
        "--kinds",
        "cves,cvehistory,cpematch",
        "--page-size",
        "20",
        "--timeout",
        "10",
        "--backoff",
        "0.01",
        "--by-date",  # (the change cursor resumes the same way: test_incremental)
    ]


def _run_until(proxy: FaultProxy, command: list[str], requests: int, jitter: float) -> int:
    """Start the sync, SIGKILL it once the proxy has seen `requests` more requests."""
    target = proxy.count + requests
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while proxy.count < target and process.poll() is None:
        assert time.monotonic() < deadline, "the sync made no progress"
        time.sleep(0.002)
    time.sleep(jitter)  # land anywhere: mid-request, mid-upsert, between upsert and checkpoint
    process.kill()
    process.wait(10)
    assert process.stderr is not None
    errors = process.stderr.read().decode()
    process.stderr.close()
    assert "Traceback" not in errors, errors
    return process.returncode


def _checkpoint(mirror_url: str, kind: str) -> dict[str, object] | None:
    store = open_store(mirror_url)
    try:
        text = store.get_meta(f"sync.{kind}")
    finally:
        store.close()
    return None if text is None else orjson.loads(text)


def test_killed_twice_then_finished(
    proxy: FaultProxy, sample_store_url: str, mirror_url: str
) -> None:
    rng = random.Random(os.getpid())
    command = _command(proxy, mirror_url)
    # Twice while the CVEs load (17 pages of 20 after the clock probe).
    assert _run_until(proxy, command, 4, rng.uniform(0, 0.03)) == -9
    assert _run_until(proxy, command, 6, rng.uniform(0, 0.03)) == -9
    cves = _checkpoint(mirror_url, "cves")
    assert cves is not None, "the kills should land among the CVE pages"
    assert cves["phase"] == "full"
    resume_at = cves["nextIndex"]
    assert isinstance(resume_at, int)
    assert 0 < resume_at < 324

    before = proxy.count
    finished = subprocess.run(command, capture_output=True, timeout=120, check=False)
    assert finished.returncode == 0, finished.stderr.decode()
    cve_pages = [
        seen
        for seen in proxy.seen[before:]
        if seen.path.endswith("/cves/2.0")
        and "lastModStartDate" not in seen.query
        and seen.query.get("resultsPerPage") == "20"
    ]
    assert int(cve_pages[0].query["startIndex"]) == resume_at, "the CVE load did not resume"
    assert_mirrored(sample_store_url, mirror_url, ("cves", "cvehistory", "cpematch"))
    summary = finished.stderr.decode()
    assert "resuming the full load at record" in summary
    assert "sync summary" in summary
