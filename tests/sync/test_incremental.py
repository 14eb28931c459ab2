"""Incremental runs: only the changed window is read, and records leaving it are not missed."""

from __future__ import annotations

import gzip
import itertools
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest
from tests.live import serving

from assay._cli.nvd import bundled_files
from assay.nvd.ingest.importer import Importer
from assay.nvd.storage import open_store
from assay.nvd.sync import DEFAULT_OVERLAP, KINDS, Checkpoint, Mirror, SyncReport

from .harness import FaultProxy, Seen, assert_mirrored, quick_options

CPE_SAMPLE = 300


@dataclass
class Upstream:
    """A small upstream of our own (tests change its data): store URL and proxy."""

    url: str
    proxy: FaultProxy
    folder: Path

    def put(self, kind: str, records: list[dict[str, Any]]) -> None:
        """Import records into the upstream (a newer `lastModified` replaces the old one)."""
        wrapper = {"cve": "cve", "cpe": "cpe", "cpematch": "matchString", "change": "change"}
        path = self.folder / f"put-{uuid.uuid4().hex}.jsonl"
        path.write_bytes(
            b"".join(
                orjson.dumps({wrapper[kind]: r} if kind in wrapper else r) + b"\n"
                for r in records  # (sources are not wrapped)
            )
        )
        store = open_store(self.url)
        try:
            report = Importer(store).import_files([path])
        finally:
            store.close()
        assert report.ok, report.problems


@pytest.fixture
def upstream(tmp_path: Path) -> Iterator[Upstream]:
    """The real CVE, history and match-criteria samples and 300 real CPEs, served."""
    folder = tmp_path / "upstream"
    folder.mkdir()
    products = orjson.loads(
        gzip.decompress((Path(str(_bundled("nvd-cpes-2023.json.gz")))).read_bytes())
    )["products"][:CPE_SAMPLE]
    cpes = folder / "cpes.jsonl"
    cpes.write_bytes(b"\n".join(orjson.dumps(item) for item in products))
    url = f"sqlite:///{folder / 'store.db'}"
    store = open_store(url)
    files = [path for path in bundled_files() if "cpes" not in path.name]
    sources = Path(__file__).parent.parent / "assets" / "nvd" / "sources-20.json.gz"
    report = Importer(store).import_files([*files, cpes, sources])
    store.close()
    assert report.ok, report.problems
    with serving(url) as root:
        proxy = FaultProxy(root)
        proxy.start()
        try:
            yield Upstream(url, proxy, folder)
        finally:
            proxy.stop()


def _bundled(name: str) -> Path:
    return next(path for path in bundled_files() if path.name == name)


def _records(url: str, kind: str) -> list[dict[str, Any]]:
    from .harness import stored_records

    store = open_store(url)
    try:
        return [orjson.loads(raw) for raw in stored_records(store, kind).values()]  # type: ignore[arg-type]
    finally:
        store.close()


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}"


def _sync(upstream: Upstream, mirror_url: str, **changes: Any) -> SyncReport:
    store = open_store(mirror_url)
    try:
        options = quick_options(upstream.proxy.base_url, **{"kinds": KINDS, **changes})
        return Mirror(store, options).run()
    finally:
        store.close()


def _window(seen: Seen) -> tuple[datetime, datetime] | None:
    query = seen.query
    for start, end in (
        ("lastModStartDate", "lastModEndDate"),
        ("changeStartDate", "changeEndDate"),
    ):
        if start in query:
            return datetime.fromisoformat(query[start]), datetime.fromisoformat(query[end])
    return None


def _checkpoint(mirror_url: str, kind: str) -> Checkpoint:
    store = open_store(mirror_url)
    try:
        text = store.get_meta(f"sync.{kind}")
    finally:
        store.close()
    assert text is not None
    return Checkpoint.from_json(text, kind)


