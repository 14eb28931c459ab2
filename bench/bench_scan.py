"""`assay scan` at full size: CycloneDX SBOMs of identified components against the corpus.

    python -m bench scan                         (or: make bench)
    python -m bench.bench_scan [--count N] [--seed S] [--source DIR] [--sizes 1000,10000]
                               [--reuse-store] [--runs 3] [--store URL]
                               [--peer] [--peer-sizes 1000]

1. Generate (or reuse) the corpus of `bench/nvd_corpus.py` (340,000 CVEs by default;
   `--count 20000` for a quick run) and import it into a SQLite store
   (`bench/out/scan-store-COUNT.db`; `--reuse-store` keeps one already there), or into
   the PostgreSQL schema `--store postgresql://...?schema=NAME` names (dropped first).
2. Build CycloneDX 1.5 JSON SBOMs of `--sizes` components, each identified by a CPE name
   taken from the corpus's vulnerable application criteria (part `a`): a literal version,
   or a bound inside a range. Names are distinct; the order is shuffled with the seed.
3. Run `assay scan BOM --store URL --format json` as a CLI process, `--runs` times per
   size (the store file read into the page cache first): wall time, peak RSS of the
   process (`bench/_rss.py`), components, findings.
4. `--peer`: cve-bin-tool 3.4 in its own virtualenv (`$TMPDIR/assay-bench-cve-bin-tool`,
   made with pip when missing, never in assay's environment) given the same records
   offline (its own NVD API 2.0 formatter and database populator, a year file at a time,
   no network; `bench/out/cbt-cache`) and the same SBOM (`--sbom cyclonedx --sbom-file`),
   timed the same way, for the `--peer-sizes`; the ratio is printed. See
   docs/performance.md for what can and cannot be compared.

Targets (2 cores): 1,000 components <= 2 s, 10,000 <= 10 s wall; peak RSS <= 300 MB.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

from bench._rss import PeakRss
from bench._store import BenchStore
from bench.nvd_corpus import DEFAULT_COUNT, DEFAULT_SEED, DEFAULT_SOURCE, generate

REPO_ROOT = Path(__file__).resolve().parent.parent
OUT = REPO_ROOT / "bench" / "out"
TARGETS = {1000: 2.0, 10000: 10.0}
RSS_TARGET_MIB = 300
_SPECIAL = set("abcdefghijklmnopqrstuvwxyz0123456789._-")


def _cpe_version(version: str) -> str | None:
    lowered = version.lower()
    return lowered if lowered and set(lowered) <= _SPECIAL else None


def component_names(corpus: Path, wanted: int, seed: int) -> list[str]:
    """Distinct CPE names of vulnerable application criteria, at real versions."""
    names: dict[str, None] = {}
    files = sorted(corpus.glob("cves-*.jsonl.gz"))
    random.Random(seed).shuffle(files)
    for path in files:
        with gzip.open(path) as lines:
            for line in lines:
                record = orjson.loads(line)
                record = record.get("cve", record)
                for configuration in record.get("configurations", []):
                    for node in configuration.get("nodes", []):
                        for match in node.get("cpeMatch", []):
                            parts = match["criteria"].split(":")
                            if not match.get("vulnerable") or parts[2] != "a":
                                continue
                            version = parts[5]
                            if version == "*":
                                bound = match.get("versionStartIncluding") or match.get(
                                    "versionEndIncluding"
                                )
                                version = _cpe_version(bound) if bound else None
                            elif version == "-":
                                version = None
                            if version:
                                parts[5] = version
                                names[":".join(parts)] = None
        if len(names) >= wanted * 3:
            break
    chosen = sorted(names)
    random.Random(seed).shuffle(chosen)
    return chosen[:wanted]


def write_bom(names: list[str], path: Path) -> None:
    components = [
        {
            "type": "library",
            "bom-ref": f"component-{index}",
            "name": name.split(":")[4],
            "version": name.split(":")[5],
            "cpe": name,
        }
        for index, name in enumerate(names)
    ]
    path.write_bytes(
        orjson.dumps(
            {"bomFormat": "CycloneDX", "specVersion": "1.5", "version": 1, "components": components}
        )
    )


def timed(
    command: list[str],
    env: dict[str, str] | None = None,
    ok: tuple[int, ...] | None = (0, 1),
    cwd: Path | None = None,
) -> tuple[float, int, int]:
    """Wall time, peak RSS (MiB) and exit code of a process (exit codes outside `ok` stop
    the benchmark; `ok=None` accepts any)."""
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    peak = PeakRss(process)
    _, stderr = process.communicate()
    wall = time.perf_counter() - started
    if ok is not None and process.returncode not in ok:
        raise SystemExit(
            f"{' '.join(command[:3])}... exited {process.returncode}: {stderr[-2000:]!r}"
        )
    return wall, peak.peak_mib, process.returncode


def run(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="bench_scan")
    parser.add_argument("--count", type=int, default=DEFAULT_COUNT)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE)
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--reuse-store", action="store_true")
    parser.add_argument("--peer", action="store_true", help="also run cve-bin-tool")
    parser.add_argument(
        "--peer-sizes",
        default="1000",
        help="the sizes cve-bin-tool is run for with --peer (it takes minutes per 1,000)",
    )
    parser.add_argument(
        "--store",
        help="store URL (default: a SQLite file in bench/out); a PostgreSQL URL needs "
        "?schema=NAME, which the benchmark drops and fills",
    )
    args = parser.parse_args(argv)
    OUT.mkdir(parents=True, exist_ok=True)
    corpus = generate(count=args.count, seed=args.seed, source=args.source)
    store = (
        BenchStore(args.store)
        if args.store
        else BenchStore.sqlite(OUT / f"scan-store-{args.count}.db")
    )
    if not (args.reuse_store and store.exists()):
        store.reset()
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "assay", "nvd", "import", "--store", store.url,
             *map(str, sorted(corpus.glob("cves-*.jsonl.gz")))],
            check=True, stdout=subprocess.DEVNULL,
        )  # fmt: skip
        print(f"imported {args.count} CVEs in {time.perf_counter() - started:.0f} s", flush=True)
    store.warm()
    sizes = [int(s) for s in args.sizes.split(",")]
    names = component_names(corpus, max(sizes), args.seed)
    results: dict[str, Any] = {"count": args.count, "sizes": {}}
    for size in sizes:
        bom = OUT / f"scan-bom-{size}.json"
        write_bom(names[:size], bom)
        out = OUT / f"scan-result-{size}.json"
        command = [sys.executable, "-m", "assay", "scan", str(bom), "--store", store.url,
                   "--format", "json", "--out", str(out)]  # fmt: skip
        runs = [timed(command) for _ in range(args.runs)]
        walls = [wall for wall, _, _ in runs]
        peak = max(rss for _, rss, _ in runs)
        document = orjson.loads(out.read_bytes())
        findings = sum(len(c["vulnerabilities"]) for c in document["components"])
        target = TARGETS.get(size)
        median = statistics.median(walls)
        print(
            f"assay scan, {size} components ({len(names[:size])} distinct CPE names): "
            f"wall median {median:.2f} s (runs {', '.join(f'{w:.2f}' for w in walls)})"
            + (f", target <= {target:.0f} s ({median / target:.2f}x)" if target else "")
            + f"; peak RSS {peak} MiB (target <= {RSS_TARGET_MIB}, {peak / RSS_TARGET_MIB:.2f}x); "
            f"{findings} findings, {len(document['unidentified'])} unidentified",
            flush=True,
        )
        entry: dict[str, Any] = {"wall_s": walls, "peak_rss_mib": peak, "findings": findings}
        if args.peer and str(size) in args.peer_sizes.split(","):
            entry["peer"] = _peer(corpus, bom, size)
            if entry["peer"].get("wall_s"):
                ratio = entry["peer"]["wall_s"] / median
                print(f"cve-bin-tool / assay wall time: {ratio:.1f}x", flush=True)
        results["sizes"][str(size)] = entry
    name = "scan-results-postgres.json" if store.is_postgres else "scan-results.json"
    (OUT / name).write_text(json.dumps(results, indent=2))


# -- cve-bin-tool ------------------------------------------------------------------------

PEER_VENV = Path(tempfile.gettempdir()) / "assay-bench-cve-bin-tool"
PEER_VERSION = "3.4"
PEER_SCRIPT = r"""
import gzip, inspect, json, sys, textwrap, time, pathlib
from cve_bin_tool.data_sources import nvd_source
from cve_bin_tool.data_sources.nvd_source import NVD_Source
from cve_bin_tool.cvedb import CVEDB
# cve-bin-tool 3.4's NVD API 2.0 formatter fails on every record without CVSS v2 or v3
# (the analysis backlog, CVSS 4.0-only records): it logs through `self.logger`, which
# is never set, and names the record `cve['id']` in a dict keyed 'ID'. Both slips are
# mended in memory (its own source, with the key name corrected); nothing else changes.
NVD_Source.logger = NVD_Source.LOGGER
code = inspect.getsource(NVD_Source.format_data_api2).replace("cve['id']", "cve['ID']")
namespace = dict(vars(nvd_source))
exec(textwrap.dedent(code), namespace)
NVD_Source.format_data_api2 = namespace["format_data_api2"]
cache = pathlib.Path(sys.argv[2])
cache.mkdir(parents=True, exist_ok=True)
started = time.perf_counter()
db = CVEDB(sources=[], cachedir=str(cache))
db.init_database()
source = NVD_Source(nvd_type="api2")
count = 0
for path in sorted(pathlib.Path(sys.argv[1]).glob("cves-*.jsonl.gz")):
    with gzip.open(path) as lines:
        records = [{"cve": json.loads(line)} for line in lines]
    count += len(records)
    db.data = [(source.format_data_api2(records), "NVD")]
    db.populate_db()
