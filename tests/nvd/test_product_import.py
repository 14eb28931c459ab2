"""Importing CPE products, match criteria and change history from every accepted form:
API responses, NVD's 2.0 feed archives (`nvdcpe-2.0.tar.gz`, `nvdcpematch-2.0.tar.gz`)
and their chunk files, JSON Lines, `.gz` and `.zip`; on every backend.

Archives are built here from the real records, in NVD's layout.
"""

from __future__ import annotations

import gzip
import io
import tarfile
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from tests.nvd.conftest import CPEMATCH_FILE, CPES_FILE, HISTORY_FILE, response

from assay._cli import main
from assay.nvd.cpe_query import CpeQuery
from assay.nvd.cpematch_query import CpeMatchQuery
from assay.nvd.history_query import HistoryQuery
from assay.nvd.ingest.importer import Importer
from assay.nvd.jsonenc import encode
from assay.nvd.storage import Store, open_store
from assay.nvd.storage.interface import UpsertCounts

CPE_RESPONSE = response(CPES_FILE)
MATCH_RESPONSE = response(CPEMATCH_FILE)
HISTORY_RESPONSE = response(HISTORY_FILE)
PRODUCTS = [item["cpe"] for item in CPE_RESPONSE["products"]]
CRITERIA = [item["matchString"] for item in MATCH_RESPONSE["matchStrings"]]
CHANGES = [item["change"] for item in HISTORY_RESPONSE["cveChanges"]]


@pytest.fixture
def store(store_url: str) -> Iterator[Store]:
    opened = open_store(store_url)
    yield opened
    opened.close()


def chunk(kind: str, items: list[dict[str, Any]], start: int, total: int) -> bytes:
    """One chunk file of NVD's 2.0 feed archives: an API-shaped page."""
    list_key, wrapper, format_name = {
        "cpe": ("products", "cpe", "NVD_CPE"),
        "cpematch": ("matchStrings", "matchString", "NVD_CPEMatchString"),
    }[kind]
    return encode(
        {
            "resultsPerPage": len(items),
            "startIndex": start,
            "totalResults": total,
            "format": format_name,
            "version": "2.0",
            "timestamp": "2024-06-01T00:00:00.000",
            list_key: [{wrapper: item} for item in items],
        }
    )


def feed_archive(path: Path, kind: str, items: list[dict[str, Any]], size: int) -> Path:
    """`nvdcpe-2.0.tar.gz` / `nvdcpematch-2.0.tar.gz`: a folder of numbered chunks."""
    stem = {"cpe": "nvdcpe-2.0", "cpematch": "nvdcpematch-2.0"}[kind]
    with tarfile.open(path, "w:gz") as archive:
        for number, start in enumerate(range(0, len(items), size)):
            data = chunk(kind, items[start : start + size], start, len(items))
            info = tarfile.TarInfo(f"{stem}-chunks/{stem}-chunk-{number:05d}.json")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


def imported(store: Store, *paths: Path) -> dict[str, UpsertCounts]:
    report = Importer(store, batch_size=700).import_files(paths)
    assert report.ok, report.problems
    return report.counts


def all_records(store: Store) -> tuple[list[bytes], list[bytes], list[bytes]]:
    return (
        store.search_cpes(CpeQuery()).records,
        store.search_match_strings(CpeMatchQuery()).records,
        store.search_changes(HistoryQuery()).records,
    )


def test_api_responses_are_imported_byte_for_byte_and_idempotently(store: Store) -> None:
    counts = imported(store, CPES_FILE, CPEMATCH_FILE, HISTORY_FILE)
    assert counts == {
        "cpe": UpsertCounts(added=10000),
        "cpematch": UpsertCounts(added=6),
        "change": UpsertCounts(added=4),
    }
    products, criteria, changes = all_records(store)
    originals = {
        gzip.decompress(path.read_bytes()) for path in (CPES_FILE, CPEMATCH_FILE, HISTORY_FILE)
    }
    for record in [*products[::97], *criteria, *changes]:
        assert any(record in original for original in originals)
    again = imported(store, CPES_FILE, CPEMATCH_FILE, HISTORY_FILE)
    assert again["cpe"] == UpsertCounts(unchanged=10000)
    assert again["change"] == UpsertCounts(unchanged=4)


def test_feed_archives_and_their_chunks(store: Store, tmp_path: Path) -> None:
    cpe_archive = feed_archive(tmp_path / "nvdcpe-2.0.tar.gz", "cpe", PRODUCTS, 3000)
    match_archive = feed_archive(tmp_path / "nvdcpematch-2.0.tar.gz", "cpematch", CRITERIA, 4)
    with tarfile.open(cpe_archive) as archive:
        assert [m.name for m in archive.getmembers()] == [
            f"nvdcpe-2.0-chunks/nvdcpe-2.0-chunk-{n:05d}.json" for n in range(4)
        ]
    counts = imported(store, cpe_archive, match_archive)
    assert counts == {"cpe": UpsertCounts(added=10000), "cpematch": UpsertCounts(added=6)}
    # A chunk file on its own, plain and gzipped, is an ordinary response.
    plain = tmp_path / "nvdcpe-2.0-chunk-00001.json"
    plain.write_bytes(chunk("cpe", PRODUCTS[3000:6000], 3000, 10000))
    packed = tmp_path / "nvdcpematch-2.0-chunk-00000.json.gz"
    packed.write_bytes(gzip.compress(chunk("cpematch", CRITERIA, 0, 6)))
    counts = imported(store, plain, packed)
    assert counts == {"cpe": UpsertCounts(unchanged=3000), "cpematch": UpsertCounts(unchanged=6)}


