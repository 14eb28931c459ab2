"""Listings that never end: an upstream that ignores `startIndex`, or one whose
`totalResults` keeps growing with fresh junk, stops the run with exit 2 naming the URL
instead of filling the disk; the pages before the stop are the upstream's, the rest is
not read."""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from pathlib import Path

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from assay._cli import main
from assay.nvd.storage import open_store
from assay.nvd.sync import Position, advance
from assay.nvd.sync._plan import UpstreamRunaway, WalkGuard

from .hostile import Answer, Request, Upstream, nvd_time, page, real_cves

QUICK = ["--kinds", "cves", "--by-date", "--timeout", "5", "--retries", "0", "--backoff", "0"]
SIZE = 20


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    try:
        code = main(list(args))
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _sync(capsys: pytest.CaptureFixture[str], store: str, upstream: Upstream) -> tuple[int, str]:
    code, out, err = _run(
        capsys, "nvd", "sync", "--store", store, "--upstream", upstream.base_url,
        "--page-size", str(SIZE), "--json", *QUICK,
    )  # fmt: skip
    assert "Traceback" not in err
    if out:
        assert orjson.loads(out)["ok"] is False
    return code, err


def _count(store: str) -> int:
    opened = open_store(store)
    try:
        return opened.count_cves()
    finally:
        opened.close()


@pytest.mark.parametrize("total", [200, 10**9])
def test_an_upstream_that_ignores_start_index_is_stopped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], total: int
) -> None:
    records = real_cves()[:SIZE]

    def script(request: Request) -> Answer:
        start = int(request.query.get("startIndex", "0"))
        size = int(request.query.get("resultsPerPage", "1"))
        return Answer(body=page(records[:size], start=start, total=total))

    store = f"sqlite:///{tmp_path / 'm.db'}"
    with Upstream(script) as upstream:
        code, err = _sync(capsys, store, upstream)
        assert code == 2, err
        assert f"{upstream.base_url}/cves/2.0" in err
        assert "startIndex=20" in err
        assert "repeats" in err
        assert len(upstream.api_requests()) <= 3  # the probe, the first page, the repeat
    assert _count(store) == SIZE


def test_an_upstream_whose_total_keeps_growing_is_stopped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    template = real_cves()[0]

    def junk(number: int) -> dict[str, object]:
        record = copy.deepcopy(template)
        record["id"] = f"CVE-9000-{number:06d}"
        record["lastModified"] = nvd_time(datetime.now(UTC))
        return record

    def script(request: Request) -> Answer:
        start = int(request.query.get("startIndex", "0"))
        size = int(request.query.get("resultsPerPage", "1"))
        fresh = [junk(start + n) for n in range(size)]
        return Answer(body=page(fresh, start=start, total=start + 2 * size))

    store = f"sqlite:///{tmp_path / 'm.db'}"
    with Upstream(script) as upstream:
        code, err = _sync(capsys, store, upstream)
        assert code == 2, err
        assert f"{upstream.base_url}/cves/2.0" in err
        assert "totalResults grew" in err
        assert len(upstream.api_requests()) <= 6
    assert _count(store) <= 4 * SIZE


@given(
    size=st.integers(1, 60),
    total=st.integers(0, 300),
    drops=st.lists(st.tuples(st.integers(0, 50), st.integers(0, 299)), max_size=8),
    adds=st.lists(st.integers(0, 50), max_size=8),
)
def test_an_honest_listing_never_trips_the_guard(
    size: int, total: int, drops: list[tuple[int, int]], adds: list[int]
) -> None:
    """Records leave the listing (before or after the position) and a few are added at
    its end while it is read: the walk ends, reads what remains, and is never stopped."""
    listing = [f"id-{n}" for n in range(total)]
    leaving = dict(drops)  # page number -> a position that leaves before that page
    added = set(adds[: max(1, size // 8)])  # pages before which one record is added
    guard = WalkGuard(size)
    read: set[str] = set()
    position = Position()
    page = 0
    while not position.done:
        if page in leaving and listing:
            del listing[leaving[page] % len(listing)]
        elif page in added:  # on another page: a total that moves both ways hides both
            listing.append(f"new-{page}")
        start = position.next_index
        records = listing[start : start + size]
        guard.check(start, len(listing), records)
        read.update(records)
        after = advance(position, start_index=start, received=len(records), total=len(listing))
        guard.moved(start, len(records))
        position = after
        page += 1
        assert page < 10_000
    assert set(listing) <= read


def test_a_repeat_after_a_step_back_is_no_runaway() -> None:
    guard = WalkGuard(3)
    guard.check(0, 10, ["a", "b", "c"])
    guard.moved(0, 3)
    guard.check(3, 10, ["d", "e", "f"])
    guard.moved(3, 3)  # the total shrank by one (before this check): read again from 2
    guard.check(2, 9, ["c", "d", "e"])
    guard.moved(2, 3)
    guard.check(5, 9, ["g", "h", "i"])
    guard.moved(5, 3)
    with pytest.raises(UpstreamRunaway, match="startIndex=8: the page repeats all its 3"):
        guard.check(8, 9, ["g", "h", "i"])
