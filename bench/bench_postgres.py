"""PostgreSQL against SQLite on the same corpus, in the same run, on the same machine.

    python -m bench postgres                     (or: make bench)
    python -m bench.bench_postgres [--count N] [--postgres URL] [--reuse-store]
        [--import-rounds N] [--duration SECONDS] [--rounds N] [--baseline-src DIR]
        [--skip-serving] [--skip-cpu] [--skip-techniques] [--only-class TEXT]
        [--shared-buffers SIZE]

On the corpus of `bench/nvd_corpus.py` (340,000 CVEs at NVD's proportions):

1. the import (`assay nvd import`) into a new SQLite file and into a new PostgreSQL
   schema, one after the other (`--import-rounds` pairs, the order swapped each
   round): wall and CPU time, PostgreSQL's time over SQLite's (target <= 1.5x);
2. both stores served at once (`assay serve --workers 2` each; with `--baseline-src DIR`
   also the PostgreSQL store served by the assay source in DIR, the code before a
   change): `cveId` with wrk, the contenders taking turns, best run of each (target:
   PostgreSQL >= 0.5x SQLite's requests/s); then every class of `bench nvd`'s query mix,
   each query sent to each server in turn, so both see the same load (target: every
   class within 2x of SQLite's p50 and p99);
3. the CPU of one `cveId` request through the API app in-process, and the PostgreSQL
   server's CPU for it (`_cpu_per_request`), which a loaded machine moves less than
   throughput (on PostgreSQL, after the first pass over the ids, answered from the
   records kept for the announced generation: docs/scale.md);
4. the store's techniques one at a time, in-process against the PostgreSQL store, each
   variant in turn in batches, the best batch of each (`Techniques`).

Before each class, both stores are read into the cache as a server that has run for a
while has them (`BenchStore.warm`: SQLite's file; PostgreSQL's files, and its own cache
when `shared_buffers` can hold them). Each class prints its slowest requests: what its
p99 is. `--shared-buffers 2GB` serves PostgreSQL from a private cluster with the
`shared_buffers` docs/scale.md advises (`bench/_cluster.py`); otherwise the server at
`--postgres` is used as it is configured.

Results are printed with ratios and saved in `bench/out/postgres-results.json`.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from bench._cluster import private_cluster
from bench._store import BenchStore
from bench.bench_nvd import (
    OUT,
    ClassResult,
    Queries,
    _assay_serve,
    _import,
    _machine,
    _percentile,
    _row,
    _server,
    _wrk,
)
from bench.nvd_corpus import DEFAULT_COUNT, DEFAULT_OUT, DEFAULT_SEED, DEFAULT_SOURCE, generate

DEFAULT_POSTGRES = "postgresql://postgres@127.0.0.1:5432/test?schema=bench_postgres"
MIB = 2**20
# The slowest requests of each class, printed and kept with its figures: what the p99 is.
SLOWEST = 5
TARGETS = {"import": 1.5, "cveId_rps": 0.5, "latency": 2.0}


def run(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.bench_postgres")
    parser.add_argument("--count", type=int, default=DEFAULT_COUNT)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE)
    parser.add_argument("--postgres", default=DEFAULT_POSTGRES, help="...?schema=NAME (remade)")
    parser.add_argument("--reuse-store", action="store_true", help="import only what is missing")
    parser.add_argument("--import-rounds", type=int, default=1)
    parser.add_argument("--duration", type=int, default=8, help="seconds per wrk run")
    parser.add_argument("--rounds", type=int, default=3, help="wrk runs per contender")
    parser.add_argument("--baseline-src", type=Path, help="a src/ folder of another assay")
    parser.add_argument("--skip-serving", action="store_true")
    parser.add_argument("--skip-techniques", action="store_true")
    parser.add_argument("--skip-cpu", action="store_true", help="no in-process CPU figures")
    parser.add_argument(
        "--only-class", help="serve only the query classes whose name holds this (no cveId)"
    )
    parser.add_argument(
        "--shared-buffers",
        help="serve PostgreSQL from a private cluster with this shared_buffers (e.g. 2GB, "
        "as docs/scale.md advises) and --postgres's autovacuum; the store is --postgres's "
        "schema there, imported anew",
    )
    args = parser.parse_args(argv)
    if args.shared_buffers is None:
        _measure(args)
        return
    schema = BenchStore(args.postgres).schema
    # Only `shared_buffers` differs from the --postgres server (autovacuum as there).
    autovacuum = _settings(args.postgres)["autovacuum"]
    with private_cluster({"shared_buffers": args.shared_buffers, "autovacuum": autovacuum}) as url:
        args.postgres = f"{url}?schema={schema}"
        _measure(args)


def _measure(args: argparse.Namespace) -> None:
    try:
        BenchStore(args.postgres).exists()
    except Exception as error:  # (psycopg's errors, or no psycopg at all)
        print(f"no PostgreSQL at {args.postgres.split('?')[0]} ({error}): nothing measured")
        return
    results: dict[str, Any] = {"machine": _machine(), "count": args.count}
    results["postgres"] = _settings(args.postgres)
    print(f"PostgreSQL: {results['postgres']}", flush=True)
    print(f"machine: {results['machine']}, {_cpu_model()}", flush=True)
    folder = generate(args.source, DEFAULT_OUT, count=args.count, seed=args.seed)
    manifest = json.loads((folder / "manifest.json").read_text())
    OUT.mkdir(parents=True, exist_ok=True)
    stores = {
        "SQLite": BenchStore.sqlite(OUT / f"postgres-peer-{args.count}.db"),
        "PostgreSQL": BenchStore(args.postgres),
    }
    results["import"] = _imports(stores, folder, args)
    if not args.skip_serving:
        results["serving"] = _serving(stores, manifest, folder, args)
    if not args.skip_cpu:
        results["cpu_per_request"] = _cpu_per_request(
            stores, manifest["sample_ids"], args.baseline_src
        )
    if not args.skip_techniques:
        import random

        queries = Queries(manifest, folder, random.Random(args.seed))
        examples = {
            "cpeName range": queries.cpe_ranges(40),
            "keywordSearch": queries.keywords(40),
        }
        techniques = Techniques(stores["PostgreSQL"].url, manifest["sample_ids"], examples)
        results["techniques"] = techniques.run()
    results["load_at_end"] = [round(x, 2) for x in os.getloadavg()]
    (OUT / "postgres-results.json").write_text(json.dumps(results, indent=1, default=str))
    print(f"load average at the end: {results['load_at_end']}")


def _settings(url: str) -> dict[str, str]:
    """The server's version and the settings that decide what its reads cost."""
    with BenchStore(url)._connect() as connection:
        return {
            name: str(connection.execute(f"SHOW {name}").fetchone()[0])
            for name in ("server_version", "shared_buffers", "work_mem", "autovacuum")
        }


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


