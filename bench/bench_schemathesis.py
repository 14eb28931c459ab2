"""Schemathesis at volume: at least 10,000 generated requests against `/openapi.json`'s
operations on each store (SQLite, and PostgreSQL when one answers), counting server
errors and answers the description does not allow (both must be 0).

    python -m bench schemathesis
    python -m bench.bench_schemathesis --requests 20000 --postgres postgresql://...

The stores hold the bundled sample (CVEs, products, match criteria, history). No peer:
the figure is the count of failures, and the requests per second of the in-process run.
"""

from __future__ import annotations

import argparse
import math
import os
import tempfile
import time
import uuid
from pathlib import Path

from bench._fuzz import fuzz

OPERATIONS_TIMES_MODES = 18  # 9 documented operations (NVD 6, osv.dev 3), positive and negative
DEFAULT_POSTGRES = os.environ.get(
    "ASSAY_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test"
)


def run(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.bench_schemathesis")
    parser.add_argument("--requests", type=int, default=10_000, help="at least, per store")
    parser.add_argument("--postgres", default=DEFAULT_POSTGRES, help="server for the 2nd store")
    args = parser.parse_args(argv)
    examples = math.ceil(args.requests / OPERATIONS_TIMES_MODES)
    with tempfile.TemporaryDirectory() as folder:
        _one("sqlite", f"sqlite:///{Path(folder) / 'fuzz.db'}", examples)
    schema = f"assay_fuzz_{uuid.uuid4().hex[:10]}"
    try:
        import psycopg

        with psycopg.connect(args.postgres, autocommit=True) as connection:
            connection.execute(f"CREATE SCHEMA {schema}")
    except Exception as error:  # no server: said, and the SQLite figure stands alone
        print(f"postgres: skipped ({type(error).__name__}: {error})")
        return
    try:
        separator = "&" if "?" in args.postgres else "?"
        _one("postgres", f"{args.postgres}{separator}schema={schema}", examples)
    finally:
        with psycopg.connect(args.postgres, autocommit=True) as connection:
            connection.execute(f"DROP SCHEMA {schema} CASCADE")


def _one(name: str, url: str, examples: int) -> None:
    from assay._cli.nvd import bundled_files
    from assay.nvd.ingest.importer import Importer
    from assay.nvd.server.app import create_app
    from assay.nvd.storage import open_store

    store = open_store(url)
    try:
        Importer(store).import_files(bundled_files())
        started = time.perf_counter()
        report = fuzz(create_app(store), examples=examples)
        elapsed = time.perf_counter() - started
    finally:
        store.close()
    print(
        f"{name}: {report.requests} requests in {elapsed:.0f} s "
        f"({report.requests / elapsed:.0f}/s), {report.server_errors} server errors, "
        f"{report.violations} schema violations",
        flush=True,
    )
    for operation, count in sorted(report.by_operation.items()):
        print(f"  {operation}: {count}")
    for failure in report.failures:
        print(f"  FAILED {failure}")


if __name__ == "__main__":
    import sys

    run(sys.argv[1:])
