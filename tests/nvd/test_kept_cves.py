"""The SQLite store's `cveId` look-up keeps the records it decoded for the generation it
read them at (`KeptCves`): a record written since, by this connection, another store of
the process or another process, is never answered from what was kept."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from tests.nvd.test_store import SAMPLE, facts, revised

from assay.nvd.storage._records import unpack
from assay.nvd.storage.sqlite import SqliteStore

TARGET = SAMPLE[3]


def _description(record: bytes | None) -> str:
    assert record is not None
    return str(json.loads(record)["descriptions"][0]["value"])


def _store(tmp_path: Path) -> SqliteStore:
    store = SqliteStore(f"sqlite:///{tmp_path / 'store.db'}")
    store.upsert_cves(facts(SAMPLE[:10]))
    return store


def test_a_record_read_twice_is_the_same_and_kept(tmp_path: Path) -> None:
    store = _store(tmp_path)
    try:
        first = store.cve_with_generation(TARGET["id"])
        assert _description(first[1]) == TARGET["descriptions"][0]["value"]
        assert store._kept_cves.get_many(first[0], [TARGET["id"]]) == {TARGET["id"]: first[1]}
        assert store.cve_with_generation(TARGET["id"]) == first
        assert store.cve_with_generation("CVE-1999-99999") == (first[0], None)
    finally:
        store.close()


def test_writes_here_beside_and_elsewhere_move_the_answer(tmp_path: Path) -> None:
    store = _store(tmp_path)
    beside = SqliteStore(store.url)
    try:
        store.cve_with_generation(TARGET["id"])
        writes = ((store, "2026-03-01", "written here"), (beside, "2026-04-01", "written beside"))
        for writer, day, text in writes:
            writer.upsert_cves(facts([revised(TARGET, f"{day}T00:00:00.000", text)]))
            generation, record = store.cve_with_generation(TARGET["id"])
            assert _description(record) == text
            assert generation == int(store.get_meta("generation") or 0)
        # Another process, through SQLite alone.
        revised_record = revised(TARGET, "2026-05-01T00:00:00.000", "written elsewhere")
        script = (
            "import sys, json; from assay.nvd.storage.sqlite import SqliteStore\n"
            "from tests.nvd.test_store import facts\n"
            "s = SqliteStore(sys.argv[1]); s.upsert_cves(facts([json.loads(sys.argv[2])]))\n"
            "s.close()\n"
        )
        subprocess.run(
            [sys.executable, "-c", script, store.url, json.dumps(revised_record)], check=True
        )
        assert _description(store.cve_with_generation(TARGET["id"])[1]) == "written elsewhere"
    finally:
        beside.close()
        store.close()


def test_a_change_by_plain_sqlite_is_seen(tmp_path: Path) -> None:
    """Even a write that bypasses assay (the generation moved, the record replaced) is
    seen at once: the look-up follows the database's own change counter."""
    store = _store(tmp_path)
    try:
        generation, _ = store.cve_with_generation(TARGET["id"])
        connection = sqlite3.connect(tmp_path / "store.db")
        with connection:
            connection.execute(
                "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'"
            )
            connection.execute("UPDATE cve SET record = ? WHERE cve_id = ?", (b"{}", TARGET["id"]))
        connection.close()
        assert store.cve_with_generation(TARGET["id"]) == (generation + 1, b"{}")
    finally:
        store.close()


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(min_value=0, max_value=9)), max_size=12))
def test_every_answer_is_what_the_store_holds(steps: list[tuple[bool, int]]) -> None:
    """Reads and writes interleaved: each look-up answers what a fresh read finds."""
    with tempfile.TemporaryDirectory() as folder:
        store = _store(Path(folder))
        fresh = SqliteStore(store.url)
        try:
            for number, (write, index) in enumerate(steps):
                cve = SAMPLE[index]
                if write:
                    day = f"2027-01-{number + 1:02d}T00:00:00.000"
                    store.upsert_cves(facts([revised(cve, day, f"text {number}")]))
                row = (
                    fresh._connection()
                    .execute("SELECT record FROM cve WHERE cve_id = ?", (cve["id"],))
                    .fetchone()
                )
                assert store.cve_with_generation(cve["id"])[1] == unpack(row[0])
        finally:
            fresh.close()
            store.close()
