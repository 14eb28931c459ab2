"""Snapshots carry every source the store holds (OSV, CVE 5 with CISA's ADP, KEV, EPSS):
a full snapshot makes an exact copy in an empty store, and a delta after an import of each
source carries exactly what that import changed; on both backends."""

from __future__ import annotations

import io
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import orjson
import pytest
from tests.conftest import backends, make_store_url

from assay.cve5.epss import read_scores
from assay.cve5.importer import Cve5Importer
from assay.cve5.kev import read_catalogue
from assay.nvd.storage import Store, open_store
from assay.osv.importer import OsvImporter
from assay.snapshot.format import SnapshotReader
from assay.snapshot.sources import SOURCE_KINDS
from assay.snapshot.store_io import apply_snapshot, export_snapshot

ASSETS = Path(__file__).parent.parent / "assets"
OSV = ASSETS / "osv" / "pypa"
CVE5 = ASSETS / "cve5"
KEV = CVE5 / "kev" / "known_exploited_vulnerabilities.json"
EPSS = CVE5 / "epss" / "epss_scores-sample.csv"


def _cve5_paths() -> list[Path]:
    return sorted(
        path
        for path in CVE5.rglob("*.json")
        if not {"kev", "nvd", "golang-vulndb"} & set(path.parts)
    )


def _fill(store: Store) -> None:
    """Every source beside NVD's, from the real records of tests/assets."""
    report = OsvImporter(store).import_paths([OSV])
    assert report.ok, report.problems
    assert report.added > 10
    with Cve5Importer(cast(Any, store)) as importer:
        for path in _cve5_paths():
            importer.import_path(path)
    assert importer.report.ok, importer.report.problems
    sources = cast(Any, store)
    sources.replace_kev(read_catalogue(KEV.read_bytes(), str(KEV)))
    sources.upsert_epss(read_scores(EPSS.read_bytes(), str(EPSS)))


def _contents(store: Store) -> dict[str, list[bytes]]:
    return {kind.name: sorted(kind.records(store, None)) for kind in SOURCE_KINDS}


def _snapshot(store: Store, since: int | None = None) -> bytes:
    out = io.BytesIO()
    export_snapshot(store, out, since=since)
    return out.getvalue()


def _records(snapshot: bytes) -> dict[str, list[bytes]]:
    reader = SnapshotReader(io.BytesIO(snapshot), "snapshot")
    found = {info.kind: stream.read().splitlines() for info, stream in reader.members()}
    reader.close()
    return found


@pytest.fixture(params=backends())
def urls(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, str]]:
    source_folder, target_folder = tmp_path / "source", tmp_path / "target"
    source_folder.mkdir()
    target_folder.mkdir()
    for source in make_store_url(request.param, source_folder):
        for target in make_store_url(request.param, target_folder):
            yield source, target


def test_a_full_snapshot_and_deltas_copy_every_source(
    urls: tuple[str, str], tmp_path: Path
) -> None:
    source, target = open_store(urls[0]), open_store(urls[1])
    try:
        _fill(source)
        full = _snapshot(source)
        counts = {kind: len(lines) for kind, lines in _records(full).items()}
        assert counts["osv"] == source.count_osv() > 10
        assert counts["cve5"] == cast(Any, source).count_cve5() > 10
        assert counts["kev"] == 36
        assert counts["epss"] == 100
        assert counts["kev-removed"] == 0
        apply_snapshot(target, io.BytesIO(full), "full")
        assert _contents(target) == _contents(source)
        _same_samples(source, target)

        base = source.generation()
        _change_every_source(source, tmp_path)
        delta = _snapshot(source, since=base)
        lines = _records(delta)
        assert {kind: len(found) for kind, found in lines.items() if found} == {
            "osv": 1,
            "cve5": 1,
            "kev": 1,
            "kev-removed": 1,
            "epss": 2,
        }
        assert orjson.loads(lines["kev-removed"][0]) == {"cveID": _KEV_GONE}
        apply_snapshot(target, io.BytesIO(delta), "delta")
        assert _contents(target) == _contents(source)
        _same_samples(source, target)
        assert cast(Any, target).kev_entries([_KEV_GONE]) == {}
        # Nothing changed since: an empty delta.
        assert not any(_records(_snapshot(source, since=source.generation())).values())
    finally:
        source.close()
        target.close()


_KEV_GONE = "CVE-2024-8068"


def _change_every_source(store: Store, folder: Path) -> None:
    sources = cast(Any, store)
    [first] = list(OSV.rglob("PYSEC-2023-57.yaml"))
    lines = first.read_text().splitlines()
    changed = [
        'modified: "2099-01-01T00:00:00Z"' if line.startswith("modified:") else line
        for line in lines
    ]
    path = folder / first.name
    path.write_text("\n".join(changed) + "\n")
    assert OsvImporter(store).import_paths([path]).updated == 1
    record = orjson.loads(_cve5_paths()[0].read_bytes())
    record["cveMetadata"]["dateUpdated"] = "2099-01-01T00:00:00.000Z"
    assert sources.upsert_cve5([_cve5(record)]).updated == 1
    catalogue = orjson.loads(KEV.read_bytes())
    entries = catalogue["vulnerabilities"]
    assert any(e["cveID"] == _KEV_GONE for e in entries)
    catalogue["vulnerabilities"] = [e for e in entries if e["cveID"] != _KEV_GONE]
    catalogue["vulnerabilities"][0]["notes"] = "Changed after the full snapshot."
    counts, removed = sources.replace_kev(read_catalogue(orjson.dumps(catalogue), "kev"))
    assert (counts.updated, removed) == (1, 1)
    text = EPSS.read_text().splitlines()
    later = [
        text[0].replace("2026-08-16", "2026-08-17"),
        text[1],
        *(line.replace(",0.", ",0.9", 1) for line in text[2:4]),
    ]
    assert sources.upsert_epss(read_scores("\n".join(later).encode(), "epss")).updated == 2