def test_only_the_changed_window_is_read(upstream: Upstream, store_url: str) -> None:
    first = _sync(upstream, store_url)
    assert first.ok
    assert all(kind.full_load for kind in first.kinds)
    assert_mirrored(upstream.url, store_url)
    since = _checkpoint(store_url, "cves").since
    assert first.upstream_time == since

    recently = _stamp(datetime.now(UTC) - timedelta(minutes=1))
    cves = _records(upstream.url, "cves")
    changed = {**cves[5], "lastModified": recently, "vulnStatus": "Modified"}
    added = {**cves[6], "id": "CVE-2099-0001", "lastModified": recently}
    upstream.put("cve", [changed, added])
    cpe = _records(upstream.url, "cpes")[10]
    upstream.put("cpe", [{**cpe, "lastModified": recently, "deprecated": True}])
    match = _records(upstream.url, "cpematch")[0]
    upstream.put("cpematch", [{**match, "lastModified": recently, "status": "Inactive"}])
    change = _records(upstream.url, "cvehistory")[0]
    new_change = {**change, "cveChangeId": str(uuid.uuid4()).upper(), "created": recently}
    upstream.put("change", [new_change])
    source = _records(upstream.url, "source")[3]
    upstream.put("source", [{**source, "lastModified": recently, "name": "renamed"}])

    before = upstream.proxy.count
    second = _sync(upstream, store_url)
    requests = upstream.proxy.seen[before:]
    probe, pages = requests[0], requests[1:]
    assert probe.query == {"resultsPerPage": "1", "startIndex": "0"}
    assert pages, "the second run read nothing"
    assert second.upstream_time is not None
    for seen in pages:  # every page is inside the one window since the last checkpoint
        assert _window(seen) == (since - DEFAULT_OVERLAP, second.upstream_time), seen.target
    by_kind = {kind.kind: kind for kind in second.kinds}
    assert (by_kind["cves"].fetched, by_kind["cves"].counts.added) == (2, 1)
    assert by_kind["cves"].counts.updated == 1
    assert (by_kind["cpes"].fetched, by_kind["cpes"].counts.updated) == (1, 1)
    assert (by_kind["cpematch"].fetched, by_kind["cpematch"].counts.updated) == (1, 1)
    assert (by_kind["cvehistory"].fetched, by_kind["cvehistory"].counts.added) == (1, 1)
    assert (by_kind["source"].fetched, by_kind["source"].counts.updated) == (1, 1)
    assert_mirrored(upstream.url, store_url)


def test_a_long_absence_is_read_in_windows_of_at_most_120_days(
    upstream: Upstream, store_url: str
) -> None:
    _sync(upstream, store_url, kinds=("cves",))
    store = open_store(store_url)
    try:
        checkpoint = _checkpoint(store_url, "cves")
        long_ago = checkpoint.since - timedelta(days=300)
        stale = Checkpoint(upstream=checkpoint.upstream, phase="incremental", since=long_ago)
        store.set_meta("sync.cves", stale.to_json())
    finally:
        store.close()
    before = upstream.proxy.count
    report = _sync(upstream, store_url, kinds=("cves",))
    windows = [_window(seen) for seen in upstream.proxy.seen[before + 1 :]]
    assert len(windows) == 3
    assert windows[0] is not None
    assert windows[0][0] == long_ago - DEFAULT_OVERLAP
    for window, following in itertools.pairwise(windows):
        assert window is not None
        assert following is not None
        assert window[1] == following[0]
        assert window[1] - window[0] <= timedelta(days=120)
    assert windows[-1] is not None
    assert windows[-1][1] == report.upstream_time
    assert _checkpoint(store_url, "cves").since == report.upstream_time


