"""The SQLite store's stored record formats (`assay.nvd.storage._records`)."""

from __future__ import annotations

import gzip
import sqlite3
import zlib
from importlib import resources
from pathlib import Path

import lz4.block
import orjson
import pytest
import zstandard
from hypothesis import given
from hypothesis import strategies as st

from assay.nvd.cve_query import parse_cve_query
from assay.nvd.cve_record import cve_facts
from assay.nvd.storage import open_store
from assay.nvd.storage._records import (
    DICTIONARY_V1,
    DICTIONARY_V2,
    DICTIONARY_V3,
    FORMAT_DEFLATE_V1,
    FORMAT_LZ4_V3,
    FORMAT_ZSTD_V2,
    MAX_RECORD_BYTES,
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


def _pack_v2(record: bytes) -> bytes:
    """Format 2 as stores written before format 3 hold it."""
    compressor = zstandard.ZstdCompressor(
        level=3,
        dict_data=DICTIONARY_V2,
        write_checksum=False,
        write_content_size=True,
        write_dict_id=False,
    )
    return FORMAT_ZSTD_V2 + compressor.compress(record)


def test_new_records_are_written_in_format_3_and_read_back_exactly() -> None:
    for record in SAMPLE:
        stored = pack(record)
        assert stored[:1] == FORMAT_LZ4_V3
        assert unpack(stored) == record


def test_format_3_is_an_lz4_block_against_the_v2_dictionary_bytes() -> None:
    """The stored form is the interface: the length prefix and block as `lz4.block`
    writes them, the dictionary the committed file's bytes."""
    record = SAMPLE[0]
    assert pack(record) == FORMAT_LZ4_V3 + lz4.block.compress(record, dict=DICTIONARY_V3)
    assert DICTIONARY_V2.as_bytes() == DICTIONARY_V3
    assert int.from_bytes(pack(record)[1:5], "little") == len(record)


def test_the_dictionary_compresses_real_records_at_least_2_5x() -> None:
    raw = sum(len(record) for record in SAMPLE)
    stored = sum(len(pack(record)) for record in SAMPLE)
    assert raw / stored >= 2.5


@given(st.binary(max_size=20_000))
def test_any_bytes_round_trip(record: bytes) -> None:
    assert unpack(pack(record)) == record


@given(st.lists(st.sampled_from(SAMPLE), min_size=1, max_size=4), st.binary(max_size=200))
def test_records_made_of_real_vocabulary_round_trip(parts: list[bytes], noise: bytes) -> None:
    record = noise.join(parts)
    assert unpack(pack(record)) == record


def test_formats_1_2_and_plain_json_stay_readable() -> None:
    for record in SAMPLE[:50]:
        assert unpack(_pack_v1(record)) == record
        assert unpack(_pack_v2(record)) == record
        assert unpack(record) == record  # plain JSON, as the first stores kept it


@pytest.mark.parametrize(
    ("stored", "message"),
    [
        (b"\x07abc", "unknown format"),
        (FORMAT_DEFLATE_V1 + b"\x00", "truncated"),
        (FORMAT_ZSTD_V2 + b"not a zstd frame", "damaged stored record"),
        (FORMAT_LZ4_V3 + b"\x10", "no plausible length"),
        (FORMAT_LZ4_V3 + (MAX_RECORD_BYTES + 1).to_bytes(4, "little") + b"x", "plausible"),
        (FORMAT_LZ4_V3 + (100).to_bytes(4, "little") + b"\xff\xff", "damaged stored record"),
        (FORMAT_LZ4_V3 + pack(SAMPLE[0])[1:-1], "damaged stored record"),
        (FORMAT_LZ4_V3 + (1).to_bytes(4, "little") + pack(SAMPLE[0])[5:], "damaged"),
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
    # Rewrite rows as format 1, plain JSON and format 2, as older versions of assay
    # left them.
    with sqlite3.connect(tmp_path / "mixed.db") as connection:
        rows = connection.execute("SELECT id, record FROM cve ORDER BY id").fetchall()
        for index, (row_id, stored) in enumerate(rows):
            record = unpack(stored)
            older = (_pack_v1(record), record, _pack_v2(record), stored)[index % 4]
            connection.execute("UPDATE cve SET record = ? WHERE id = ?", (older, row_id))
    store = open_store(url)
    try:
        page = store.search_cves(parse_cve_query([]))
        assert sorted(page.records) == sorted(SAMPLE[:30])
    finally:
        store.close()
