"""A store written by an older schema is brought up to date when opened: the rows the
CVE filters read are rebuilt from the stored records, which are kept as they were."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.conftest import backends, make_store_url
from tests.nvd.test_store import QUERIES, _sample_files, assert_same_answer

from assay.errors import StoreError
from assay.nvd.cve_query import parse_cve_query
from assay.nvd.ingest.importer import Importer
from assay.nvd.storage import Store, open_store

# The derived tables as the previous schema of each backend had them (filled with rows
# that would answer every query wrongly, were they read).
OLD_SQLITE = (
    "1",
    [
        "DROP TABLE cve_facet",
        "DROP TABLE cvss_vector",
        "DROP TABLE cve_criteria",
        "DROP TABLE criteria",
        "CREATE TABLE cve_facet (cve INTEGER NOT NULL, kind TEXT NOT NULL, "
        "value TEXT NOT NULL, grp INTEGER NOT NULL)",
        "INSERT INTO cve_facet SELECT id, 'cwe', 'CWE-79', 0 FROM cve",
        "CREATE TABLE cve_criteria (cve INTEGER NOT NULL, vulnerable INTEGER NOT NULL, "
        "product TEXT NOT NULL)",
        "INSERT INTO cve_criteria SELECT id, 1, 'nothing' FROM cve",
        "UPDATE meta SET value = '1' WHERE key = 'schema'",
    ],
)
# Schema 3 kept each CVE's vector in its own row (indexed there) and its record as
# plain JSON; schema 4 keeps the vectors in `cve_text` and records packed; schema 5 adds
# the lexemes of the vectors (`cve_lexeme`).
OLD_POSTGRES = (
    "3",
    [
        "DROP TABLE cve_lexeme",
        "ALTER TABLE cve ADD COLUMN search_vector TSVECTOR",
        "UPDATE cve SET search_vector = t.search_vector FROM cve_text t WHERE t.id = cve.id",
        "ALTER TABLE cve ALTER COLUMN search_vector SET NOT NULL",
        "DROP TABLE cve_text",
        "CREATE INDEX cve_by_text ON cve USING GIN (search_vector)",
        "DROP TABLE cve_facet",
        "DROP TABLE cvss_vector",
        "DROP TABLE cve_criteria",
        "DROP TABLE criteria",
        "CREATE TABLE cve_facet (cve BIGINT NOT NULL, kind TEXT NOT NULL, "
        "value TEXT NOT NULL, grp INTEGER NOT NULL)",
        "INSERT INTO cve_facet SELECT id, 'cwe', 'CWE-79', 0 FROM cve",
        "CREATE TABLE cve_criteria (cve BIGINT NOT NULL, vulnerable SMALLINT NOT NULL, "
        "product TEXT NOT NULL)",
        "INSERT INTO cve_criteria SELECT id, 1, 'nothing' FROM cve",
        "UPDATE meta SET value = '3' WHERE key = 'schema'",
    ],
)


def _run(url: str, statements: list[str]) -> None:
    if url.startswith("sqlite:"):
        path = url.removeprefix("sqlite:///")
        with sqlite3.connect("/" + path.lstrip("/")) as connection:
            for statement in statements:
                connection.execute(statement)
        return
    import psycopg

    base, schema = url.split("schema=")
    with psycopg.connect(base.rstrip("?&"), autocommit=True) as connection:
        connection.execute(f"SET search_path TO {schema}")
        for statement in statements:
            connection.execute(statement)


def _current_schema(url: str) -> str:
    if url.startswith("sqlite:"):
        from assay.nvd.storage.sqlite import SCHEMA_VERSION

        return SCHEMA_VERSION
    from assay.nvd.storage._postgres_rows import SCHEMA_VERSION as POSTGRES_SCHEMA_VERSION

    return POSTGRES_SCHEMA_VERSION


@pytest.fixture(params=backends())
def old_store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A store of each backend with the sample, turned back into the previous schema."""
    for url in make_store_url(request.param, tmp_path):
        store = open_store(url)
        report = Importer(store).import_files(_sample_files())
        assert report.ok, report.problems
        store.close()
        _run(url, (OLD_SQLITE if request.param == "sqlite" else OLD_POSTGRES)[1])
        if request.param != "sqlite":
            _store_records_plain(url)
        yield url


