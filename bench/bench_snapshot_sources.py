"""The cost of the change cursor on the sources beside NVD's: a day of EPSS scores written
with `upsert_epss` (which marks every changed score in `epss_written`), against the floor
of writing the same rows into a bare table, on SQLite and (when reachable) PostgreSQL.

    python -m bench snapshot_sources          100,000 scores
    python -m bench.bench_snapshot_sources 300000

Passes: an empty store (all added), the next day (all changed), the same day again
(nothing changed). Prints seconds and the ratio to the floor of the same run.
"""

from __future__ import annotations

import os
import sqlite3
import sys
import tempfile
import time
import uuid
from pathlib import Path

from assay.cve5.epss import EpssScore, EpssScores
from assay.nvd.storage import open_store

POSTGRES_URL = os.environ.get("ASSAY_BENCH_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")


def _scores(count: int, day: str, scale: float) -> EpssScores:
    return EpssScores(
        "v2025.03.14",
        day,
        tuple(EpssScore(f"CVE-2020-{i:06d}", (i % 1000) / 1000 * scale, 0.5) for i in range(count)),
    )


PASSES = (("2026-01-01", 1.0), ("2026-01-02", 0.9), ("2026-01-02", 0.9))


def _passes(url: str, count: int) -> list[float]:
    store = open_store(url)
    times = []
    try:
        for day, scale in PASSES:
            scores = _scores(count, day, scale)
            started = time.perf_counter()
            store.upsert_epss(scores)  # type: ignore[attr-defined]
            times.append(time.perf_counter() - started)
    finally:
        store.close()
    return times


def _sqlite_floor(folder: Path, count: int) -> float:
    connection = sqlite3.connect(folder / "floor.db")
    connection.execute("CREATE TABLE t (cve_id TEXT PRIMARY KEY, s REAL, p REAL, d TEXT, m TEXT)")
    rows = [
        (s.cve_id, s.score, s.percentile, "2026-01-01", "v") for s in _scores(count, "", 1).scores
    ]
    started = time.perf_counter()
    connection.executemany("INSERT INTO t VALUES (?, ?, ?, ?, ?)", rows)
    connection.commit()
    elapsed = time.perf_counter() - started
    connection.close()
    return elapsed


def _postgres(count: int) -> tuple[list[float], float] | None:
    try:
        import psycopg

        schema = f"bench_{uuid.uuid4().hex[:8]}"
        with psycopg.connect(POSTGRES_URL, autocommit=True) as connection:
            connection.execute(f"CREATE SCHEMA {schema}")
    except Exception as error:  # no PostgreSQL here: SQLite only
        print(f"PostgreSQL not measured: {type(error).__name__}")
        return None
    try:
        times = _passes(f"{POSTGRES_URL}?schema={schema}", count)
        with psycopg.connect(POSTGRES_URL, autocommit=True) as connection:
            connection.execute(
                f"CREATE TABLE {schema}.t (cve_id TEXT PRIMARY KEY, s FLOAT8, p FLOAT8, d TEXT, m TEXT)"
            )
            rows = [
                (s.cve_id, s.score, s.percentile, "2026-01-01", "v")
                for s in _scores(count, "", 1).scores
            ]
            started = time.perf_counter()
            with connection.cursor() as cursor, cursor.copy(f"COPY {schema}.t FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
            floor = time.perf_counter() - started
    finally:
        with psycopg.connect(POSTGRES_URL, autocommit=True) as connection:
            connection.execute(f"DROP SCHEMA {schema} CASCADE")
    return times, floor


def _print(backend: str, times: list[float], floor: float) -> None:
    cells = ", ".join(f"{seconds:.2f} s ({seconds / floor:.1f}x)" for seconds in times)
    print(f"{backend}: floor {floor:.2f} s; added, changed, unchanged: {cells}")


def run(args: list[str]) -> None:
    count = int(args[0]) if args else 100_000
    print(f"{count:,} EPSS scores; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as folder:
        times = _passes(f"sqlite:///{folder}/store.db", count)
        _print("SQLite", times, _sqlite_floor(Path(folder), count))
    measured = _postgres(count)
    if measured is not None:
        _print("PostgreSQL", *measured)


if __name__ == "__main__":
    run(sys.argv[1:])
