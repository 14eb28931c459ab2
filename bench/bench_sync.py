"""The NVD mirror at full size, and the client's page parse against nvd-api and nvdlib.

    python -m bench sync
    python -m bench.bench_sync [--count N] [--seed S] [--fresh-upstream] [--skip-mirror]
                               [--skip-parse] [--repeat N]

1. Generate (or reuse) the corpus of `bench/nvd_corpus.py` (340,000 CVEs by default) and
   import it into an upstream SQLite store, `bench/out/sync-upstream-N.db` (kept and reused
   once complete; `--fresh-upstream` rebuilds it).
2. `assay serve` it on a loopback port, then time `assay nvd sync` into a fresh SQLite
   mirror with the default options (pacing is off for a loopback upstream; 2000-CVE
   pages): wall time, CPU, peak RSS, requests. The mirror is then compared with the
   upstream record by record (byte-equal stored JSON, through the search API).
3. Parse one 2000-record page, in the same run and on the same bodies:
   * assay: `assay.nvd.client.parse_cves` (typed records, each keeping its raw JSON);
     also with every record's `raw` dict decoded;
   * nvd-api 0.9.1: `ApiClient.deserialize(response, (CveOas,), True)`, what its
     `get_cves` does with a response (type-checked models);
   * nvdlib 0.9.0: `json.loads` then `__convert("cve", ...)` per record, what its
     `searchCVE` does with a response.
   nvd-api rejects the fields NVD added after 2023 (cveTags, cvssMetricV40), so every
   parser is timed on the page as `/compat/nvd-api/` serves it; assay and nvdlib also on
   the full current page. Best and median of `--repeat` runs; ratios to assay.

Targets (2 cores, SQLite): mirror of 300,000 CVEs <= 120 s; page parse <= 60 ms.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx

from bench._rss import PeakRss
from bench.nvd_corpus import DEFAULT_COUNT, DEFAULT_OUT, DEFAULT_SEED, DEFAULT_SOURCE, generate

REPO_ROOT = Path(__file__).resolve().parent.parent
OUT = REPO_ROOT / "bench" / "out"
TARGET_MIRROR_S_PER_300K = 120.0
TARGET_PARSE_MS = 60.0
PAGE = 2000


def run(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.bench_sync")
    parser.add_argument("--count", type=int, default=DEFAULT_COUNT)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE, help="real NVD records")
    parser.add_argument("--corpus-out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--fresh-upstream", action="store_true", help="re-import the upstream")
    parser.add_argument("--skip-mirror", action="store_true")
    parser.add_argument("--skip-parse", action="store_true")
    parser.add_argument("--repeat", type=int, default=9, help="parse runs per contender")
    args = parser.parse_args(argv)

    results: dict[str, Any] = {"machine": _machine()}
    print(f"machine: {results['machine']}", flush=True)
    folder = generate(args.source, args.corpus_out, count=args.count, seed=args.seed)
    OUT.mkdir(parents=True, exist_ok=True)
    upstream = _upstream(folder, args.count, fresh=args.fresh_upstream)
    with _serving(upstream) as base:
        if not args.skip_mirror:
            results["mirror"] = _mirror(base, upstream, args.count)
        if not args.skip_parse:
            results["parse"] = _parse(base, args.repeat, min(100_000, args.count - PAGE))
    (OUT / "sync-results.json").write_text(json.dumps(results, indent=1))
    _report(results)


# -- upstream -------------------------------------------------------------------------------


def _upstream(folder: Path, count: int, *, fresh: bool) -> Path:
    """The corpus in a SQLite store (imported once, then reused)."""
    store = OUT / f"sync-upstream-{count}.db"
    done = OUT / f"sync-upstream-{count}.complete"
    if done.exists() and store.exists() and not fresh:
        print(f"reusing the upstream store {store}", flush=True)
        return store
    done.unlink(missing_ok=True)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{store}{suffix}").unlink(missing_ok=True)
    files = sorted(folder.glob("cves-*.jsonl.gz"))
    print(f"importing {len(files)} files into the upstream {store} ...", flush=True)
    started = time.perf_counter()
    with (OUT / "sync-upstream-import.log").open("wb") as log:
        subprocess.run(
            [sys.executable, "-m", "assay", "nvd", "import", "--store", f"sqlite:///{store}"]
            + [str(path) for path in files],
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=REPO_ROOT,
            check=True,
        )
    print(f"upstream imported in {time.perf_counter() - started:.0f} s", flush=True)
    done.write_text("complete\n")
    return store


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def _serving(store: Path) -> Iterator[str]:
    """`assay serve` (one worker: the mirror sends one request at a time) on loopback."""
    port = _free_port()
    log = (OUT / "sync-server.log").open("ab")
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            *("assay", "serve", "--store", f"sqlite:///{store}"),
            "--port",
            str(port),
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=REPO_ROOT,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                raise SystemExit(f"assay serve exited; see {OUT / 'sync-server.log'}")
            with contextlib.suppress(httpx.HTTPError):
                httpx.get(f"{base}/openapi.json", timeout=2).raise_for_status()
                break
            if time.monotonic() > deadline:
                raise SystemExit(f"assay serve did not start at {base}")
            time.sleep(0.2)
        yield base
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=20)
        log.close()


# -- 1. the mirror ---------------------------------------------------------------------------


def _mirror(base: str, upstream: Path, count: int) -> dict[str, Any]:
    mirror = OUT / "sync-mirror.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{mirror}{suffix}").unlink(missing_ok=True)
    command = [sys.executable, "-m", "assay", "nvd", "sync", "--store", f"sqlite:///{mirror}"]
    command += ["--upstream", f"{base}/rest/json"]
    print(f"mirroring: assay nvd sync --store sqlite:///{mirror} --upstream {base}/rest/json")
    log_path = OUT / "sync-mirror.log"
    with log_path.open("wb") as log:
        started = time.perf_counter()
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, cwd=REPO_ROOT)
        peak_rss = PeakRss(process)
        _, status, usage = os.wait4(process.pid, 0)
        elapsed = time.perf_counter() - started
    code = os.waitstatus_to_exitcode(status)
    summary = log_path.read_text()
    print(summary, flush=True)
    if code != 0:
        raise SystemExit(f"assay nvd sync exited with {code}; see {log_path}")
    print("comparing the mirror with the upstream, record by record ...", flush=True)
    compared, different = _compare(f"sqlite:///{upstream}", f"sqlite:///{mirror}")
    size = sum(
        Path(f"{mirror}{s}").stat().st_size
        for s in ("", "-wal", "-shm")
        if Path(f"{mirror}{s}").exists()
    )
    return {
        "count": count,
        "seconds": round(elapsed, 1),
        "seconds_per_300k": round(elapsed * 300_000 / count, 1),
        "cves_per_s": round(count / elapsed),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 1),
        "peak_rss_mib": peak_rss.peak_mib,
        "mirror_mb": round(size / 1e6),
        "compared": compared,
        "different": different,
        "requests": _requests(summary),
        "stages_s": _stages(summary),
        "load_at_end": [round(x, 2) for x in os.getloadavg()],
    }


def _requests(summary: str) -> int | None:
    for line in summary.splitlines():
        if "request(s)" in line:
            return int(line.split()[0])
    return None


def _stages(summary: str) -> dict[str, float]:
    """Where the sync's time went, from its summary (`fetching 30.6 s, checking ...`)."""
    text = " ".join(summary.split())
    stages = {}
    for name in ("fetching", "checking", "writing with checkpoints", "waiting for pages"):
        _, found, rest = text.partition(f"{name} ")
        if found:
            stages[name] = float(rest.split(" s", 1)[0])
    return stages