# -- 1. import ------------------------------------------------------------------------------


def _imports(
    stores: dict[str, BenchStore], folder: Path, args: argparse.Namespace
) -> dict[str, Any]:
    files = sorted(folder.glob("cves-*.jsonl.gz"))
    if args.reuse_store and all(store.exists() for store in stores.values()):
        print("reusing both stores (no import measured)")
        return {}
    contenders = dict(stores)
    if args.baseline_src is not None:
        url = stores["PostgreSQL"].url
        contenders["PostgreSQL, baseline"] = BenchStore(url.replace("schema=", "schema=baseline_"))
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in contenders}
    for number in range(args.import_rounds):
        order = list(contenders.items())
        if number % 2:
            order.reverse()
        for name, store in order:
            saved = os.environ.get("PYTHONPATH")
            if "baseline" in name:
                os.environ["PYTHONPATH"] = str(args.baseline_src)
            try:
                figures = _import_with_wal(store, files, args.count)
            finally:
                if saved is None:
                    os.environ.pop("PYTHONPATH", None)
                else:
                    os.environ["PYTHONPATH"] = saved
            print(f"  import into {name}: {figures}", flush=True)
            runs[name].append(figures)
    ratios = [
        pg["seconds"] / lite["seconds"]
        for lite, pg in zip(runs["SQLite"], runs["PostgreSQL"], strict=True)
    ]
    if "PostgreSQL, baseline" in runs:
        before = [
            old["seconds"] / lite["seconds"]
            for lite, old in zip(runs["SQLite"], runs["PostgreSQL, baseline"], strict=True)
        ]
        print(f"import, PostgreSQL with the baseline code over SQLite: {before}", flush=True)
    summary = {
        "runs": runs,
        "ratio_wall": [round(r, 2) for r in ratios],
        "ratio_wall_median": round(statistics.median(ratios), 2),
        "target": TARGETS["import"],
    }
    print(f"import, PostgreSQL over SQLite: {summary['ratio_wall']} (target <= 1.5x)", flush=True)
    return summary


