"""The CPU one `cveId` request costs inside the server, whatever the machine's load.

    python -m bench.bench_request_path [--store URL] [--requests N] [--rounds R]
                                       [--profile] [--encoding gzip] [--pages]

The app `assay serve` runs (the pages in front of the API, every service layer: ETag,
compression, metrics counted into multiprocess files, the Host allow-list of a loopback
server; no rate limit) and the HTTP floor's app of `bench nvd` (a constant Starlette
answer) are driven in this process through ASGI, one request at a time, taking turns:
the CPU time per request (`time.process_time`, best of the rounds) of each, and their
ratio. No socket and no HTTP parsing: this is the part of a request that is ours.
`--pages` measures 2000-record pages at random offsets instead (each asked once, so
their records are read cold, as `bench service_speed` asks them; e.g. `--requests 30
--rounds 3`).

`--profile` prints where the time goes (cProfile, sorted by own time). For instruction
counts, which no other process on the machine changes, run it under callgrind twice
with different `--requests` and take the difference:

    valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.%p \
        .venv/bin/python -m bench.bench_request_path --requests 2000 --rounds 1 --only assay
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.bench_nvd import API, OUT, hello_app
from bench.nvd_corpus import DEFAULT_COUNT, DEFAULT_SEED

ASGIApp = Any


def _scope(query: str, encoding: str | None) -> dict[str, Any]:
    headers = [(b"host", b"127.0.0.1:8000")]
    if encoding:
        headers.append((b"accept-encoding", encoding.encode()))
    return {
        "type": "http", "asgi": {"version": "3.0", "spec_version": "2.4"},
        "http_version": "1.1", "method": "GET", "scheme": "http", "path": API,
        "raw_path": API.encode(), "query_string": query.encode(),
        "root_path": "", "headers": headers, "client": ("127.0.0.1", 40000),
        "server": ("127.0.0.1", 8000), "state": {},
    }  # fmt: skip


async def _receive() -> dict[str, Any]:
    return {"type": "http.request", "body": b"", "more_body": False}


class _Sink:
    """Keeps the last answer's status (checked) and nothing else."""

    def __init__(self) -> None:
        self.status = 0

    async def __call__(self, message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            self.status = message["status"]


async def _drive(app: ASGIApp, queries: list[str], count: int, encoding: str | None) -> float:
    """CPU microseconds per request over `count` requests."""
    sink = _Sink()
    started = time.process_time()
    for number in range(count):
        await app(_scope(queries[number % len(queries)], encoding), _receive, sink)
    spent = time.process_time() - started
    if sink.status != 200:
        raise SystemExit(f"the last answer was {sink.status}")
    return spent / count * 1e6


def serving_app(url: str) -> ASGIApp:
    """The app of `assay serve --workers 2` on a loopback address, defaults otherwise."""
    from assay.nvd.server.app import ServerSettings
    from assay.nvd.server.memory import prepare_serving_process
    from assay.nvd.server.metrics import MULTIPROCESS_ENV
    from assay.nvd.server.service import ServiceSettings
    from assay.nvd.storage import open_store
    from assay.web.app import WebSettings, create_web_app
    from assay.web.hosts import default_allowed_hosts

    os.environ.setdefault(MULTIPROCESS_ENV, tempfile.mkdtemp(prefix="assay-metrics-"))
    prepare_serving_process()  # (as `assay serve`'s workers do: memory kept for reuse)
    service = ServiceSettings(allowed_hosts=default_allowed_hosts("127.0.0.1"))
    store = open_store(url, timeout=service.store_timeout)
    return create_web_app(store, WebSettings(nvd=ServerSettings()), service)


async def _lifespan(app: ASGIApp) -> asyncio.Future[None]:
    """Start the app as uvicorn does (its start-up warms what the first request needs)."""
    messages = [{"type": "lifespan.startup"}]

    async def receive() -> dict[str, Any]:
        if messages:
            return messages.pop()
        await asyncio.Event().wait()  # (never shut down: the process ends)
        return {}

    started = asyncio.Event()

    async def send(message: dict[str, Any]) -> None:
        if message["type"].startswith("lifespan.startup"):
            started.set()

    task = asyncio.ensure_future(
        app({"type": "lifespan", "asgi": {"version": "3.0"}, "state": {}}, receive, send)
    )
    await started.wait()
    return task


def run(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.bench_request_path")
    parser.add_argument("--store", default=f"sqlite:///{OUT / f'nvd-{DEFAULT_COUNT}.db'}")
    parser.add_argument(
        "--paths", type=Path, default=OUT / "nvd-wrk-paths.txt", help="cveId paths, one a line"
    )
    parser.add_argument("--requests", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--encoding", default=None, help="Accept-Encoding to send")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument(
        "--pages",
        action="store_true",
        help="2000-record pages at random offsets instead of cveId look-ups",
    )
    parser.add_argument("--only", choices=["assay", "floor"], default=None)
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="instructions per request of each app, under callgrind (slow: a few minutes)",
    )
    args = parser.parse_args(argv)
    if args.instructions:
        _instructions(args)
        return
    if args.pages:
        queries = _page_queries(args.requests * (args.rounds + 1))
    else:
        queries = [line.split("?", 1)[1] for line in args.paths.read_text().split()]
    best = asyncio.run(_measure(args, queries))
    if not best:
        return
    figures: dict[str, Any] = {k: round(v, 2) for k, v in best.items()}
    figures["load"] = [round(x, 2) for x in os.getloadavg()]
    if "assay" in best and "floor" in best:
        figures["ratio"] = round(best["assay"] / best["floor"], 2)
    what = "2000-record page" if args.pages else "cveId request"
    print(f"CPU per {what}, in-process (us): {json.dumps(figures)}", flush=True)


def _page_queries(count: int) -> list[str]:
    """`count` 2000-record pages at seeded random offsets of the corpus, a third with
    `noRejected` (as `bench nvd` asks them), each asked once."""
    rng = random.Random(DEFAULT_SEED)
    return [
        f"resultsPerPage=2000&startIndex={rng.randrange(0, DEFAULT_COUNT - 2000)}"
        + ("&noRejected" if number % 3 == 0 else "")
        for number in range(count)
    ]


async def _measure(args: argparse.Namespace, queries: list[str]) -> dict[str, float]:
    apps = {"assay": serving_app(args.store), "floor": hello_app}
    if args.only:
        apps = {args.only: apps[args.only]}
    running = []
    for app in apps.values():
        running.append(await _lifespan(app))
        await _drive(app, queries, 3 if args.pages else 500, args.encoding)  # warm-up
    try:
        if args.profile:
            import cProfile
            import pstats

            profiler = cProfile.Profile()
            profiler.enable()
            await _drive(next(iter(apps.values())), queries, args.requests, args.encoding)
            profiler.disable()
            pstats.Stats(profiler).sort_stats("tottime").print_stats(40)
            return {}
        best = dict.fromkeys(apps, float("inf"))
        for number in range(args.rounds):
            # (pages: each round asks pages no round asked before)
            these = queries[(number + 1) * args.requests :] if args.pages else queries
            for name, app in apps.items():
                spent = await _drive(app, these, args.requests, args.encoding)
                best[name] = min(best[name], spent)
        return best
    finally:
        for task in running:
            task.cancel()


def _instructions(args: argparse.Namespace) -> None:
    """Instructions per request: two runs of each app under callgrind, `small` and
    `large` requests after the same warm-up, so start-up cancels out in the difference."""
    small, large = 500, 1500
    figures: dict[str, Any] = {}
    for name in ("assay", "floor"):
        totals = []
        for count in (small, large):
            with tempfile.TemporaryDirectory() as folder:
                out = Path(folder) / "callgrind.out"
                command = [
                    "valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                    sys.executable, "-m", "bench.bench_request_path", "--store", args.store,
                    "--paths", str(args.paths), "--requests", str(count), "--rounds", "1",
                    "--only", name,
                ]  # fmt: skip
                if args.encoding:
                    command += ["--encoding", args.encoding]
                subprocess.run(command, check=True, capture_output=True)
                totals.append(_callgrind_total(out))
        figures[name] = round((totals[1] - totals[0]) / (large - small))
        print(f"  {name}: {figures[name]:,} instructions per request", flush=True)
    figures["ratio"] = round(figures["assay"] / figures["floor"], 2)
    print(f"instructions per cveId request, in-process: {json.dumps(figures)}", flush=True)


def _callgrind_total(path: Path) -> int:
    for line in path.read_text().splitlines():
        if line.startswith(("summary:", "totals:")):
            return int(line.split()[1])
    raise SystemExit(f"no totals in {path}")


if __name__ == "__main__":
    run(sys.argv[1:])
