"""A full mirror through every kind of upstream failure ends with the upstream's records."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from assay.nvd.storage import open_store
from assay.nvd.sync import Mirror, SyncError, SyncReport

from .harness import (
    HANG,
    RESET,
    RESET_MID,
    TRUNCATE,
    Fault,
    FaultProxy,
    Seen,
    assert_mirrored,
    quick_options,
    status,
)


def _sync(proxy: FaultProxy, mirror_url: str, **changes: object) -> SyncReport:
    store = open_store(mirror_url)
    try:
        return Mirror(store, quick_options(proxy.base_url, **changes)).run()
    finally:
        store.close()


def _on_cve_pages(fault: Fault, *, every: int = 3, times: int = 1) -> object:
    """Fault the first `times` attempts of every `every`-th CVE page (after the probe)."""
    counts: dict[str, int] = {}

    def rule(seen: Seen) -> Fault | None:
        query = seen.query
        if not seen.path.endswith("/cves/2.0") or query.get("resultsPerPage") == "1":
            return None
        if int(query.get("startIndex", "0")) // 40 % every != 1:
            return None
        key = seen.target
        counts[key] = counts.get(key, 0) + 1
        return fault if counts[key] <= times else None

    return rule


def test_a_clean_run_mirrors_everything_and_a_second_run_changes_nothing(
    proxy: FaultProxy, sample_store_url: str, mirror_url: str
) -> None:
    kinds = ("cves", "cvehistory", "cpes", "cpematch")
    first = _sync(proxy, mirror_url, kinds=kinds, page_size=None)
    assert first.ok
    assert first.retries == 0
    assert_mirrored(sample_store_url, mirror_url, kinds)
    by_kind = {kind.kind: kind for kind in first.kinds}
    assert by_kind["cpes"].counts.added == by_kind["cpes"].fetched == 10_000
    second = _sync(proxy, mirror_url, kinds=kinds, page_size=None)
    assert all(kind.counts.added == kind.counts.updated == 0 for kind in second.kinds)
    assert all(not kind.full_load for kind in second.kinds)
    assert_mirrored(sample_store_url, mirror_url, kinds)


@pytest.mark.parametrize(
    ("fault", "times"),
    [
        pytest.param(status(403, message="Rate limit exceeded"), 3, id="403-burst"),
        pytest.param(status(503, retry_after="0"), 2, id="503"),
        pytest.param(HANG, 1, id="hang-past-timeout"),
        pytest.param(TRUNCATE, 2, id="truncated-body"),
        pytest.param(RESET, 2, id="reset-before-answer"),
        pytest.param(RESET_MID, 1, id="reset-mid-body"),
    ],
)
def test_faults_are_retried_and_the_mirror_equals_the_upstream(
    proxy: FaultProxy, sample_store_url: str, tmp_path: Path, fault: Fault, times: int
) -> None:
    # The mirror is SQLite here whatever the upstream's backend; the mix of faults below
    # runs on every backend.
    mirror_url = f"sqlite:///{tmp_path / 'mirror.db'}"
    every = 4 if fault is HANG else 3
    proxy.rules.append(_on_cve_pages(fault, every=every, times=times))  # type: ignore[arg-type]
    report = _sync(proxy, mirror_url, timeout=0.5 if fault is HANG else 2.0)
    assert report.ok
    assert len(proxy.faults) >= times * 2, "the rule should have hit several pages"
    assert report.retries == len(proxy.faults)
    assert report.requests == proxy.count
    assert_mirrored(sample_store_url, mirror_url, ("cves", "cvehistory", "cpematch"))


def test_a_mix_of_faults_on_every_listing(
    proxy: FaultProxy, sample_store_url: str, mirror_url: str
) -> None:
    cycle = [status(403), None, TRUNCATE, status(503), None, RESET, RESET_MID, None, None]

    def rule(seen: Seen) -> Fault | None:
        return cycle[seen.number % len(cycle)]

    proxy.rules.append(rule)
    report = _sync(proxy, mirror_url, max_retries=6)
    assert report.ok
    assert report.retries == len(proxy.faults) > 5
    assert_mirrored(sample_store_url, mirror_url, ("cves", "cvehistory", "cpematch"))


def test_an_upstream_failing_for_good_stops_the_run_and_the_next_run_resumes(
    proxy: FaultProxy, sample_store_url: str, mirror_url: str
) -> None:
    broken = {"on": True}

    def rule(seen: Seen) -> Fault | None:
        start = int(seen.query.get("startIndex", "0"))
        if broken["on"] and seen.path.endswith("/cves/2.0") and start >= 120:
            return status(503)
        return None

    proxy.rules.append(rule)
    with pytest.raises(SyncError) as caught:
        _sync(proxy, mirror_url, max_retries=2)
    message = str(caught.value)
    assert "CVEs from http://127.0.0.1:" in message
    assert "startIndex=120" in message
    assert "HTTP 503" in message
    assert "run again to resume" in message
    store = open_store(mirror_url)
    try:
        checkpoint = store.get_meta("sync.cves")
    finally:
        store.close()
    assert checkpoint is not None
    assert '"phase":"full"' in checkpoint
    assert '"nextIndex":120' in checkpoint

    broken["on"] = False
    before = proxy.count
    report = _sync(proxy, mirror_url)
    resumed = [s for s in proxy.seen[before:] if s.path.endswith("/cves/2.0")]
    full_pages = [s for s in resumed if "lastModStartDate" not in s.query]
    assert int(full_pages[1].query["startIndex"]) == 120  # [0] is the clock probe
    assert report.ok
    assert_mirrored(sample_store_url, mirror_url, ("cves", "cvehistory", "cpematch"))


def _empty_page(body: bytes) -> bytes:
    page = orjson.loads(body)
    return orjson.dumps({**page, "resultsPerPage": 0, "vulnerabilities": []})


def test_an_empty_page_before_the_end_is_asked_again(
    proxy: FaultProxy, sample_store_url: str, tmp_path: Path
) -> None:
    proxy.rules.append(_on_cve_pages(Fault("corrupt", corrupt=_empty_page), times=2))  # type: ignore[arg-type]
    mirror_url = f"sqlite:///{tmp_path / 'mirror.db'}"
    report = _sync(proxy, mirror_url)
    assert report.ok
    assert len(proxy.faults) == 6
    assert_mirrored(sample_store_url, mirror_url, ("cves", "cvehistory", "cpematch"))


def test_empty_pages_for_good_stop_the_run(proxy: FaultProxy, tmp_path: Path) -> None:
    proxy.rules.append(_on_cve_pages(Fault("corrupt", corrupt=_empty_page), times=99))  # type: ignore[arg-type]
    with pytest.raises(SyncError) as caught:
        _sync(proxy, f"sqlite:///{tmp_path / 'mirror.db'}", max_retries=2)
    assert "startIndex=40: expected records up to totalResults=" in str(caught.value)
    assert "found an empty page" in str(caught.value)
