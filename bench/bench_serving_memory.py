"""A serving worker's memory under large answers and clients that read slowly or never.

    python -m bench serving_memory
    python -m bench.bench_serving_memory [--count N] [--large N] [--rounds N]

On the corpus of `bench/nvd_corpus.py` (60,000 CVEs, the soak's store) plus `--large`
copies of its records with 24 KB longer descriptions (so that a 2000-record page of them
is ~60 MB, the "large records" of the attack review), one `assay serve` worker:

1. 16 clients at once, each reading a 2000-record page of large records to the end,
   `--rounds` times;
2. 30 clients that ask for such a page and never read (a 4 KiB receive buffer), held
   until the send timeout (`--send-timeout 10`) drops them;
3. both at once.

The worker's VmRSS is sampled every 20 ms; its peak (VmHWM) is the figure. Target: at
most 1 GiB whatever the clients do. Results are printed and saved in
`bench/out/serving-memory-results.json`.
"""

from __future__ import annotations

import argparse
import gzip
import json
import socket
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import orjson

from bench._store import BenchStore
from bench.bench_nvd import API, OUT, _import, _machine, _server
from bench.nvd_corpus import DEFAULT_OUT, DEFAULT_SEED, DEFAULT_SOURCE, generate

DEFAULT_COUNT = 60_000
DEFAULT_LARGE = 8_000
PADDING = " (padding)" * 2400  # ~24 KB more description a record
STALLED = 30
CONCURRENT = 16
SEND_TIMEOUT = 10
TARGET_MIB = 1024


def run(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.bench_serving_memory")
    parser.add_argument("--count", type=int, default=DEFAULT_COUNT)
    parser.add_argument("--large", type=int, default=DEFAULT_LARGE)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE)
    args = parser.parse_args(argv)

    results: dict[str, Any] = {"machine": _machine(), "count": args.count, "large": args.large}
    print(f"machine: {results['machine']}", flush=True)
    folder = generate(args.source, DEFAULT_OUT, count=args.count, seed=DEFAULT_SEED)
    OUT.mkdir(parents=True, exist_ok=True)
    store = BenchStore.sqlite(OUT / f"serving-memory-{args.count}-{args.large}.db")
    if not store.exists():
        files = sorted(folder.glob("cves-*.jsonl.gz"))
        large = OUT / f"large-{args.large}.jsonl.gz"
        _large_copies(files, large, args.large)
        results["import"] = _import(store, [*files, large], args.count + args.large)
    command = [
        sys.executable, "-m", "assay", "serve", "--store", store.url, "--workers", "1",
        "--send-timeout", str(SEND_TIMEOUT),
    ]  # fmt: skip
    with _server((command, {})) as base:
        worker = _worker_pid(base)
        total = httpx.get(f"{base}{API}?resultsPerPage=0").json()["totalResults"]
        # The large copies were published last: the last pages are theirs.
        pages = [
            f"{API}?resultsPerPage=2000&startIndex={total - 2000 * (1 + i % max(1, args.large // 2000))}"
            for i in range(CONCURRENT)
        ]
        size = len(httpx.get(base + pages[0], timeout=120).content)
        results["page_mb"] = round(size / 1e6, 1)
        results["rss_at_start_mib"] = _rss(worker, "VmRSS")
        print(f"page of large records: {size / 1e6:.1f} MB; worker at {_rss(worker, 'VmRSS')} MiB")
        with _Sampler(worker) as sampler:
            for _ in range(args.rounds):
                _concurrent(base, pages)
        results["concurrent_peak_mib"] = sampler.peak
        print(f"{CONCURRENT} concurrent 2000-record pages x {args.rounds}: peak {sampler.peak} MiB")
        with _Sampler(worker) as sampler:
            _stalled(base, pages[0], SEND_TIMEOUT + 2)
        results["stalled_peak_mib"] = sampler.peak
        print(f"{STALLED} stalled readers: peak {sampler.peak} MiB")
        with _Sampler(worker) as sampler:
            holder = threading.Thread(target=_stalled, args=(base, pages[0], SEND_TIMEOUT + 2))
            holder.start()
            time.sleep(1)
            for _ in range(args.rounds):
                _concurrent(base, pages)
            holder.join()
        results["both_peak_mib"] = sampler.peak
        results["rss_at_end_mib"] = _rss(worker, "VmRSS")
        results["vm_hwm_mib"] = _rss(worker, "VmHWM")
        print(f"both at once: peak {sampler.peak} MiB; worker's VmHWM {results['vm_hwm_mib']} MiB")
    verdict = "ok" if results["vm_hwm_mib"] <= TARGET_MIB else "MISSED"
    print(
        f"peak RSS of the worker: {results['vm_hwm_mib']} MiB (target <= {TARGET_MIB}: {verdict})"
    )
    (OUT / "serving-memory-results.json").write_text(json.dumps(results, indent=1))


def _large_copies(files: list[Path], out: Path, count: int) -> None:
    """`count` corpus records again, each under a new id with a longer description, all
    published after the corpus (so the last pages are theirs)."""
    lines: list[bytes] = []
    for path in files:
        for line in gzip.decompress(path.read_bytes()).splitlines():
            if len(lines) >= count:
                break
            record = orjson.loads(line)
            number = len(lines)
            descriptions = [{"lang": "en", "value": record["descriptions"][0]["value"] + PADDING}]
            lines.append(
                orjson.dumps(
                    {
                        **record,
                        "id": f"CVE-2099-{number:05d}",
                        "published": "2099-01-01T00:00:00.000",
                        "lastModified": "2099-01-01T00:00:00.000",
                        "descriptions": descriptions,
                    }
                )
            )
    out.write_bytes(gzip.compress(b"\n".join(lines), compresslevel=1))


def _concurrent(base: str, pages: list[str]) -> None:
    def read(path: str) -> int:
        with httpx.Client(timeout=300) as client:
            answer = client.get(base + path, headers={"accept-encoding": "identity"})
            assert answer.status_code == 200, answer.status_code
            return len(answer.content)

    with ThreadPoolExecutor(len(pages)) as pool:
        list(pool.map(read, pages))


def _stalled(base: str, path: str, hold: float) -> None:
    address = urlsplit(base)
    sockets = []
    try:
        for _ in range(STALLED):
            sock = socket.socket()
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            sock.connect((address.hostname or "127.0.0.1", address.port or 80))
            sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
            sockets.append(sock)
        time.sleep(hold)
    finally:
        for sock in sockets:
            sock.close()


def _worker_pid(base: str) -> int:
    """The serving process (with one worker, uvicorn serves in the process it started)."""
    port = str(urlsplit(base).port)
    for stat in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            text = stat.read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if " serve " in text and f"--port {port}" in text:
            return int(stat.parent.name)
    raise SystemExit("no serving process found")


def _rss(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) // 1024
    return 0


class _Sampler:
    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(0.02):
            self.peak = max(self.peak, _rss(self.pid, "VmRSS"))

    def __enter__(self) -> _Sampler:
        self.peak = _rss(self.pid, "VmRSS")
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()


if __name__ == "__main__":
    run(sys.argv[1:])
