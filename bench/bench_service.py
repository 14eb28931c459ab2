"""The service around the API: compression, 304s, the rate limit's cost, two servers.

    python -m bench service                       (or: make bench)
    python -m bench.bench_service [--count N] [--duration SECONDS] [--postgres URL]

On the corpus of `bench/nvd_corpus.py` (60,000 CVEs, the soak's store), with
`assay serve --workers 2` and the HTTP floor of `bench nvd` (a constant Starlette
answer under the same uvicorn) in the same run:

1. a 2000-record page, sequentially: bytes on the wire and p50 as is, with gzip and
   with zstd (`Accept-Encoding`);
2. `If-None-Match` revalidations (wrk, 32 connections): 304s per second against the
   floor's requests per second;
3. `cveId` throughput (wrk, 32 connections) with `--rate-limit` on (a limit no client
   reaches, so every request is counted) against the same server without it, runs
   taking turns (target: at most 5 % lower);
4. with `--postgres URL?schema=NAME` (imported once): two servers on that one
   PostgreSQL store, `cveId` throughput of each under load at once, and of one alone.

Results are printed and saved in `bench/out/service-results.json`.
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from bench._store import BenchStore
from bench.bench_nvd import (
    API,
    OUT,
    _hello_serve,
    _import,
    _machine,
    _percentile,
    _server,
    _wrk,
)
from bench.nvd_corpus import DEFAULT_OUT, DEFAULT_SEED, DEFAULT_SOURCE, generate

DEFAULT_COUNT = 60_000
MIB = 2**20


def run(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.bench_service")
    parser.add_argument("--count", type=int, default=DEFAULT_COUNT)
    parser.add_argument("--duration", type=int, default=8, help="seconds per wrk run")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE)
    parser.add_argument("--postgres", default=None, help="postgresql://...?schema=NAME")
    args = parser.parse_args(argv)

    results: dict[str, Any] = {"machine": _machine(), "count": args.count}
    print(f"machine: {results['machine']}")
    folder, manifest, store, cve_file = corpus_store(args.source, args.count, "soak", "service")

    def assay(url: str, *extra: str) -> tuple[list[str], dict[str, str]]:
        return ([sys.executable, "-m", "assay", "serve", "--store", url, "--workers", "2",
                 *extra], {})  # fmt: skip

    with (
        _server(assay(store.url)) as base,
        _server(assay(store.url, "--rate-limit", "999999999/30")) as limited,
        _server(_hello_serve()) as floor,
    ):
        results["page"] = _pages(base, args.count)
        results["revalidation"] = _revalidation(base, floor, cve_file, args.duration, args.rounds)
        results["rate_limit"] = _rate_limit_cost(
            base, limited, cve_file, args.duration, args.rounds
        )
    results["rate_limit_cpu"] = _rate_limit_cpu(store, manifest["sample_ids"])
    if args.postgres:
        results["two_servers"] = _two_servers(
            BenchStore(args.postgres), folder, args.count, cve_file, args.duration
        )
    (OUT / "service-results.json").write_text(json.dumps(results, indent=1))


def corpus_store(
    source: Path, count: int, name: str, bench: str
) -> tuple[Path, dict[str, Any], BenchStore, Path]:
    """The corpus of `count` CVEs, its manifest, its SQLite store `bench/out/NAME-COUNT.db`
    (imported when missing) and a file of `cveId` paths for wrk (`BENCH-cveid.txt`)."""
    folder = generate(source, DEFAULT_OUT, count=count, seed=DEFAULT_SEED)
    manifest = json.loads((folder / "manifest.json").read_text())
    OUT.mkdir(parents=True, exist_ok=True)
    store = BenchStore.sqlite(OUT / f"{name}-{count}.db")
    if not store.exists():
        _import(store, sorted(folder.glob("cves-*.jsonl.gz")), count)
    paths = OUT / f"{bench}-cveid.txt"
    paths.write_text("\n".join(f"{API}?cveId={i}" for i in manifest["sample_ids"]) + "\n")
    return folder, manifest, store, paths


def _pages(base: str, count: int) -> dict[str, Any]:
    """A 2000-record page at 30 offsets, as is, gzip and zstd: bytes on the wire, p50."""
    address = urlsplit(base)
    paths = [
        f"{API}?resultsPerPage=2000&startIndex={(i * 7919) % (count - 2000)}" for i in range(30)
    ]
    figures: dict[str, Any] = {}
    for encoding in ("identity", "gzip", "zstd"):
        connection = http.client.HTTPConnection(address.hostname or "", address.port)
        times, sizes = [], []
        try:
            for path in paths:
                started = time.perf_counter()
                connection.request("GET", path, headers={"Accept-Encoding": encoding})
                response = connection.getresponse()
                body = response.read()  # (http.client undoes chunking, not the encoding)
                times.append((time.perf_counter() - started) * 1000)
                assert response.status == 200, response.status
                sizes.append(len(body))
        finally:
            connection.close()
        figures[encoding] = {
            "p50_ms": round(_percentile(times, 50), 1),
            "p99_ms": round(_percentile(times, 99), 1),
            "wire_mib": round(statistics.median(sizes) / MIB, 2),
        }
        print(f"  2000-record page, {encoding}: {figures[encoding]}", flush=True)
    plain = figures["identity"]["wire_mib"]
    for encoding in ("gzip", "zstd"):
        figures[encoding]["ratio"] = round(figures[encoding]["wire_mib"] / plain, 3)
    return figures


def _best(url: str, paths: Path, duration: int, headers: tuple[str, ...] = ()) -> dict[str, Any]:
    result = _wrk_with(url, paths, duration, headers)
    return {"rps": round(result["requests"] / (result["duration_us"] / 1e6)),
            "p50_ms": result["p50_us"] / 1000, "errors": result["status_errors"]}  # fmt: skip


def _wrk_with(url: str, paths: Path, duration: int, headers: tuple[str, ...]) -> dict[str, Any]:
    if not headers:
        return _wrk(url, paths, 32, duration)
    from bench.bench_nvd import WRK_SCRIPT, _ensure_wrk

    command = [_ensure_wrk(), "-t1", "-c32", f"-d{duration}s", "--timeout", "10s"]
    for header in headers:
        command += ["-H", header]
    command += ["-s", str(WRK_SCRIPT), url, "--", str(paths)]
    output = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    line = next(line for line in reversed(output.splitlines()) if line.startswith("{"))
    parsed: dict[str, Any] = json.loads(line)
    return parsed


def _revalidation(base: str, floor: str, paths: Path, duration: int, rounds: int) -> dict[str, Any]:
    """304s per second (If-None-Match: *, so every answer is a 304) against the floor."""
    best_304: dict[str, Any] = {"rps": 0}
    best_floor: dict[str, Any] = {"rps": 0}
    for _ in range(rounds):
        ours = _best(base, paths, duration, ("If-None-Match: *",))
        theirs = _best(floor, paths, duration)
        best_304 = max(best_304, ours, key=lambda r: r["rps"])
        best_floor = max(best_floor, theirs, key=lambda r: r["rps"])
    figures = {"304_rps": best_304["rps"], "304_p50_ms": best_304["p50_ms"],
               "floor_rps": best_floor["rps"], "floor_p50_ms": best_floor["p50_ms"],
               "ratio": round(best_304["rps"] / best_floor["rps"], 3)}  # fmt: skip
    print(f"  If-None-Match: {figures}", flush=True)
    return figures


def _rate_limit_cost(
    base: str, limited: str, paths: Path, duration: int, rounds: int
) -> dict[str, Any]:
    """Runs taking turns in pairs (the order swapped each round): the best of each, and
    the median of the pairs' ratios, which a machine's changing load moves less."""
    plain_best: dict[str, Any] = {"rps": 0}
    limited_best: dict[str, Any] = {"rps": 0}
    ratios: list[float] = []
    for number in range(max(rounds, 5)):
        order = [(base, False), (limited, True)]
        if number % 2:
            order.reverse()
        pair: dict[bool, dict[str, Any]] = {}
        for url, is_limited in order:
            pair[is_limited] = _best(url, paths, duration)
        ratios.append(pair[True]["rps"] / max(1, pair[False]["rps"]))
        plain_best = max(plain_best, pair[False], key=lambda r: r["rps"])
        limited_best = max(limited_best, pair[True], key=lambda r: r["rps"])
    figures = {"plain_rps": plain_best["rps"], "limited_rps": limited_best["rps"],
               "cost_of_best": round(1 - limited_best["rps"] / plain_best["rps"], 3),
               "cost_median_pair": round(1 - statistics.median(ratios), 3),
               "pairs": len(ratios), "target_cost": 0.05}  # fmt: skip
    print(f"  cveId with --rate-limit: {figures}", flush=True)
    return figures


def _rate_limit_cpu(store: BenchStore, cve_ids: list[str]) -> dict[str, Any]:
    """The limiter's own CPU per `cveId` request: the API app driven in-process (no HTTP,
    no other process), with and without `--rate-limit`, best of five runs of 20,000
    requests each. Unlike wrk's throughput, it does not move with what else the machine
    is doing."""
    import asyncio

    from assay.nvd.server.app import create_app
    from assay.nvd.server.service import ServiceSettings
    from assay.nvd.storage import open_store

    opened = open_store(store.url)

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        return None

    async def drive(app: Any, count: int) -> float:
        started = time.process_time()
        for number in range(count):
            scope = {
                "type": "http", "method": "GET", "path": API, "raw_path": API.encode(),
                "query_string": b"cveId=" + cve_ids[number % len(cve_ids)].encode(),
                "headers": [(b"host", b"bench")], "client": ("127.0.0.1", 40000),
                "server": ("127.0.0.1", 80), "scheme": "http", "http_version": "1.1",
                "root_path": "",
            }  # fmt: skip
            await app(scope, receive, send)
        return (time.process_time() - started) / count * 1e6

    async def measure() -> dict[str, float]:
        apps = {
            "plain": create_app(opened, service=ServiceSettings()),
            "limited": create_app(opened, service=ServiceSettings(rate_limit="999999999/30")),
        }
        best = dict.fromkeys(apps, float("inf"))
        for app in apps.values():
            await drive(app, 2000)  # warm-up
        for _ in range(5):
            for name, app in apps.items():
                best[name] = min(best[name], await drive(app, 20_000))
        return best

    try:
        best = asyncio.run(measure())
    finally:
        opened.close()
    figures = {
        "plain_us": round(best["plain"], 2),
        "limited_us": round(best["limited"], 2),
        "limiter_us": round(best["limited"] - best["plain"], 2),
    }
    print(f"  in-process CPU per cveId request: {figures}", flush=True)
    return figures


def _two_servers(
    store: BenchStore, folder: Path, count: int, paths: Path, duration: int
) -> dict[str, Any]:
    if not store.exists():
        _import(store, sorted(folder.glob("cves-*.jsonl.gz")), count)
    spec = ([sys.executable, "-m", "assay", "serve", "--store", store.url], {})
    with _server(spec) as first, _server(spec) as second:
        alone = _best(first, paths, duration)
        both: dict[str, dict[str, Any]] = {}

        def load(name: str, url: str) -> None:
            both[name] = _best(url, paths, duration)

        threads = [
            threading.Thread(target=load, args=(n, u)) for n, u in (("a", first), ("b", second))
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    figures = {"one_server_rps": alone["rps"], "one_server_p50_ms": alone["p50_ms"],
               "two_servers_rps": [both["a"]["rps"], both["b"]["rps"]],
               "two_servers_total_rps": both["a"]["rps"] + both["b"]["rps"],
               "two_servers_p50_ms": [both["a"]["p50_ms"], both["b"]["p50_ms"]]}  # fmt: skip
    print(f"  two servers on one PostgreSQL: {figures}", flush=True)
    return figures


if __name__ == "__main__":
    run(sys.argv[1:])
