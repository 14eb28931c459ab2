"""The speed of the API with every service feature on, against the floor and (optionally)
another build of assay, in the same run.

    python -m bench service_speed                 (or: make bench)
    python -m bench.bench_service_speed [--count N] [--duration S] [--rounds R]
                                        [--before SRC [--before-store URL]]
                                        [--classes NAME,...]

On the corpus of `bench/nvd_corpus.py` (340,000 CVEs at NVD's proportions; imported by
`bench nvd` into `bench/out/nvd-N.db`, or here when missing), SQLite, `assay serve
--workers 2` with its defaults: ETag and Last-Modified, compression, metrics (counted
into multiprocess files), no rate limit. In the same run:

* the HTTP floor of `bench nvd` (a constant Starlette answer under the same uvicorn);
* with `--before SRC`, the same server run from another source tree (`SRC` is put
  first on PYTHONPATH: e.g. `git archive <commit> src | tar -x -C /tmp/before`),
  serving `--before-store URL` when given (a store in the format that build reads).

`cveId`: wrk, 32 connections, the contenders taking turns round after round (order
rotated each round); each one's best run, and the median of the rounds' ratios to the
floor. Then `keywordSearch` with exact totals, the 2000-record page and `cpeName` with a
version range (the queries of `bench nvd`), each class sent once to each build, one
request at a time, the builds taking turns class by class (each build's result cache
is its own, so each sees every query cold). Targets (issue 22): `cveId` >= 0.6x the
floor; `keywordSearch` p50 <= 5 ms, p99 <= 100 ms; 2000-record page p50 <= 15 ms, p99
<= 30 ms; `cpeName` range p99 <= 25 ms.

Results are printed and saved in `bench/out/service-speed-results.json`.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import statistics
import sys
from pathlib import Path
from typing import Any

from bench._store import BenchStore
from bench.bench_nvd import (
    OUT,
    Queries,
    _hello_serve,
    _machine,
    _sequential,
    _server,
    _wrk,
)
from bench.bench_service import corpus_store
from bench.nvd_corpus import DEFAULT_COUNT, DEFAULT_SEED, DEFAULT_SOURCE

CLASSES = ("keywordSearch", "page of 2000", "cpeName range")
TARGETS = {  # (p50 ms, p99 ms)
    "keywordSearch": (5.0, 100.0),
    "page of 2000": (15.0, 30.0),
    "cpeName range": (None, 25.0),
}
TARGET_FLOOR_RATIO = 0.6


def run(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.bench_service_speed")
    parser.add_argument("--count", type=int, default=DEFAULT_COUNT)
    parser.add_argument("--duration", type=int, default=8, help="seconds per wrk run")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE)
    parser.add_argument("--before", type=Path, default=None, help="another assay's src folder")
    parser.add_argument(
        "--before-store",
        default=None,
        help="the store the --before build serves (default: the same; a copy in the "
        "stored format that build reads when the formats differ)",
    )
    parser.add_argument("--classes", default=",".join(("cveId", *CLASSES)))
    args = parser.parse_args(argv)
    wanted = set(args.classes.split(","))

    results: dict[str, Any] = {"machine": _machine(), "count": args.count, "cpu": _cpu_model()}
    print(f"machine: {results['machine']} {results['cpu']}", flush=True)
    folder, manifest, store, paths = corpus_store(args.source, args.count, "nvd", "service-speed")
    store.warm()

    builds = {"after": _assay(store.url, None)}
    if args.before is not None:
        builds["before"] = _assay(args.before_store or store.url, args.before.resolve())
    with contextlib.ExitStack() as stack:
        bases = {name: stack.enter_context(_server(spec)) for name, spec in builds.items()}
        floor = stack.enter_context(_server(_hello_serve()))
        if "cveId" in wanted:
            results["cveId"] = _cve_id(bases, floor, paths, args.duration, args.rounds)
        queries = dict(Queries(manifest, folder, random.Random(DEFAULT_SEED)).sequential_classes())
        for number, name in enumerate(c for c in CLASSES if c in wanted):
            order = list(bases.items())
            if number % 2:
                order.reverse()
            figures: dict[str, Any] = {}
            for build, base in order:
                store.warm()
                if args.before_store:
                    BenchStore(args.before_store).warm()
                measured = _sequential(name, base, queries[name])
                figures[build] = {"p50_ms": round(measured.p50_ms, 2),
                                  "p99_ms": round(measured.p99_ms, 2),
                                  "max_ms": round(measured.max_ms, 1),
                                  "requests": measured.requests}  # fmt: skip
            figures["target"] = TARGETS[name]
            figures["load"] = [round(x, 2) for x in os.getloadavg()]
            print(f"  {name}: {json.dumps(figures)}", flush=True)
            results[name] = figures
    results["load_at_end"] = [round(x, 2) for x in os.getloadavg()]
    (OUT / "service-speed-results.json").write_text(json.dumps(results, indent=1))


def _assay(url: str, source: Path | None) -> tuple[list[str], dict[str, str]]:
    """`assay serve --workers 2` on `url`, from `source` when given."""
    command = [sys.executable, "-m", "assay", "serve", "--store", url, "--workers", "2"]
    return command, ({"PYTHONPATH": str(source)} if source is not None else {})


def _cve_id(
    bases: dict[str, str], floor: str, paths: Path, duration: int, rounds: int
) -> dict[str, Any]:
    contenders = [*bases.items(), ("floor", floor)]
    for _, url in contenders:
        _wrk(url, paths, 8, 2)  # warm both workers of each up
    best: dict[str, float] = dict.fromkeys(dict(contenders), 0.0)
    ratios: dict[str, list[float]] = {name: [] for name in bases}
    for number in range(rounds):
        shift = number % len(contenders)
        order = contenders[shift:] + contenders[:shift]
        this_round: dict[str, float] = {}
        for name, url in order:
            result = _wrk(url, paths, 32, duration)
            this_round[name] = result["requests"] / (result["duration_us"] / 1e6)
            best[name] = max(best[name], this_round[name])
        for name in bases:
            ratios[name].append(this_round[name] / this_round["floor"])
        print(f"  cveId round {number + 1}: {json.dumps({k: round(v) for k, v in this_round.items()})}"
              f" load {os.getloadavg()[0]:.1f}", flush=True)  # fmt: skip
    figures: dict[str, Any] = {f"{name}_rps": round(value) for name, value in best.items()}
    for name in bases:
        figures[f"{name}_ratio_of_best"] = round(best[name] / best["floor"], 3)
        figures[f"{name}_ratio_median_round"] = round(statistics.median(ratios[name]), 3)
    figures["target_ratio"] = TARGET_FLOOR_RATIO
    print(f"  cveId: {json.dumps(figures)}", flush=True)
    return figures


def _cpu_model() -> str:
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as cpuinfo:
        for line in cpuinfo:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return "unknown"


if __name__ == "__main__":
    run(sys.argv[1:])