def _cve5(record: dict[str, Any]) -> Any:
    from assay.cve5.record import read_record

    return read_record(orjson.dumps(record), "changed")


def _same_samples(source: Store, target: Store) -> None:
    """Records read back through the stores' own look-ups are the same."""
    for store_pair in [(source, target)]:
        left, right = (cast(Any, s) for s in store_pair)
        osv_ids = [orjson.loads(r)["id"] for r in list(source.iter_osv())[:5]]
        for osv_id in osv_ids:
            assert orjson.loads(left.osv_by_id(osv_id)) == orjson.loads(right.osv_by_id(osv_id))
        cve_ids = sorted(left.kev_entries([p.stem for p in _cve5_paths()]))[:5]
        assert left.kev_entries(cve_ids) == right.kev_entries(cve_ids)
        samples = [p.stem for p in _cve5_paths()][:5]
        assert {k: orjson.loads(v) for k, v in left.cve5_records(samples).items()} == {
            k: orjson.loads(v) for k, v in right.cve5_records(samples).items()
        }
        scored = sorted(left.epss_scores(samples + cve_ids))
        assert left.epss_scores(scored) == right.epss_scores(scored)
        assert left.count_cve5() == right.count_cve5()
        assert left.count_osv() == right.count_osv()


@pytest.fixture(params=backends())
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    yield from make_store_url(request.param, tmp_path)


def _drop_change_tracking(url: str) -> None:
    """Make the store one written before change tracking: no `_written` tables."""
    tables = [f"{table}_written" for table in ("osv", "cve5", "kev", "epss")]
    if url.startswith("sqlite:"):
        connection = sqlite3.connect(url.removeprefix("sqlite:///"))
        for table in tables:
            connection.execute(f"DROP TABLE {table}")
        connection.commit()
        connection.close()
        return
    import psycopg

    base, _, schema = url.partition("?schema=")
    with psycopg.connect(base.rstrip("?&"), autocommit=True) as connection:
        for table in tables:
            connection.execute(f"DROP TABLE {schema}.{table}")


def test_a_store_written_before_change_tracking_marks_its_records(store_url: str) -> None:
    """An older store (its sources' rows without `_written` rows) gains them when opened,
    at a new generation: a delta after any earlier generation carries its records."""
    store = open_store(store_url)
    try:
        _fill(store)
        before = store.generation()
    finally:
        store.close()
    _drop_change_tracking(store_url)
    store = open_store(store_url)
    try:
        assert store.generation() == before + 1
        delta = _records(_snapshot(store, since=before))
        assert len(delta["osv"]) == store.count_osv()
        assert len(delta["cve5"]) == cast(Any, store).count_cve5()
        assert len(delta["kev"]) == 36
        assert len(delta["epss"]) == 100
        assert not any(_records(_snapshot(store, since=before + 1)).values())
    finally:
        store.close()
    # Opened again: nothing more to mark.
    store = open_store(store_url)
    try:
        assert store.generation() == before + 1
    finally:
        store.close()


@pytest.mark.parametrize(
    ("member", "bad"),
    [
        ("osv/osv.jsonl", b'{"id": "GHSA-bad", "modified": "not a time"}'),
        ("cve5/cve.jsonl", b'{"dataType": "CVE_RECORD"}'),
        ("cisa/kev.jsonl", b'{"cveID": "CVE-2024-0001"}'),
        ("first/epss.jsonl", b'{"cve": "CVE-2024-0001", "epss": "high"}'),
    ],
    ids=["osv", "cve5", "kev", "epss"],
)
def test_one_refused_record_of_any_source_applies_nothing(
    urls: tuple[str, str], member: str, bad: bytes
) -> None:
    """A snapshot whose last source member holds one bad record (digests consistent):
    refused, and the members before it, NVD's and the other sources', are not kept."""
    from assay.snapshot.format import SnapshotError, SnapshotWriter
    from assay.snapshot.sources import SOURCE_BY_MEMBER

    source, target = open_store(urls[0]), open_store(urls[1])
    try:
        _fill(source)
        writer = SnapshotWriter()
        for kind in SOURCE_KINDS:
            lines = list(kind.records(source, None))
            if kind.member == member:
                lines.append(bad)
            writer.member(kind.member, kind.name, iter(lines))
        out = io.BytesIO()
        writer.write(out, store="s", since=None, generation=9, created="2026-01-01", cursors={})
        with pytest.raises(SnapshotError, match="nothing was applied"):
            apply_snapshot(target, io.BytesIO(out.getvalue()), "bad")
        assert target.generation() == 0
        assert target.count_osv() == 0
        assert not any(_contents(target).values())
        assert member in SOURCE_BY_MEMBER
    finally:
        source.close()
        target.close()
