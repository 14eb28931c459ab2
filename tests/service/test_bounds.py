"""A serving process's memory is bounded: SQLite's page caches together, and the
worker threads (each holding a store connection) in number."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from tests.service.servers import serving, thread_count

from assay._cli import main

# In a process of its own: the heap limit is process-wide. Eight connections, each with
# the store's 64 MiB page cache allowed, read a 48 MB table through.
PROBE = """
import os, sqlite3, sys
from pathlib import Path
from assay.nvd.server.bounds import limit_sqlite_heap

def rss_mib():
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) // 1024

path, limit = sys.argv[1], int(sys.argv[2])
if limit:
    assert limit_sqlite_heap(limit) == limit * 2**20
before = rss_mib()
connections = []
for _ in range(8):
    connection = sqlite3.connect(path)
    connection.execute("PRAGMA cache_size = -65536")
    connection.execute("PRAGMA mmap_size = 0")
    assert connection.execute("SELECT sum(length(b)) FROM t").fetchone()[0] == 48 * 2**20
    connections.append(connection)
print(rss_mib() - before)
"""


@pytest.fixture(scope="module")
def big_table(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import os
    import sqlite3

    path = tmp_path_factory.mktemp("heap") / "big.db"
    connection = sqlite3.connect(path)
    connection.execute("CREATE TABLE t (b BLOB)")
    connection.executemany("INSERT INTO t VALUES (?)", ((os.urandom(3072),) for _ in range(16384)))
    connection.commit()
    connection.close()
    return path


def grown(path: Path, limit: int) -> int:
    output = subprocess.run(
        [sys.executable, "-c", PROBE, str(path), str(limit)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return int(output)


def test_the_heap_limit_bounds_every_connection_together(big_table: Path) -> None:
    assert grown(big_table, 0) > 200  # unbounded: each connection caches the table
    assert grown(big_table, 16) < 48  # 16 MiB for all eight


def test_serving_threads_are_bounded(sample_store_url: str, tmp_path: Path) -> None:
    async def burst(base: str) -> None:
        async with httpx.AsyncClient(base_url=base, timeout=60) as client:
            answers = await asyncio.gather(
                *(
                    client.get(
                        "/rest/json/cves/2.0", params={"resultsPerPage": 50, "startIndex": i}
                    )
                    for i in range(40)
                )
            )
        assert {answer.status_code for answer in answers} == {200}

    with serving(sample_store_url, "--threads", "3", folder=tmp_path) as served:
        (worker,) = served.workers()
        before = thread_count(worker)
        asyncio.run(burst(served.base))
        assert thread_count(worker) - before <= 3


def test_serve_refuses_bad_bounds_naming_the_option(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = f"sqlite:///{tmp_path / 'store.db'}"
    for option, value in (("--threads", "0"), ("--sqlite-cache", "-1"), ("--threads", "9999")):
        try:
            code = main(["serve", "--store", store, option, value])
        except SystemExit as exit_:
            code = int(exit_.code or 0)
        assert code == 2
        err = capsys.readouterr().err
        assert option in err
        assert "Traceback" not in err