def _compare(upstream_url: str, mirror_url: str) -> tuple[int, int]:
    """(records compared, records missing or different): CVEs through the search API."""
    from assay.nvd.cve_query import parse_cve_query
    from assay.nvd.storage import open_store

    upstream, mirror = open_store(upstream_url), open_store(mirror_url)
    try:
        compared = different = 0
        start = 0
        while True:
            query = parse_cve_query([("resultsPerPage", str(PAGE)), ("startIndex", str(start))])
            ours, theirs = upstream.search_cves(query), mirror.search_cves(query)
            if ours.total != theirs.total:
                different += abs(ours.total - theirs.total)
            compared += len(ours.records)
            different += sum(a != b for a, b in zip(ours.records, theirs.records, strict=False))
            start += len(ours.records)
            if not ours.records or start >= ours.total:
                return compared, different
    finally:
        upstream.close()
        mirror.close()


# -- 2. parsing one page ---------------------------------------------------------------------


def _parse(base: str, repeat: int, index: int) -> dict[str, Any]:
    query = f"cves/2.0?resultsPerPage={PAGE}&startIndex={index}"
    full = httpx.get(f"{base}/rest/json/{query}", timeout=120).content
    compat = httpx.get(f"{base}/compat/nvd-api/rest/json/{query}", timeout=120).content
    print(
        f"\nparsing a {PAGE}-record page (startIndex {index}): "
        f"{len(full) / 2**20:.1f} MiB current, {len(compat) / 2**20:.1f} MiB nvd-api view",
        flush=True,
    )
    contenders: list[tuple[str, str, Callable[[bytes], object], bytes]] = [
        ("assay", "nvd-api view", _assay, compat),
        ("assay + raw dicts", "nvd-api view", _assay_raw, compat),
        ("nvd-api 0.9.1", "nvd-api view", _nvd_api(), compat),
        ("nvdlib 0.9.0", "nvd-api view", _nvdlib(), compat),
        ("assay", "current", _assay, full),
        ("assay + raw dicts", "current", _assay_raw, full),
        ("nvdlib 0.9.0", "current", _nvdlib(), full),
    ]
    rows: list[dict[str, Any]] = []
    for name, body_name, parse, body in contenders:
        runs = repeat if not name.startswith("nvd-api") else max(3, repeat // 3)
        try:
            times = _timed(parse, body, runs)
        except Exception as error:  # a peer that cannot read the page is reported, not fatal
            print(f"  {name:<18} {body_name:<13} fails: {type(error).__name__}: {error}"[:200])
            rows.append({"parser": name, "body": body_name, "error": f"{type(error).__name__}"})
            continue
        row = {
            "parser": name,
            "body": body_name,
            "best_ms": round(min(times) * 1000, 1),
            "median_ms": round(statistics.median(times) * 1000, 1),
            "runs": runs,
        }
        rows.append(row)
        print(f"  {name:<18} {body_name:<13} best {row['best_ms']:8.1f} ms  median "
              f"{row['median_ms']:8.1f} ms", flush=True)  # fmt: skip
    return {"page_records": PAGE, "start_index": index, "bytes_current": len(full),
            "bytes_compat": len(compat), "rows": rows}  # fmt: skip


def _timed(parse: Callable[[bytes], object], body: bytes, runs: int) -> list[float]:
    parse(body)  # warm up (imports, caches)
    times = []
    for _ in range(runs):
        gc.collect()
        started = time.perf_counter()
        result = parse(body)
        times.append(time.perf_counter() - started)
        del result
    return times


def _assay(body: bytes) -> object:
    from assay.nvd.client import parse_cves

    page = parse_cves(body)
    assert len(page.vulnerabilities) == PAGE
    return page


def _assay_raw(body: bytes) -> object:
    from assay.nvd.client import parse_cves

    page = parse_cves(body)
    return [item.cve.raw for item in page.vulnerabilities]


def _nvd_api() -> Callable[[bytes], object]:
    from nvd_api.low_api.api_client import ApiClient
    from nvd_api.low_api.model.cve_oas import CveOas

    client = ApiClient()

    class Response:  # what ApiClient.deserialize reads of a urllib3-based RESTResponse
        def __init__(self, data: bytes) -> None:
            self.data = data

        def getheader(self, name: str, default: str | None = None) -> str | None:
            return default

    def parse(body: bytes) -> object:
        result = client.deserialize(Response(body), (CveOas,), True)
        assert len(result.vulnerabilities) == PAGE
        return result

    return parse


def _nvdlib() -> Callable[[bytes], object]:
    import nvdlib.classes

    convert = getattr(nvdlib.classes, "__convert")

    def parse(body: bytes) -> object:
        raw = json.loads(body)  # what requests' response.json() does
        return [convert("cve", item["cve"]) for item in raw["vulnerabilities"]]

    return parse


# -- report ------------------------------------------------------------------------------------


def _machine() -> dict[str, Any]:
    memory = 0
    with contextlib.suppress(OSError), open("/proc/meminfo") as meminfo:
        memory = int(meminfo.readline().split()[1]) // 1024
    return {
        "cores": os.cpu_count(),
        "memory_mib": memory,
        "python": sys.version.split()[0],
        "load_at_start": [round(x, 2) for x in os.getloadavg()],
    }


def _ratio(value: float, target: float) -> str:
    ratio = value / target
    return f"{ratio:5.2f}x of target {'ok' if ratio <= 1 else 'MISSED'}"


def _report(results: dict[str, Any]) -> None:
    print("\nsummary (targets on 2 cores, SQLite)")
    mirror = results.get("mirror")
    if mirror:
        print(
            f"mirror: {mirror['count']} CVEs in {mirror['seconds']} s ({mirror['cves_per_s']} "
            f"CVEs/s, {mirror['cpu_s']} s CPU in the sync process, peak RSS "
            f"{mirror['peak_rss_mib']} MiB, {mirror['requests']} requests)"
        )
        print(f"mirror stages (s): {mirror['stages_s']}; load at end {mirror['load_at_end']}")
        print(
            f"mirror per 300,000 CVEs: {mirror['seconds_per_300k']} s  "
            f"{_ratio(mirror['seconds_per_300k'], TARGET_MIRROR_S_PER_300K)}"
        )
        print(
            f"mirror equals upstream: {mirror['compared']} records compared, "
            f"{mirror['different']} missing or different"
        )
    parse = results.get("parse")
    if parse:
        rows = [row for row in parse["rows"] if "best_ms" in row]
        for body in ("nvd-api view", "current"):
            ours = next(r for r in rows if r["parser"] == "assay" and r["body"] == body)
            print(
                f"page parse, {body}: assay {ours['best_ms']} ms (median {ours['median_ms']})  "
                f"{_ratio(ours['median_ms'], TARGET_PARSE_MS)}"
            )
            for row in rows:
                if row["body"] == body and row is not ours:
                    print(
                        f"{'':<6}{row['parser']:<18} {row['median_ms']:8.1f} ms median: "
                        f"{row['median_ms'] / ours['median_ms']:6.1f}x assay"
                    )


if __name__ == "__main__":
    run(sys.argv[1:])