def test_records_leaving_a_window_while_it_is_read_do_not_hide_others(
    upstream: Upstream, store_url: str
) -> None:
    _sync(upstream, store_url, kinds=("cves",))
    recently = datetime.now(UTC) - timedelta(minutes=1)
    cves = _records(upstream.url, "cves")[:10]
    upstream.put(
        "cve",
        [
            {**cve, "lastModified": _stamp(recently), "evaluatorComment": f"change {i}"}
            for i, cve in enumerate(cves)
        ],
    )
    first_in_window = min(cves, key=lambda cve: (cve["published"], cve["id"]))
    moved = {"done": False}

    def leave_window(seen: Seen) -> None:  # a proxy rule that never injects a fault
        # Before the window's second page: its first record changes again, now after the
        # window's end, so it leaves the window and every later record moves down one.
        if moved["done"] or "lastModStartDate" not in seen.query:
            return
        if seen.query.get("startIndex") != "3":
            return
        moved["done"] = True
        later = {
            **first_in_window,
            "lastModified": _stamp(datetime.now(UTC)),
        }
        upstream.put("cve", [later])

    upstream.proxy.rules.append(leave_window)
    second = _sync(upstream, store_url, kinds=("cves",), page_size=3)
    assert moved["done"]
    # Every record but the one that left is current; that one comes with the next run.
    mirror = {cve["id"]: cve for cve in _records(store_url, "cves")}
    current = {cve["id"]: cve for cve in _records(upstream.url, "cves")}
    stale = sorted(i for i in current if current[i] != mirror.get(i))
    assert stale == [first_in_window["id"]]
    starts = [
        int(seen.query["startIndex"])
        for seen in upstream.proxy.seen
        if "lastModStartDate" in seen.query and seen.number > 1
    ]
    assert 2 in starts[starts.index(3) :], f"no step back after the window shrank: {starts}"
    assert second.kinds[0].fetched >= 10
    _sync(upstream, store_url, kinds=("cves",))
    assert_mirrored(upstream.url, store_url, ("cves",))


def test_a_backfill_upstream_is_brought_exactly_by_the_change_cursor(
    upstream: Upstream, store_url: str, tmp_path: Path
) -> None:
    """Records imported upstream with an old `lastModified` (a backfill) reach a mirror
    that follows the change cursor, and only they; date windows never see them."""
    by_date = f"sqlite:///{tmp_path / 'by-date.db'}"
    first = _sync(upstream, store_url, change_cursor=True)
    assert first.ok
    assert all(kind.full_load for kind in first.kinds)
    assert _sync(upstream, by_date).ok
    assert_mirrored(upstream.url, store_url)

    cves = _records(upstream.url, "cves")
    old = "2001-02-03T04:05:06.000"
    backfill = [
        {**cves[index], "id": f"CVE-2001-{9000 + index}", "published": old, "lastModified": old}
        for index in range(3)
    ]
    upstream.put("cve", backfill)
    source = _records(upstream.url, "source")[0]
    upstream.put(
        "source", [{**source, "name": "backfilled", "lastModified": "2019-09-09T16:18:46.000"}]
    )

    before = upstream.proxy.count
    second = _sync(upstream, store_url, change_cursor=True)
    pages = [
        seen for seen in upstream.proxy.seen[before:] if seen.query.get("resultsPerPage") != "1"
    ]
    assert pages
    assert all("sinceGeneration" in seen.query for seen in pages)
    by_kind = {kind.kind: kind for kind in second.kinds}
    assert (by_kind["cves"].fetched, by_kind["cves"].counts.added) == (3, 3)
    assert (by_kind["source"].fetched, by_kind["source"].counts.updated) == (1, 1)
    for kind in ("cvehistory", "cpes", "cpematch"):
        assert by_kind[kind].fetched == 0, kind
    assert_mirrored(upstream.url, store_url)

    # The same backfill is invisible to lastModified windows.
    assert _sync(upstream, by_date).ok
    mirrored = {record["id"] for record in _records(by_date, "cves")}
    assert mirrored.isdisjoint(record["id"] for record in backfill)

    # Nothing new upstream: the next run reads nothing but its probes.
    third = _sync(upstream, store_url, change_cursor=True)
    assert all(kind.fetched == 0 for kind in third.kinds)