print(json.dumps({"build_s": time.perf_counter() - started, "cves": count}))
"""


def _peer(corpus: Path, bom: Path, size: int) -> dict[str, Any]:
    python = PEER_VENV / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(PEER_VENV)], check=True)
        subprocess.run(
            [str(python), "-m", "pip", "install", "-q", f"cve-bin-tool=={PEER_VERSION}"],
            check=True,
        )
    cache = OUT / "cbt-cache"
    database = cache / "cve.db"
    if not database.exists():
        built = subprocess.run(
            [str(python), "-c", PEER_SCRIPT, str(corpus), str(cache)],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        if built.returncode != 0:
            print(f"cve-bin-tool could not load the corpus: {built.stderr[-1500:]}", flush=True)
            return {"error": built.stderr[-1500:]}
        print(f"cve-bin-tool database built: {built.stdout.strip()}", flush=True)
    out = OUT / f"cbt-result-{size}.json"
    command = [str(PEER_VENV / "bin" / "cve-bin-tool"), "--offline", "--disable-version-check",
               "--disable-validation-check", "--sbom", "cyclonedx", "--sbom-file", str(bom),
               "--format", "json", "--output-file", str(out)]  # fmt: skip
    home = OUT / "cbt-home"
    (home / ".cache").mkdir(parents=True, exist_ok=True)
    link = home / ".cache" / "cve-bin-tool"
    if not link.exists():
        link.symlink_to(cache.resolve())
    # Its exit code is the number of findings (capped), not an error; it leaves a copy of
    # its report in the working directory.
    wall, peak, code = timed(command, env={**os.environ, "HOME": str(home)}, ok=None, cwd=OUT)
    found = orjson.loads(out.read_bytes()) if out.exists() else []
    products = {(f["vendor"], f["product"], f["version"]) for f in found}
    print(
        f"cve-bin-tool, {size} components: wall {wall:.2f} s, peak RSS {peak} MiB, exit {code}; "
        f"{len(found)} findings on {len(products)} (vendor, product, version)",
        flush=True,
    )
    return {"wall_s": wall, "peak_rss_mib": peak, "exit": code, "findings": len(found),
            "products_with_findings": len(products)}  # fmt: skip


if __name__ == "__main__":
    run(sys.argv[1:])