def _import_with_wal(store: BenchStore, files: list[Path], count: int) -> dict[str, Any]:
    """`_import`, plus the WAL PostgreSQL wrote meanwhile (the whole server's: other
    writers on the same server are counted too)."""
    if not store.is_postgres:
        return _import(store, files, count)
    import psycopg

    def lsn() -> int:
        with psycopg.connect(store.url.split("?")[0], autocommit=True) as connection:
            row = connection.execute(
                "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')"
            ).fetchone()
        return int(row[0]) if row else 0

    before = lsn()
    figures = _import(store, files, count)
    figures["wal_mb"] = round((lsn() - before) / 1e6)
    return figures


# -- 2. serving ------------------------------------------------------------------------------


def _serving(
    stores: dict[str, BenchStore], manifest: dict[str, Any], folder: Path, args: argparse.Namespace
) -> dict[str, Any]:
    import contextlib
    import random

    # Each server's PostgreSQL sessions carry its name, so that their CPU can be read.
    served = {
        "SQLite": stores["SQLite"],
        "PostgreSQL": BenchStore(_with_application(stores["PostgreSQL"].url, "bench-new")),
    }
    specs = {name: _assay_serve(store) for name, store in served.items()}
    if args.baseline_src is not None:
        baseline = BenchStore(_with_application(stores["PostgreSQL"].url, "bench-baseline"))
        command, _ = _assay_serve(baseline)
        specs["PostgreSQL, baseline"] = (command, {"PYTHONPATH": str(args.baseline_src)})
    cve_file = OUT / "postgres-cveid.txt"
    cve_file.write_text(
        "\n".join(f"/rest/json/cves/2.0?cveId={i}" for i in manifest["sample_ids"]) + "\n"
    )
    for store in stores.values():
        store.warm()
    figures: dict[str, Any] = {}
    with contextlib.ExitStack() as stack:
        bases = {name: stack.enter_context(_server(spec)) for name, spec in specs.items()}
        if args.only_class is None:
            figures["cveId"] = _cve_ids(
                bases, cve_file, args.duration, args.rounds, stores["PostgreSQL"].url
            )
        queries = Queries(manifest, folder, random.Random(args.seed))
        classes: dict[str, Any] = {}
        for name, paths in queries.sequential_classes():
            if args.only_class is not None and args.only_class not in name:
                continue
            for store in stores.values():
                store.warm()
            classes[name] = _interleaved(name, bases, paths)
        figures["classes"] = classes
    return figures


def _with_application(url: str, name: str) -> str:
    return f"{url}&application_name={name}" if "?" in url else f"{url}?application_name={name}"


def _cpu_seconds(pids: list[int]) -> float:
    """User + system CPU of `pids` so far (/proc), the ones gone left out."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
        except (OSError, IndexError, ValueError):
            continue
    return total / ticks


def _server_pids(base: str) -> list[int]:
    """The processes of the server listening at `base` (the one whose command line
    names its port, and its workers)."""
    port = f"--port\0{urlsplit(base).port}\0".encode()
    parents = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if port in (entry / "cmdline").read_bytes():
                    parents.append(int(entry.name))
            except OSError:
                continue
    children = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                if int(fields[1]) in parents:
                    children.append(int(entry.name))
            except (OSError, IndexError, ValueError):
                continue
    return parents + children


def _backend_pids(name: str, url: str) -> list[int]:
    """The PostgreSQL server processes of the server `name`'s sessions."""
    if name == "SQLite":
        return []
    return _backend_pids_named("bench-baseline" if "baseline" in name else "bench-new", url)


