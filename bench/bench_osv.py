"""OSV at full size: import, `assay scan` of purls, `/v1/querybatch`, and accuracy.

    python -m bench osv                      (or: make bench)
    python -m bench.bench_osv [--data DIR] [--store URL] [--runs 3] [--components 1000]

`--data` (default: $ASSAY_BENCH_OSV_DATA, else /work/shared/data/vulns) holds the shared
OSV collection: `pypa-advisory-database/vulns`, `golang-vulndb/data/osv`,
`rustsec-osv/crates`, `ghsa-osv`, `osv-misc`.

1. `assay osv import` of every record of the collection into a new store, as a CLI
   process (wall time; target <= 30 s).
2. A CycloneDX SBOM of `--components` purls (PyPI, Go and crates.io packages the records
   name, at versions around their range edges, seeded), scanned with `assay scan BOM
   --format json` as a CLI process against the store (the PyPI, Go and crates data),
   `--runs` times (target <= 2 s).
3. `assay serve` on the store, and `POST /v1/querybatch` of the same 1,000 packages and
   versions, `--runs` times after one warm-up (target <= 1 s).
4. Precision and recall per ecosystem on the labelled corpus (bench/_osv_accuracy.py).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import orjson

from assay.osv.record import read_record
from bench._osv_accuracy import Case, corpus, measure

DEFAULT_DATA = Path(os.environ.get("ASSAY_BENCH_OSV_DATA", "/work/shared/data/vulns"))
FOLDERS = (
    "pypa-advisory-database/vulns",
    "golang-vulndb/data/osv",
    "rustsec-osv/crates",
    "ghsa-osv",
    "osv-misc",
)
MATCHED = ("pypa-advisory-database/vulns", "golang-vulndb/data/osv", "rustsec-osv/crates")
PURL_TYPES = {"PyPI": "pypi", "Go": "golang", "crates.io": "cargo"}
TARGETS = {"import": 30.0, "scan": 2.0, "querybatch": 1.0}


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


# Processes as installed: with their byte code cached (a shell may set
# PYTHONDONTWRITEBYTECODE, which makes every start compile assay anew).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _timed(argv: list[str]) -> tuple[float, subprocess.CompletedProcess[bytes]]:
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, check=False, env=ENV)
    return time.perf_counter() - started, done


def _purl(ecosystem: str, name: str, version: str) -> str:
    kind = PURL_TYPES[ecosystem]
    if kind == "golang":
        return f"pkg:golang/{name}@v{version}"
    return f"pkg:{kind}/{name}@{version}"


def run(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="bench_osv")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--store", help="store URL (default: a new SQLite file)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--components", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=19)
    parser.add_argument(
        "--with-nvd",
        type=int,
        default=0,
        metavar="COUNT",
        help="first import the NVD corpus of bench/nvd_corpus.py (COUNT CVEs, e.g. 340000) "
        "into the store, so that the scan reads both sources",
    )
    parser.add_argument(
        "--reuse-store",
        action="store_true",
        help="with --store naming a SQLite file that exists: measure again without importing",
    )
    args = parser.parse_args(argv)
    folders = [args.data / folder for folder in FOLDERS if (args.data / folder).exists()]
    if not folders:
        print(f"no OSV data under {args.data}: give --data or $ASSAY_BENCH_OSV_DATA")
        return
    python = sys.executable
    with tempfile.TemporaryDirectory(prefix="assay-bench-osv-") as scratch:
        store = args.store or f"sqlite:///{Path(scratch) / 'osv.db'}"
        reuse = args.reuse_store and Path(store.removeprefix("sqlite://")).exists()
        if args.with_nvd and not reuse:
            from bench.nvd_corpus import generate

            folder = generate(count=args.with_nvd, source=args.data.parent / "nvd")
            took, done = _timed(
                [python, "-m", "assay", "nvd", "import", "--store", store,
                 *map(str, sorted(folder.glob("cves-*.jsonl.gz")))]
            )  # fmt: skip
            print(f"nvd import of {args.with_nvd} CVEs: {took:.1f} s, exit {done.returncode}")
        if not reuse:
            took, done = _timed(
                [python, "-m", "assay", "osv", "import", "--store", store, "--json",
                 *map(str, folders)]
            )  # fmt: skip
            summary = json.loads(done.stdout or b"{}")
            print(
                f"osv import: {took:.1f} s (target {TARGETS['import']:g} s), "
                f"{summary.get('records')}, rejected {summary.get('rejected')}, "
                f"skipped {summary.get('skipped')}, exit {done.returncode}"
            )

        records = []
        for folder in MATCHED:
            for path in sorted((args.data / folder).rglob("*")):
                if path.suffix in (".json", ".yaml"):
                    record = read_record(path.read_bytes(), str(path))
                    records.append((record, orjson.loads(record.raw)))
        cases = corpus(records)
        for ecosystem, score in sorted(measure(cases).items()):
            print(
                f"accuracy {ecosystem}: {score.cases} cases, precision {score.precision:.4f}, "
                f"recall {score.recall:.4f} (tp {score.tp}, fp {score.fp}, fn {score.fn}, "
                f"tn {score.tn})"
            )

        # One version of each of `--components` distinct packages, as an SBOM lists them.
        chooser = random.Random(args.seed)
        by_package: dict[tuple[str, str], list[Case]] = {}
        for case in cases:
            by_package.setdefault((case.ecosystem, case.name), []).append(case)
        packages = sorted(by_package)
        chooser.shuffle(packages)
        picked = [chooser.choice(by_package[key]) for key in packages[: args.components]]
        components = [
            {
                "type": "library",
                "bom-ref": f"c{i}",
                "name": case.name,
                "version": case.version,
                "purl": _purl(case.ecosystem, case.name, case.version),
            }
            for i, case in enumerate(picked)
        ]
        bom = Path(scratch) / "bom.json"
        bom.write_text(
            json.dumps({"bomFormat": "CycloneDX", "specVersion": "1.5", "version": 1,
                        "components": components})
        )  # fmt: skip
        times = []
        findings = 0
        for _ in range(args.runs + 1):
            took, done = _timed(
                [python, "-m", "assay", "scan", str(bom), "--store", store, "--format", "json",
                 "--max-age", "100000"]
            )  # fmt: skip
            times.append(took)  # (the first run, a warm-up, is left out below)
            result = json.loads(done.stdout)
            findings = sum(len(c["vulnerabilities"]) for c in result["components"])
        times = times[1:]
        print(
            f"scan {len(components)} purls: median {statistics.median(times):.2f} s "
            f"(runs {', '.join(f'{t:.2f}' for t in times)}; target {TARGETS['scan']:g} s), "
            f"{findings} findings, {len(result['unidentified'])} unidentified"
        )

        port = _free_port()
        server = subprocess.Popen(
            [python, "-m", "assay", "serve", "--store", store, "--port", str(port),
             "--reserve-memory", "0"],
            stderr=subprocess.DEVNULL, env={**ENV, "ASSAY_RESERVE_MIB": "0"},
        )  # fmt: skip
        try:
            base = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + 60
            while True:
                try:
                    httpx.get(f"{base}/readyz", timeout=2)
                    break
                except httpx.TransportError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.2)
            queries = [
                {"package": {"ecosystem": c.ecosystem, "name": c.name}, "version": c.version}
                for c in picked
            ]
            body = orjson.dumps({"queries": queries})
            with httpx.Client(timeout=60) as client:
                client.post(f"{base}/v1/querybatch", content=body)  # warm-up
                times = []
                for _ in range(args.runs):
                    started = time.perf_counter()
                    answer = client.post(f"{base}/v1/querybatch", content=body)
                    times.append(time.perf_counter() - started)
                hits = sum(len(r.get("vulns", [])) for r in answer.json()["results"])
            print(
                f"/v1/querybatch of {len(queries)} queries: median "
                f"{statistics.median(times):.3f} s (runs {', '.join(f'{t:.3f}' for t in times)}; "
                f"target {TARGETS['querybatch']:g} s), {hits} ids"
            )
        finally:
            server.terminate()
            server.wait(timeout=30)


if __name__ == "__main__":
    run(sys.argv[1:])
