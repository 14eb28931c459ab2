"""A mixed-load soak of `assay serve`: does each serving process's memory stay flat?

    python -m bench soak                          (or: make bench; 10 minutes)
    python -m bench.bench_soak [--duration SECONDS] [--count N] [--connections C]
                               [--store URL] [--source DIR]

1. Generate (or reuse) the corpus of `bench/nvd_corpus.py` (60,000 CVEs by default) and
   import it into a SQLite store in bench/out (or the PostgreSQL schema `--store` names).
2. `assay serve --workers 2`, then `wrk` with 64 connections for `--duration` seconds
   (600 by default; 60-120 is enough while developing) over a mix of every query class
   of `bench nvd`: single CVEs, `cpeName` with a version in ranges, the largest
   products' first (2000-record) page, `keywordSearch`, 2000-record pages at random
   offsets and one-day `lastModified` windows.
3. Every 5 s, the resident set (VmRSS) of each serving process.

Target: after the warm-up (the first fifth of the run, at least 30 s), no worker's RSS
rises more than 20 % above what it was at the end of the warm-up. Figures are printed and
saved as JSON in `bench/out/soak-results.json`.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from bench._store import BenchStore
from bench.bench_nvd import (
    API,
    OUT,
    WRK_SCRIPT,
    Queries,
    _assay_serve,
    _ensure_wrk,
    _import,
    _machine,
    _server,
)
from bench.nvd_corpus import DEFAULT_OUT, DEFAULT_SEED, DEFAULT_SOURCE, generate

DEFAULT_COUNT = 60_000
SAMPLE_SECONDS = 5.0
TARGET_GROWTH = 1.20


def run(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.bench_soak")
    parser.add_argument("--duration", type=int, default=600, help="seconds of load (600)")
    parser.add_argument("--count", type=int, default=DEFAULT_COUNT)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE, help="real NVD records")
    parser.add_argument("--corpus-out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--store", default=None, help="store URL (default: SQLite in bench/out)")
    parser.add_argument("--serve-arg", action="append", default=[], help="extra serve option")
    args = parser.parse_args(argv)

    machine = _machine()
    print(f"machine: {machine}")
    folder = generate(args.source, args.corpus_out, count=args.count, seed=args.seed)
    manifest = json.loads((folder / "manifest.json").read_text())
    OUT.mkdir(parents=True, exist_ok=True)
    store = (
        BenchStore(args.store) if args.store else BenchStore.sqlite(OUT / f"soak-{args.count}.db")
    )
    if not store.exists():
        _import(store, sorted(folder.glob("cves-*.jsonl.gz")), args.count)
    paths_file = OUT / "soak-paths.txt"
    paths_file.write_text("\n".join(mixed_paths(manifest, folder, args.seed)) + "\n")

    command, env = _assay_serve(store)
    command = [*command, *args.serve_arg]
    with _server((command, env)) as base:
        server_pid = _listening_pid(base)
        samples: list[dict[str, int]] = []
        stop = threading.Event()
        sampler = threading.Thread(
            target=_sample, args=(server_pid, samples, stop), name="rss", daemon=True
        )
        sampler.start()
        started = time.monotonic()
        wrk = subprocess.run(
            [_ensure_wrk(), "-t2", f"-c{args.connections}", f"-d{args.duration}s",
             "--timeout", "30s", "-s", str(WRK_SCRIPT), base, "--", str(paths_file)],
            capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
        stop.set()
        sampler.join()
        elapsed = time.monotonic() - started
    load = json.loads(next(line for line in reversed(wrk.splitlines()) if line.startswith("{")))
    result = summarize(samples, args.duration, elapsed)
    result.update(
        machine=machine,
        store="PostgreSQL" if store.is_postgres else "SQLite",
        count=args.count,
        connections=args.connections,
        duration_s=args.duration,
        requests=load["requests"],
        rps=round(load["requests"] / (load["duration_us"] / 1e6)),
        status_errors=load["status_errors"],
        socket_errors=load["socket_errors"],
        serve_args=args.serve_arg,
    )
    _report(result)
    (OUT / "soak-results.json").write_text(json.dumps(result, indent=1))


def mixed_paths(manifest: dict[str, Any], folder: Path, seed: int) -> list[str]:
    """Every query class of `bench nvd`, interleaved; single CVEs are half the mix."""
    queries = Queries(manifest, folder, random.Random(seed))
    classes = [paths for _, paths in queries.sequential_classes()]
    singles = [f"{API}?cveId={cve_id}" for cve_id in manifest["sample_ids"]]
    rng = random.Random(seed)
    mixed = [path for paths in classes for path in paths]
    mixed += rng.sample(singles, min(len(singles), len(mixed)))
    rng.shuffle(mixed)
    return mixed


def summarize(samples: list[dict[str, int]], duration: int, elapsed: float) -> dict[str, Any]:
    """Per worker: RSS at the end of the warm-up, its largest after it, and at the end."""
    warm_index = max(1, round(max(30.0, duration / 5) / SAMPLE_SECONDS)) - 1
    warm_index = min(warm_index, len(samples) - 1)
    workers: dict[str, dict[str, Any]] = {}
    for pid in samples[warm_index]:
        series = [sample[pid] for sample in samples if pid in sample]
        after = [sample[pid] for sample in samples[warm_index:] if pid in sample]
        workers[pid] = {
            "start_mib": series[0],
            "warm_mib": samples[warm_index][pid],
            "max_after_warm_mib": max(after),
            "end_mib": after[-1],
            "growth": round(max(after) / samples[warm_index][pid], 3),
        }
    worst = max((w["growth"] for w in workers.values()), default=0.0)
    return {
        "elapsed_s": round(elapsed),
        "samples": len(samples),
        "workers": workers,
        "worst_growth": worst,
        "target_growth": TARGET_GROWTH,
        "flat": worst <= TARGET_GROWTH,
        "series_mib": [sum(sample.values()) for sample in samples],
    }


def _listening_pid(base: str) -> int:
    """The `assay serve` process (the parent of the workers) listening on `base`."""
    port = base.rsplit(":", 1)[1]
    output = subprocess.run(
        ["ss", "-Hltnp", f"sport = :{port}"], capture_output=True, text=True, check=False
    ).stdout
    for piece in output.split("pid=")[1:]:
        return int(piece.split(",", 1)[0])
    raise SystemExit(f"no process found listening on port {port}")


def _workers(parent: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == parent and _serves(int(stat.parent.name)):
            found.append(int(stat.parent.name))
    return found or [parent]


def _serves(pid: int) -> bool:
    """A worker process (not multiprocessing's resource tracker)."""
    try:
        return b"resource_tracker" not in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def _rss_mib(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) // 1024
    except (OSError, ValueError):
        return None
    return None


def _sample(server_pid: int, samples: list[dict[str, int]], stop: threading.Event) -> None:
    # The listening socket belongs to the supervisor; its children are the workers.
    supervisor = _parent(server_pid) if _is_worker(server_pid) else server_pid
    while not stop.is_set():
        sample = {}
        for pid in _workers(supervisor):
            rss = _rss_mib(pid)
            if rss is not None:
                sample[str(pid)] = rss
        samples.append(sample)
        stop.wait(SAMPLE_SECONDS)


def _parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def _is_worker(pid: int) -> bool:
    cmdline = Path(f"/proc/{_parent(pid)}/cmdline").read_bytes()
    return b"assay" in cmdline and b"serve" in cmdline


def _report(result: dict[str, Any]) -> None:
    print(
        f"soak: {result['requests']} requests in {result['duration_s']} s "
        f"({result['rps']}/s, {result['connections']} connections, {result['store']}, "
        f"{result['count']} CVEs; {result['status_errors']} status errors, "
        f"{result['socket_errors']} socket errors)"
    )
    for pid, worker in result["workers"].items():
        print(
            f"  worker {pid}: RSS {worker['start_mib']} MiB at start, {worker['warm_mib']} "
            f"after warm-up, at most {worker['max_after_warm_mib']} after, "
            f"{worker['end_mib']} at the end (x{worker['growth']})"
        )
    verdict = "flat" if result["flat"] else "GROWING"
    print(
        f"  worst growth after warm-up x{result['worst_growth']} "
        f"(target <= x{result['target_growth']}): {verdict}"
    )


if __name__ == "__main__":
    import sys

    run(sys.argv[1:])
