"""OSV records in the store, on every backend: found by id, package, alias and commit;
replaced only by a record at least as new; the generation moves with every change."""

from __future__ import annotations

import sqlite3

import orjson
import psycopg
import pytest
from tests.osv.conftest import OSV_ASSETS, valid_record_files

from assay.nvd.storage import Store, open_store
from assay.osv.record import OsvRecord, read_record


def _records() -> list[OsvRecord]:
    return [read_record(path.read_bytes(), str(path)) for path in valid_record_files()]


def _edited(record: OsvRecord, **changes: object) -> OsvRecord:
    document = orjson.loads(record.raw)
    document.update(changes)
    return read_record(orjson.dumps(document), f"{record.id}.json")


def _ids(found: list[bytes]) -> list[str]:
    return [orjson.loads(raw)["id"] for raw in found]


@pytest.fixture
def store(store_url: str) -> Store:
    opened = open_store(store_url)
    yield opened  # type: ignore[misc]
    opened.close()


def test_records_are_found_by_id_package_alias_and_commit(store: Store) -> None:
    records = _records()
    counts = store.upsert_osv(records)
    distinct = len({r.id for r in records})  # (one GHSA is in two of the sample's sources)
    assert (counts.added, counts.updated) == (distinct, 0)
    assert counts.unchanged == len(records) - distinct
    assert store.count_osv() == distinct
    (first,) = [r for r in records if r.id == "PYSEC-2021-335"]
    assert store.osv_by_id("PYSEC-2021-335") == first.raw
    assert store.osv_by_id("PYSEC-0000-0") is None
    # PEP 503: the name is found however it is spelled.
    assert _ids(store.osv_for_package("PyPI", "URLLib3")) == sorted(
        [
            "GHSA-g4mx-q9vg-27p4",
            *(path.stem for path in (OSV_ASSETS / "pypa" / "vulns" / "urllib3").glob("*.yaml")),
        ]
    )
    assert "PYSEC-2021-335" in _ids(store.osv_for_package("PyPI", "AccessControl"))
    # A release-qualified ecosystem is found under it and under its ecosystem.
    assert "CVE-2018-5407" in _ids(store.osv_for_package("Alpine", "openssl"))
    assert "CVE-2018-5407" in _ids(store.osv_for_package("Alpine:v3.3", "openssl"))
    assert store.osv_for_package("Alpine:v9.9", "openssl") == []
    assert "PYSEC-2021-335" in _ids(store.osv_by_alias("CVE-2021-32807"))
    assert "GHSA-g4mx-q9vg-27p4" in _ids(store.osv_by_alias("CVE-2023-45803"))
    assert _ids(store.osv_for_commit("775F2B3D8D6D44F3312F9911DCF70B203268F387")) == []
    many = store.osv_for_packages([("PyPI", "requests"), ("Go", "nothing"), ("PyPI", "requests")])
    assert set(many) == {("PyPI", "requests"), ("Go", "nothing")}
    assert many[("Go", "nothing")] == []
    assert len(many[("PyPI", "requests")]) == 4


def test_commits_of_git_ranges_are_indexed(store: Store) -> None:
    path = OSV_ASSETS / "misc" / "dependency-track" / "osv-git-commit-hash-ranges.json"
    store.upsert_osv([read_record(path.read_bytes(), str(path))])
    assert _ids(store.osv_for_commit("775F2B3D8D6D44F3312F9911DCF70B203268F387")) == [
        "OSV-2021-1820"
    ]
    assert store.osv_for_commit("2cfc1d7e12adf87a28ac78abb32233cf39c6d54a") == []


def test_only_a_record_at_least_as_new_replaces_and_the_generation_moves(store: Store) -> None:
    (record,) = [r for r in _records() if r.id == "PYSEC-2021-335"]
    start = store.generation()
    store.upsert_osv([record])
    after_add = store.generation()
    assert after_add > start
    older = _edited(record, modified="2020-01-01T00:00:00Z", aliases=["CVE-0000-1"])
    assert store.upsert_osv([older]).unchanged == 1
    assert store.generation() == after_add
    assert store.osv_by_id(record.id) == record.raw
    assert store.upsert_osv([record]).unchanged == 1  # the same bytes: nothing to do
    assert store.generation() == after_add
    newer = _edited(record, modified="2030-01-01T00:00:00Z", aliases=["CVE-0000-2"])
    assert store.upsert_osv([newer]).updated == 1
    assert store.generation() > after_add
    assert store.osv_by_id(record.id) == newer.raw
    assert store.osv_by_alias("CVE-2021-32807") == []  # the old index rows are gone
    assert _ids(store.osv_by_alias("CVE-0000-2")) == [record.id]
    # In one batch, the latest of an id wins whatever the order.
    latest = _edited(record, modified="2031-01-01T00:00:00Z")
    store.upsert_osv([latest, newer])
    assert store.osv_by_id(record.id) == latest.raw


def test_withdrawn_records_stop_matching_but_stay_readable(store: Store) -> None:
    (record,) = [r for r in _records() if r.id == "PYSEC-2021-335"]
    store.upsert_osv([record])
    withdrawn = _edited(record, modified="2030-01-01T00:00:00Z", withdrawn="2030-01-01T00:00:00Z")
    store.upsert_osv([withdrawn])
    assert store.osv_for_package("PyPI", "accesscontrol") == []
    assert store.osv_by_alias("CVE-2021-32807") == []
    assert store.osv_by_id(record.id) == withdrawn.raw


def test_meta_is_written_with_the_records(store: Store) -> None:
    (record,) = [r for r in _records() if r.id == "PYSEC-2021-335"]
    store.upsert_osv([record], meta={"osv.sync.PyPI": "checkpoint"})
    assert store.get_meta("osv.sync.PyPI") == "checkpoint"


def test_a_store_older_than_the_osv_tables_gains_them(store_url: str) -> None:
    store = open_store(store_url)
    store.set_meta("kept", "yes")
    store.close()
    drop = [f"DROP TABLE {t}" for t in ("osv", "osv_package", "osv_alias", "osv_commit")]
    if store_url.startswith("sqlite:"):
        path = "/" + store_url.removeprefix("sqlite:///").lstrip("/")
        with sqlite3.connect(path) as connection:
            for statement in drop:
                connection.execute(statement)
    else:
        base, schema = store_url.split("?schema=")
        with psycopg.connect(base, autocommit=True) as connection:
            connection.execute(f"SET search_path TO {schema}")
            for statement in drop:
                connection.execute(statement)
    reopened = open_store(store_url)
    try:
        assert reopened.get_meta("kept") == "yes"
        assert reopened.count_osv() == 0
        (record,) = [r for r in _records() if r.id == "PYSEC-2021-335"]
        assert reopened.upsert_osv([record]).added == 1
    finally:
        reopened.close()
