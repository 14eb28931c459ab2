"""The SQLite store's stored record formats (`assay.nvd.storage._records`)."""

from __future__ import annotations

import gzip
import sqlite3
import zlib
from importlib import resources
from pathlib import Path

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from assay.nvd.cve_query import parse_cve_query
from assay.nvd.cve_record import cve_facts
from assay.nvd.storage import open_store
from assay.nvd.storage._records import (
    DICTIONARY_V1,
    FORMAT_DEFLATE_V1,
    FORMAT_ZSTD_V2,
    DamagedRecord,
    pack,
    unpack,
)


def _sample_records() -> list[bytes]:
    data = resources.files("assay.data").joinpath("nvd-cves.jsonl.gz")
    with data.open("rb") as raw, gzip.open(raw) as lines:
        return [cve_facts(orjson.loads(line)).record for line in lines if line.strip()]


SAMPLE = _sample_records()


def _pack_v1(record: bytes) -> bytes:
    """Format 1 as stores written before format 2 hold it."""
    compressor = zlib.compressobj(6, zlib.DEFLATED, -15, 9, zlib.Z_DEFAULT_STRATEGY, DICTIONARY_V1)
    return FORMAT_DEFLATE_V1 + compressor.compress(record) + compressor.flush()


def test_new_records_are_written_in_format_2_and_read_back_exactly() -> None:
    for record in SAMPLE:
        stored = pack(record)
        assert stored[:1] == FORMAT_ZSTD_V2
        assert unpack(stored) == record


def test_the_dictionary_compresses_real_records_at_least_4x() -> None:
    raw = sum(len(record) for record in SAMPLE)
    stored = sum(len(pack(record)) for record in SAMPLE)
    assert raw / stored >= 4.0


@given(st.binary(max_size=20_000))
def test_any_bytes_round_trip(record: bytes) -> None:
    assert unpack(pack(record)) == record


def test_format_1_and_plain_json_stay_readable() -> None:
    for record in SAMPLE[:50]:
        assert unpack(_pack_v1(record)) == record
        assert unpack(record) == record  # plain JSON, as the first stores kept it


@pytest.mark.parametrize(
    ("stored", "message"),
    [
        (b"\x07abc", "unknown format"),
        (FORMAT_DEFLATE_V1 + b"\x00", "truncated"),
        (FORMAT_ZSTD_V2 + b"not a zstd frame", "damaged stored record"),
    ],
)
def test_damaged_records_are_named(stored: bytes, message: str) -> None:
    with pytest.raises(DamagedRecord, match=message):
        unpack(stored)


def test_a_store_with_records_of_every_format_serves_them_all(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'mixed.db'}"
    store = open_store(url)
    store.upsert_cves([cve_facts(orjson.loads(record)) for record in SAMPLE[:30]])
    store.close()
    # Rewrite a third of the rows as format 1 and a third as plain JSON, as older
    # versions of assay left them.
    with sqlite3.connect(tmp_path / "mixed.db") as connection:
        rows = connection.execute("SELECT id, record FROM cve ORDER BY id").fetchall()
        for index, (row_id, stored) in enumerate(rows):
            record = unpack(stored)
            older = _pack_v1(record) if index % 3 == 0 else record if index % 3 == 1 else stored
            connection.execute("UPDATE cve SET record = ? WHERE id = ?", (older, row_id))
    store = open_store(url)
    try:
        page = store.search_cves(parse_cve_query([]))
        assert sorted(page.records) == sorted(SAMPLE[:30])
    finally:
        store.close()