def _store_records_plain(url: str) -> None:
    """CVE records back in the JSON schema 3 stored."""
    import psycopg

    from assay.nvd.storage._records import unpack

    base, schema = url.split("schema=")
    with psycopg.connect(base.rstrip("?&"), autocommit=True) as connection:
        connection.execute(f"SET search_path TO {schema}")
        rows = connection.execute("SELECT id, record FROM cve", binary=True).fetchall()
        assert rows
        assert all(bytes(record)[:1] != b"{" for _, record in rows)  # (stored packed)
        with connection.cursor() as cursor:
            cursor.executemany(
                "UPDATE cve SET record = %s WHERE id = %s",
                [(unpack(bytes(record)), row_id) for row_id, record in rows],
            )


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    for url in make_store_url("sqlite", tmp_path_factory.mktemp("reference")):
        opened = open_store(url)
        Importer(opened).import_files(_sample_files())
        yield opened
        opened.close()


def test_an_older_store_answers_every_query_as_a_new_one(
    old_store_url: str, reference: Store
) -> None:
    store = open_store(old_store_url)
    try:
        generation = store.get_meta("generation")
        assert store.get_meta("schema") == _current_schema(old_store_url)
        for name, pairs in QUERIES.items():
            assert_same_answer(store, reference, parse_cve_query(pairs), name)
    finally:
        store.close()
    # Opened again, nothing is rebuilt a second time.
    store = open_store(old_store_url)
    try:
        assert store.get_meta("generation") == generation
    finally:
        store.close()


def _criteria_rows(path: Path) -> int:
    connection = sqlite3.connect(path)
    try:
        return int(connection.execute("SELECT count(*) FROM cve_criteria").fetchone()[0])
    finally:
        connection.close()


def test_a_schema_2_sqlite_store_is_relabelled_without_a_rebuild(tmp_path: Path) -> None:
    """Schema 3 only allows records of stored format 3: a schema 2 store keeps its rows and
    its generation, and is labelled 3 so that an assay reading schema 2 refuses it."""
    url = f"sqlite:///{tmp_path / 'store.db'}"
    store = open_store(url)
    Importer(store).import_files(_sample_files())
    generation = store.get_meta("generation")
    store.close()
    _run(url, ["UPDATE meta SET value = '2' WHERE key = 'schema'"])
    before = _criteria_rows(tmp_path / "store.db")
    store = open_store(url)
    try:
        assert store.get_meta("schema") == "3"
        assert store.get_meta("generation") == generation
    finally:
        store.close()
    assert _criteria_rows(tmp_path / "store.db") == before


def test_a_store_of_a_newer_schema_is_refused_by_name(store_url: str) -> None:
    open_store(store_url).close()
    _run(store_url, ["UPDATE meta SET value = '99' WHERE key = 'schema'"])
    with pytest.raises(StoreError, match="schema '99'"):
        open_store(store_url)


def test_records_an_older_schema_stored_are_the_same_records_to_a_new_import(
    old_store_url: str,
) -> None:
    """Whatever form a record was stored in (plain JSON by PostgreSQL's schema 3), the
    same record imported again is no change: no rewrite, no new generation."""
    store = open_store(old_store_url)
    try:
        generation = store.get_meta("generation")
        report = Importer(store).import_files(_sample_files())
        assert report.ok, report.problems
        assert store.get_meta("generation") == generation
    finally:
        store.close()


def test_a_schema_4_postgres_store_gets_the_lexemes_of_its_vectors(tmp_path: Path) -> None:
    if "postgres" not in backends():
        pytest.skip("PostgreSQL only")
    for url in make_store_url("postgres", tmp_path):
        store = open_store(url)
        assert Importer(store).import_files(_sample_files()).ok
        store.close()
        _run(url, ["DROP TABLE cve_lexeme", "UPDATE meta SET value = '4' WHERE key = 'schema'"])
        store = open_store(url)
        try:
            assert store.get_meta("schema") == _current_schema(url)
            with store._using("testing") as connection:  # type: ignore[attr-defined]
                missing = connection.execute(
                    "SELECT count(*) FROM (SELECT DISTINCT unnest(tsvector_to_array("
                    "search_vector)) AS lexeme FROM cve_text) v "
                    "WHERE NOT EXISTS (SELECT 1 FROM cve_lexeme l WHERE l.lexeme = v.lexeme)"
                ).fetchone()
                held = connection.execute("SELECT count(*) FROM cve_lexeme").fetchone()
            assert missing == (0,)
            assert held is not None
            assert held[0] > 0
        finally:
            store.close()