def _cve_ids(
    bases: dict[str, str], paths: Path, duration: int, rounds: int, url: str
) -> dict[str, Any]:
    """wrk on each server in turn (32 connections, then 1), best run of each; the CPU
    the server's processes and its PostgreSQL sessions spent per request."""
    for base in bases.values():
        _wrk(base, paths, 8, 3)  # warm-up
    best: dict[tuple[str, int], dict[str, Any]] = {}
    for number in range(rounds):
        order = list(bases.items())
        if number % 2:
            order.reverse()
        for connections in (32, 1):
            for name, base in order:
                server, backends = _server_pids(base), _backend_pids(name, url)
                cpu = _cpu_seconds(server), _cpu_seconds(backends)
                r = _wrk(base, paths, connections, duration)
                spent = _cpu_seconds(server) - cpu[0], _cpu_seconds(backends) - cpu[1]
                figures = {
                    "rps": round(r["requests"] / (r["duration_us"] / 1e6)),
                    "p50_ms": r["p50_us"] / 1000,
                    "p99_ms": r["p99_us"] / 1000,
                    "server_cpu_us": round(spent[0] / max(1, r["requests"]) * 1e6, 1),
                    "database_cpu_us": round(spent[1] / max(1, r["requests"]) * 1e6, 1),
                }
                print(
                    f"  round {number + 1}, {connections:>2} conn., {name}: {figures}", flush=True
                )
                kept = best.get((name, connections))
                if kept is None or figures["rps"] > kept["rps"]:
                    best[(name, connections)] = figures
    out: dict[str, Any] = {}
    for connections in (32, 1):
        row = {name: best[(name, connections)] for name in bases}
        for name in bases:
            if name != "SQLite":
                row[f"{name} / SQLite rps"] = round(
                    best[(name, connections)]["rps"] / best[("SQLite", connections)]["rps"], 3
                )
        out[f"{connections} connections"] = row
        print(f"cveId, {connections} connection(s): {row}", flush=True)
    return out


def _interleaved(name: str, bases: dict[str, str], paths: list[str]) -> dict[str, Any]:
    """Each path sent to every server in turn (the order rotating), one at a time over
    one keep-alive connection per server; latency until the body's last byte."""
    connections = {
        server: http.client.HTTPConnection(urlsplit(base).hostname or "", urlsplit(base).port)
        for server, base in bases.items()
    }
    buffer = memoryview(bytearray(128 * MIB))
    times: dict[str, list[float]] = {server: [] for server in bases}
    totals: dict[str, list[int]] = {server: [] for server in bases}
    servers = list(bases)
    try:
        for number, path in enumerate(paths):
            shift = number % len(servers)
            for server in servers[shift:] + servers[:shift]:
                connection = connections[server]
                started = time.perf_counter()
                connection.request("GET", path)
                response = connection.getresponse()
                received = 0
                while read := response.readinto(buffer[received:]):
                    received += read
                times[server].append((time.perf_counter() - started) * 1000)
                if response.status != 200:
                    raise SystemExit(f"{server} {path}: {response.status}")
                match = re.search(rb'"totalResults":(\d+)', buffer[:200].tobytes())
                totals[server].append(int(match.group(1)) if match else 0)
    finally:
        for connection in connections.values():
            connection.close()
    if any(totals[server] != totals["SQLite"] for server in servers):
        raise SystemExit(f"{name}: the servers disagree on totalResults")
    out: dict[str, Any] = {}
    for server in servers:
        result = ClassResult(
            name=f"{name} [{server}]",
            requests=len(times[server]),
            p50_ms=_percentile(times[server], 50),
            p99_ms=_percentile(times[server], 99),
            mean_ms=statistics.fmean(times[server]),
            max_ms=max(times[server]),
            results_median=statistics.median(totals[server]),
        )
        print(f"  {_row(result)}", flush=True)
        slowest = sorted(zip(times[server], paths, strict=True), reverse=True)[:SLOWEST]
        for elapsed, path in slowest:
            print(f"    {elapsed:8.1f} ms  {path}", flush=True)
        out[server] = {
            "p50_ms": round(result.p50_ms, 2),
            "p99_ms": round(result.p99_ms, 2),
            "slowest": [[round(elapsed, 1), path] for elapsed, path in slowest],
        }
    for server in servers[1:]:
        out[f"{server} / SQLite"] = {
            "p50": round(out[server]["p50_ms"] / out["SQLite"]["p50_ms"], 2),
            "p99": round(out[server]["p99_ms"] / out["SQLite"]["p99_ms"], 2),
        }
        print(f"  {name}, {server} / SQLite: {out[f'{server} / SQLite']}", flush=True)
    return out


