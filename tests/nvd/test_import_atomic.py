"""`assay nvd import --atomic`: each file in one transaction, on both stores; without it,
batches are committed as they are written (the default)."""

from __future__ import annotations

import gzip
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from assay.nvd.cve_query import parse_cve_query
from assay.nvd.ingest.importer import Importer
from assay.nvd.storage import open_store

from .conftest import bundled_cves


def _cves(count: int) -> list[dict[str, Any]]:
    lines = gzip.decompress(bundled_cves().read_bytes()).splitlines()[:count]
    return [orjson.loads(line) for line in lines]


def _write(path: Path, records: list[dict[str, Any]], tail: bytes = b"") -> Path:
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records) + tail)
    return path


def _total(url: str, *pairs: tuple[str, str]) -> int:
    store = open_store(url)
    try:
        return store.search_cves(parse_cve_query(pairs)).total
    finally:
        store.close()


def _import(url: str, path: Path, **options: Any) -> Any:
    store = open_store(url)
    try:
        return Importer(store, batch_size=2, **options).import_files([path])
    finally:
        store.close()


def test_a_file_with_a_rejected_record_stores_nothing_with_atomic(
    store_url: str, tmp_path: Path
) -> None:
    records = _cves(7)
    bad = {**records[5], "published": "yesterday"}
    path = _write(tmp_path / "some-bad.jsonl", [*records[:5], bad, records[6]])
    report = _import(store_url, path, atomic=True)
    assert report.rejected == 1
    assert not report.ok
    assert report.counts == {}
    assert _total(store_url) == 0
    report = _import(store_url, path)  # the default: the good records are stored
    assert (report.rejected, report.counts["cve"].added) == (1, 6)
    assert _total(store_url) == 6


def test_a_file_that_fails_part_way_stores_nothing_with_atomic(
    store_url: str, tmp_path: Path, cli: Callable[..., int]
) -> None:
    records = _cves(9)
    path = _write(tmp_path / "cut.jsonl", records[:5], tail=b'{"cve": {"id": "CVE-\n')
    assert (
        cli("nvd", "import", "--store", store_url, "--atomic", "--batch-size", "2", str(path)) == 2
    )
    assert _total(store_url) == 0
    # The store is whole and usable: the next import and every filter work.
    good = _write(tmp_path / "good.jsonl", records[5:])
    assert cli("nvd", "import", "--store", store_url, "--atomic", str(good)) == 0
    assert _total(store_url) == 4
    cve_ids = ",".join(r["id"] for r in records[:5])
    assert _total(store_url, ("cveIds", cve_ids)) == 0
    assert cli("nvd", "import", "--store", store_url, "--batch-size", "2", str(path)) == 2
    assert _total(store_url) == 8  # without --atomic the 2 batches of 2 before the cut stay
