"""`assay serve` says when PostgreSQL's buffer cache cannot hold the full-text table and
its index (`_postgres_buffers`): the sizes come from the server itself, a SQLite store has
none, and a real server with a small `shared_buffers` gets the warning at start."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import psycopg
import pytest
from tests.conftest import POSTGRES_URL, backends, make_store_url
from tests.replication import Cluster, ReplicationUnavailable, throwaway_primary
from tests.web.test_serve import free_port

from assay._cli.nvd import bundled_files
from assay.nvd.ingest.importer import Importer
from assay.nvd.storage import buffer_fit, open_store
from assay.nvd.storage._postgres_buffers import MIB, BufferFit
from assay.web.serving import buffers_warning

pytestmark = pytest.mark.skipif("postgres" not in backends(), reason="PostgreSQL only")


def test_the_advice_holds_the_full_text_with_room_to_spare() -> None:
    default = BufferFit(shared_buffers=128 * MIB, full_text=212 * MIB)
    assert not default.fits
    assert default.advised_mib == 318
    assert BufferFit(shared_buffers=2048 * MIB, full_text=212 * MIB).fits
    assert BufferFit(shared_buffers=128 * 1024, full_text=300 * 1024).advised_mib == 128
    line = buffers_warning(default)
    assert line.startswith("warning: PostgreSQL's shared_buffers (128 MB)")
    assert "(212 MB)" in line
    assert "318 MB or more" in line
    small = buffers_warning(
        BufferFit(shared_buffers=256 * 1024, full_text=700 * 1024), "replica 2: "
    )
    assert small.startswith("warning: replica 2: PostgreSQL's shared_buffers (256 kB)")
    assert "(700 kB)" in small


def test_the_sizes_are_the_servers_and_the_stores(tmp_path: Path) -> None:
    sqlite = open_store(f"sqlite:///{tmp_path / 'store.db'}")
    try:
        assert buffer_fit(sqlite) is None
    finally:
        sqlite.close()
    for url in make_store_url("postgres", tmp_path):
        store = open_store(url)
        try:
            assert Importer(store).import_files(list(bundled_files())).ok
            fit = buffer_fit(store)
        finally:
            store.close()
        schema = url.rsplit("schema=", 1)[1]
        with psycopg.connect(POSTGRES_URL, autocommit=True) as connection:
            row = connection.execute(
                "SELECT pg_size_bytes(current_setting('shared_buffers')), "
                "(SELECT sum(pg_relation_size(c.oid)) FROM pg_class c JOIN pg_namespace n "
                "ON n.oid = c.relnamespace WHERE n.nspname = %s "
                "AND c.relname IN ('cve_text', 'cve_by_text'))",
                (schema,),
            ).fetchone()
        assert row is not None
        assert fit == BufferFit(shared_buffers=int(row[0]), full_text=int(row[1]))
        assert fit.full_text > 100 * 1024  # the bundled CVEs' text and its index


@pytest.fixture
def small_buffers() -> Iterator[Cluster]:
    """A PostgreSQL server of its own whose shared_buffers (256 kB) cannot hold the
    bundled CVEs' full text."""
    try:
        with throwaway_primary(shared_buffers="256kB") as cluster:
            yield cluster
    except ReplicationUnavailable as error:
        pytest.skip(str(error))


@pytest.mark.slow
def test_serve_warns_at_start_when_shared_buffers_cannot_hold_the_full_text(
    small_buffers: Cluster,
) -> None:
    url = small_buffers.url("test")
    store = open_store(url)
    try:
        assert Importer(store).import_files(list(bundled_files())).ok
    finally:
        store.close()
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "assay", "serve", "--store", url, "--port", str(port),
         "--reserve-memory", "0"],
        stderr=subprocess.PIPE, text=True, env={**os.environ, "ASSAY_RESERVE_MIB": "0"},
    )  # fmt: skip
    try:
        assert server.stderr is not None
        assert server.stderr.readline().startswith("assay serving")
        warning = server.stderr.readline()
        assert warning.startswith("warning: PostgreSQL's shared_buffers (256 kB) cannot hold")
        assert "set shared_buffers to 128 MB or more" in warning
        deadline = time.monotonic() + 60
        while True:  # a warning, not a refusal: the server answers
            try:
                answer = httpx.get(
                    f"http://127.0.0.1:{port}/rest/json/cves/2.0?keywordSearch=overflow",
                    timeout=5,
                )
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "the server did not answer"
                time.sleep(0.2)
        assert answer.status_code == 200
        assert answer.json()["totalResults"] > 0
    finally:
        server.terminate()
        server.communicate(timeout=30)  # (and closes the pipe)