def _cpu_per_request(
    stores: dict[str, BenchStore], cve_ids: list[str], baseline_src: Path | None
) -> dict[str, Any]:
    """CPU of one `cveId` request through the whole API app, driven in-process (no HTTP,
    no other process of the benchmark running), with the PostgreSQL server's own CPU
    for its sessions: best of 5 runs of 4,000 requests per store, the stores in turn.
    Unlike throughput on a shared machine, this moves little with what else runs."""
    import subprocess

    script = (
        "import asyncio, json, os, sys, time\n"
        "from assay.nvd.server.app import create_app\n"
        "from assay.nvd.storage import open_store\n"
        "url, ids = sys.argv[1], sys.argv[2].split(',')\n"
        "store = open_store(url, timeout=10 if url.startswith('postgres') else None)\n"
        "app = create_app(store)\n"
        "async def receive(): return {'type': 'http.request', 'body': b'', 'more_body': False}\n"
        "async def send(message): return None\n"
        "async def drive(count):\n"
        "    for n in range(count):\n"
        "        scope = {'type': 'http', 'method': 'GET', 'path': '/rest/json/cves/2.0',\n"
        "                 'raw_path': b'/rest/json/cves/2.0', 'query_string': b'cveId=' + ids[n % len(ids)].encode(),\n"
        "                 'headers': [(b'host', b'localhost')], 'client': ('127.0.0.1', 40000),\n"
        "                 'server': ('127.0.0.1', 80), 'scheme': 'http', 'http_version': '1.1', 'root_path': ''}\n"
        "        await app(scope, receive, send)\n"
        "async def main():\n"
        "    await drive(500)\n"
        "    for line in sys.stdin:\n"
        "        started = time.process_time(); await drive(int(line))\n"
        "        print(time.process_time() - started, flush=True)\n"
        "asyncio.run(main())\n"
    )
    contenders = {name: (store.url, {}) for name, store in stores.items()}
    if baseline_src is not None:
        contenders["PostgreSQL, baseline"] = (
            stores["PostgreSQL"].url,
            {"PYTHONPATH": str(baseline_src)},
        )
    processes = {}
    for name, (url, env) in contenders.items():
        application = "bench-cpu-" + str(len(processes))
        served = url if name == "SQLite" else _with_application(url, application)
        processes[name] = (
            subprocess.Popen(
                [sys.executable, "-c", script, served, ",".join(cve_ids[:2000])],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                env={**os.environ, **env},
            ),
            application,
        )
    count = 4000
    best: dict[str, tuple[float, float]] = {}
    for _ in range(5):
        for name, (process, application) in processes.items():
            backends = _backend_pids_named(application, stores["PostgreSQL"].url)
            before = _cpu_seconds(backends)
            assert process.stdin is not None
            assert process.stdout is not None
            process.stdin.write(f"{count}\n")
            process.stdin.flush()
            own = float(process.stdout.readline())
            database = _cpu_seconds(backends) - before
            figures = (own / count * 1e6, database / count * 1e6)
            if name not in best or sum(figures) < sum(best[name]):
                best[name] = figures
    for process, _ in processes.values():
        assert process.stdin is not None
        process.stdin.close()
        process.wait()
    out = {
        name: {"app_us": round(app, 1), "database_us": round(db, 1), "total_us": round(app + db, 1)}
        for name, (app, db) in best.items()
    }
    for name, figures in out.items():
        if name != "SQLite":
            figures["x SQLite"] = round(figures["total_us"] / out["SQLite"]["total_us"], 2)
    print(f"CPU per cveId request, in-process: {out}", flush=True)
    return out


def _backend_pids_named(application: str, url: str) -> list[int]:
    import psycopg

    with psycopg.connect(url.split("?", 1)[0]) as connection:
        rows = connection.execute(
            "SELECT pid FROM pg_stat_activity WHERE application_name = %s", (application,)
        ).fetchall()
    return [int(row[0]) for row in rows]


# -- 3. techniques, one at a time --------------------------------------------------------------