def test_the_same_records_from_any_form_give_the_same_store(store_url: str, tmp_path: Path) -> None:
    reference = open_store(store_url)
    imported(reference, CPES_FILE, CPEMATCH_FILE, HISTORY_FILE)
    expected = all_records(reference)
    reference.close()

    lines = tmp_path / "mixed.jsonl.gz"  # bare and wrapped records of all three kinds
    body = b"".join(
        orjson.dumps({"cpe": p} if n % 2 else p) + b"\n" for n, p in enumerate(PRODUCTS)
    )
    body += b"".join(orjson.dumps({"matchString": m}) + b"\n" for m in CRITERIA)
    body += b"".join(orjson.dumps(c) + b"\n" for c in CHANGES)
    lines.write_bytes(gzip.compress(body))
    zipped = tmp_path / "responses.zip"
    with zipfile.ZipFile(zipped, "w") as archive:
        archive.writestr("b/history.json", orjson.dumps(HISTORY_RESPONSE))
        archive.writestr("a/cpematch.json.gz", gzip.compress(orjson.dumps(MATCH_RESPONSE)))
    for source in ([lines], [zipped, CPES_FILE]):
        folder = tmp_path / f"store-{len(source)}"
        folder.mkdir()
        other = open_store(f"sqlite:///{folder / 'store.db'}")  # and across backends
        imported(other, *source)
        assert all_records(other) == expected
        other.close()


def test_malformed_records_are_rejected_and_the_rest_imported(store: Store, tmp_path: Path) -> None:
    products = [dict(p) for p in PRODUCTS[:20]]
    products[3]["cpeNameId"] = "not-a-uuid"
    products[7]["cpeName"] = "cpe:2.3:a:vendor_only"
    criteria = [dict(m) for m in CRITERIA]
    criteria[1]["created"] = "31/12/2020"
    changes = [dict(c) for c in CHANGES]
    changes[2]["eventName"] = ""
    path = tmp_path / "bad.json"
    path.write_bytes(orjson.dumps({**CPE_RESPONSE, "products": [{"cpe": p} for p in products]}))
    lines = tmp_path / "bad.jsonl"
    lines.write_bytes(
        b"".join(orjson.dumps({"matchString": m}) + b"\n" for m in criteria)
        + b"".join(orjson.dumps({"change": c}) + b"\n" for c in changes)
    )
    report = Importer(store).import_files([path, lines])
    assert report.rejected == 4
    assert report.counts["cpe"].added == 18
    assert report.counts["cpematch"].added == 5
    assert report.counts["change"].added == 3
    text = "\n".join(report.problems)
    assert f"{path} at $.products[3].cpe.cpeNameId: expected a UUID, found 'not-a-uuid'" in text
    assert "$.products[7].cpe.cpeName: a CPE 2.3 name needs all 11 components" in text
    assert f"{lines} at line 2.created: expected a timestamp" in text
    assert "line 9.eventName: expected a non-empty string" in text


def test_a_file_broken_part_way_keeps_only_whole_batches(store: Store, tmp_path: Path) -> None:
    data = gzip.decompress(CPES_FILE.read_bytes())
    cut = data.index(b'{"cpe":', len(data) // 2)
    broken = tmp_path / "truncated.json"
    broken.write_bytes(data[: cut + 40])
    report = Importer(store, batch_size=1000).import_files([broken])
    assert report.failed_files == 1
    assert "the batch in progress was not stored" in report.problems[0]
    stored = store.search_cpes(CpeQuery()).total
    assert stored % 1000 == 0
    assert 0 < stored < 10000


def test_cli_imports_feed_archives(
    store_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    archive = feed_archive(tmp_path / "nvdcpe-2.0.tar.gz", "cpe", PRODUCTS[:2500], 1000)
    code = main(["nvd", "import", "--store", store_url, str(archive), str(HISTORY_FILE)])
    assert code == 0
    err = capsys.readouterr().err
    assert "cpe" in err
    assert "change" in err
    opened = open_store(store_url)
    assert opened.search_cpes(CpeQuery()).total == 2500
    assert opened.search_changes(HistoryQuery()).total == 4
    opened.close()


def test_bundled_data_holds_the_real_products_criteria_and_history() -> None:
    from assay._cli.nvd import bundled_files

    names = {path.name for path in bundled_files()}
    assert {
        "nvd-cpes-2023.json.gz",
        "nvd-cpematch-CVE-2022-32223.json.gz",
        "nvd-history-CVE-2019-1010218.json.gz",
    } <= names
    for path in bundled_files():
        if path.name != "nvd-cves.jsonl.gz":
            twin = {
                "nvd-cpes-2023.json.gz": CPES_FILE,
                "nvd-cpematch-CVE-2022-32223.json.gz": CPEMATCH_FILE,
            }
            if path.name in twin:
                assert path.read_bytes() == twin[path.name].read_bytes()