class Techniques:
    """Each technique as two variants of the same work on the PostgreSQL store, run in
    turn (`BATCHES` batches of `BATCH` operations each), the best batch of each kept:
    microseconds of wall time per operation, which on a loaded machine moves less than
    CPU figures do."""

    BATCHES = 15
    BATCH = 300

    def __init__(self, url: str, cve_ids: list[str], examples: dict[str, list[str]]) -> None:
        self.url = url
        self.cve_ids = cve_ids
        self.examples = examples

    def run(self) -> dict[str, Any]:
        import psycopg
        from psycopg_pool import ConnectionPool

        from assay.nvd.storage.postgres import LOOK_UP, PostgresStore, parse_url

        target = parse_url(self.url)
        options = {"autocommit": True}
        connection = psycopg.connect(target.conninfo, **options)
        connection.execute(f"SET search_path TO {target.schema}")
        ids = self.cve_ids
        gen_sql = "SELECT value FROM meta WHERE key = 'generation'"
        one_sql = "SELECT c.record FROM cve c WHERE c.cve_id = %s"
        out: dict[str, Any] = {}

        def by_turns(name: str, variants: dict[str, Callable[[int], object]]) -> None:
            out[name] = self._compare(name, variants)

        by_turns(
            "prepared statements (cveId record)",
            {
                "unprepared": lambda k: connection.execute(
                    one_sql, (ids[k % len(ids)],), prepare=False
                ).fetchone(),
                "prepared": lambda k: connection.execute(
                    one_sql, (ids[k % len(ids)],), prepare=True
                ).fetchone(),
            },
        )
        by_turns(
            "binary results (cveId record)",
            {
                "text (bytea as hex)": lambda k: connection.execute(
                    one_sql, (ids[k % len(ids)],)
                ).fetchone(),
                "binary": lambda k: connection.execute(
                    one_sql, (ids[k % len(ids)],), binary=True
                ).fetchone(),
            },
        )

        def pipelined(k: int) -> object:
            with connection.pipeline():
                first = connection.execute(gen_sql)
                second = connection.execute(one_sql, (ids[k % len(ids)],), binary=True)
            return first.fetchone(), second.fetchone()

        by_turns(
            "pipeline mode (generation, then the record)",
            {
                "two round trips": lambda k: (
                    connection.execute(gen_sql).fetchone(),
                    connection.execute(one_sql, (ids[k % len(ids)],), binary=True).fetchone(),
                ),
                "one pipeline": pipelined,
                "one statement (what the store does)": lambda k: connection.execute(
                    LOOK_UP, (ids[k % len(ids)],), binary=True
                ).fetchone(),
            },
        )
        pools = {
            "reset callback (a worker thread returns each)": ConnectionPool(
                target.conninfo, kwargs=options, min_size=1, max_size=2, reset=lambda c: None
            ),
            "no callback": ConnectionPool(target.conninfo, kwargs=options, min_size=1, max_size=2),
        }
        for pool in pools.values():
            pool.wait()

        def through(pool: ConnectionPool[Any]) -> Callable[[int], object]:
            def one(k: int) -> object:
                with pool.connection() as pooled:
                    return pooled.execute("SELECT 1").fetchone()

            return one

        by_turns("connection pool", {name: through(pool) for name, pool in pools.items()})
        for pool in pools.values():
            pool.close()

        from assay.nvd.cve_query import CveQuery
        from assay.nvd.storage._decoded import GenerationRecords

        cached = PostgresStore(self.url, timeout=10)
        uncached = PostgresStore(self.url, timeout=10)
        uncached._records = GenerationRecords(max_bytes=0)
        subset = ids[:200]  # (kept by the cached store after its first pass)

        def served(store: PostgresStore) -> Callable[[int], object]:
            def one(k: int) -> object:
                query = CveQuery(cve_id=subset[k % len(subset)])
                return store.read_at_generation(lambda: store.search_cves(query))

            return one

        def announced(store: PostgresStore) -> Callable[[int], object]:
            # What the `?cveId=` shortcut does: from memory while the generation is
            # announced, else one statement for the record and the generation.
            def one(k: int) -> object:
                cve_id = subset[k % len(subset)]
                return store.kept_cve(cve_id) or store.cve_with_generation(cve_id)

            return one

        by_turns(
            "records kept per generation (generation + cveId, as a server asks)",
            {
                "read each time": served(uncached),
                "kept, the generation read each time": served(cached),
                "kept, the generation announced (kept_cve)": announced(cached),
            },
        )
        cached.close()
        uncached.close()
        out["copy"] = self._copy(connection)
        for name, paths in self.examples.items():
            out[f"session settings ({name})"] = self._settings(connection, name, paths)
        connection.close()
        return out

    def _settings(self, connection: Any, name: str, paths: list[str]) -> dict[str, Any]:
        """The id query of each example (as `search_cves` sends it) under PostgreSQL's
        defaults and under the store's session settings, in turn: best of 3 each."""
        from urllib.parse import parse_qsl

        from assay.nvd.cve_query import parse_cve_query
        from assay.nvd.storage._postgres_rows import bound
        from assay.nvd.storage._sql import POSTGRES, SqlBuilder, cve_where
        from assay.nvd.storage.postgres import CVE_ORDER

        statements = []
        for path in paths:
            query = parse_cve_query(parse_qsl(urlsplit(path).query, keep_blank_values=True))
            builder = SqlBuilder(POSTGRES)
            where = cve_where(query, builder)
            text = f"SELECT c.id FROM cve c WHERE {where} ORDER BY {CVE_ORDER}"
            statements.append((text, bound(builder.params)))
        variants = {
            "defaults (jit on, parallel workers)": ("on", "2"),
            "jit off": ("off", "2"),
            "jit off, no parallel workers": ("off", "0"),
        }
        times: dict[str, list[float]] = {label: [] for label in variants}
        for text, params in statements:
            for label, (jit, workers) in variants.items():
                connection.execute(f"SET jit = {jit}")
                connection.execute(f"SET max_parallel_workers_per_gather = {workers}")
                best = float("inf")
                for _ in range(3):
                    started = time.perf_counter()
                    connection.execute(text, params).fetchall()
                    best = min(best, time.perf_counter() - started)
                times[label].append(best * 1000)
        connection.execute("RESET jit")
        connection.execute("RESET max_parallel_workers_per_gather")
        figures = {
            label: {"p50_ms": round(_percentile(v, 50), 2), "p99_ms": round(_percentile(v, 99), 2)}
            for label, v in times.items()
        }
        print(f"  {name}, the id query alone: {figures}", flush=True)
        return figures

    def _compare(self, name: str, variants: dict[str, Callable[[int], object]]) -> dict[str, Any]:
        best = dict.fromkeys(variants, float("inf"))
        cpu = dict.fromkeys(variants, float("inf"))
        for function in variants.values():
            for k in range(50):
                function(k)
        for batch in range(self.BATCHES):
            for label, function in variants.items():
                started, used = time.perf_counter(), time.process_time()
                for k in range(batch * self.BATCH, (batch + 1) * self.BATCH):
                    function(k)
                best[label] = min(best[label], (time.perf_counter() - started) / self.BATCH * 1e6)
                cpu[label] = min(cpu[label], (time.process_time() - used) / self.BATCH * 1e6)
        first = next(iter(best.values()))
        first_cpu = next(iter(cpu.values()))
        # Wall time and this process's CPU (all its threads: a pool's worker too).
        figures = {
            label: {
                "us": round(us, 1),
                "x first": round(us / first, 2),
                "cpu_us": round(cpu[label], 1),
                "cpu x first": round(cpu[label] / first_cpu, 2),
            }
            for label, us in best.items()
        }
        print(f"  {name}: {figures}", flush=True)
        return figures

    def _copy(self, connection: Any) -> dict[str, Any]:
        """50,000 rows shaped like `cve_criteria` into a temporary table: binary COPY
        against INSERT ... SELECT FROM unnest (one array per column), in turn."""
        rows = [(i * 7 % 611_771, i, i % 2) for i in range(50_000)]
        columns: list[list[int]] = [[row[c] for row in rows] for c in range(3)]
        connection.execute(
            "CREATE TEMPORARY TABLE IF NOT EXISTS bench_uses "
            "(criteria BIGINT, cve BIGINT, vulnerable SMALLINT)"
        )

        def by_copy() -> None:
            with (
                connection.cursor() as cursor,
                cursor.copy("COPY bench_uses FROM STDIN (FORMAT BINARY)") as copy,
            ):
                copy.set_types(["int8", "int8", "int2"])
                for row in rows:
                    copy.write_row(row)

        def by_unnest() -> None:
            connection.execute(
                "INSERT INTO bench_uses SELECT * FROM "
                "unnest(%s::bigint[], %s::bigint[], %s::smallint[])",
                columns,
            )

        best = {"unnest": float("inf"), "copy": float("inf")}
        for _ in range(5):
            for label, function in (("unnest", by_unnest), ("copy", by_copy)):
                connection.execute("TRUNCATE bench_uses")
                started = time.perf_counter()
                function()
                best[label] = min(best[label], time.perf_counter() - started)
        figures = {
            "INSERT ... unnest ms": round(best["unnest"] * 1000, 1),
            "COPY (binary) ms": round(best["copy"] * 1000, 1),
            "x unnest": round(best["copy"] / best["unnest"], 2),
        }
        print(f"  50,000 rows: {figures}", flush=True)
        return figures


if __name__ == "__main__":
    run(sys.argv[1:])
