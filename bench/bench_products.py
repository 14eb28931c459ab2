"""CPE products, match criteria and change history at full size, over HTTP.

    python -m bench products
    python -m bench.bench_products [--clones N] [--seed S] [--queries N] [--reuse-store]

1. Generate (or reuse) a corpus shaped like NVD's, in `bench/corpus/products/`:
   * products: the 10,000 real products of cpes-2023 (bundled with assay), cloned under
     new vendor names (`cisco` -> `cisco_17`) with the same products, versions, update /
     edition / target components, title and reference shapes, deprecation rate and
     per-product version counts; creation and modification dates spread over 2007-2024.
     121 clones give 1,210,000 products.
   * match criteria: per product family, about 31% of its names as exact criteria
     (`matches` = that name, 5% of them a version the dictionary lacks, so `matches` is
     empty) and, for families with versions, ranged criteria (`*` with
     versionStartIncluding and versionEndExcluding/Including drawn from the family's sorted
     versions, `matches` = the names inside, as NVD expands them): about 508,000.
   * CVEs referencing every criteria (1 to 9 criteria each, configuration shape of NVD's),
     and 4 change events per CVE shaped like the real history of CVE-2019-1010218.
2. `assay nvd import` it into a fresh SQLite store: wall time, store size.
3. Read the store once into the OS page cache, `assay serve` on a loopback port; one Python client sends each query once, in turn,
   over one keep-alive connection (so the result cache is cold for every distinct query):
   * `cpeMatchString=cpe:2.3:*:VENDOR:PRODUCT` for random families, and for clones of the
     three largest real families (Cisco IOS, the Linux kernel, Cisco CatOS);
   * `cpeNameId`, cpematch `matchCriteriaId`, cpes `matchCriteriaId`, cpematch `cveId`,
     cvehistory `cveId`, each for random ids;
   * full pages of the whole collection (cpes 10,000, cpematch 500, cvehistory 5,000):
     the first request (cold: it orders the whole collection), then the first page, ten
     at random `startIndex` values and the last, nine times each (best), compared
     with the first page.
4. Print each figure beside its target; save them in `bench/out/products-results.json`.

Targets (2 cores, SQLite): cpeMatchString p50 <= 30 ms; cpeNameId, matchCriteriaId and
cpematch-by-cveId p50 <= 5 ms; history by cveId p50 <= 5 ms; a full page at any
startIndex within 2x of the first page.
"""

from __future__ import annotations

import argparse
import bisect
import contextlib
import gzip
import json
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import time
import uuid
from collections import defaultdict
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import IO, Any
from urllib.parse import quote

import orjson

from assay.nvd.versions import version_key
from bench._rss import PeakRss

REPO_ROOT = Path(__file__).resolve().parent.parent
CORPUS = REPO_ROOT / "bench" / "corpus" / "products"
OUT = REPO_ROOT / "bench" / "out"
CORPUS_VERSION = 2
DEFAULT_CLONES = 121  # x 10,000 real products
DEFAULT_SEED = 20230731
DEFAULT_QUERIES = 300

TARGETS_MS = {
    "cpeMatchString vendor:product": 30.0,
    "cpes cpeNameId": 5.0,
    "cpematch matchCriteriaId": 5.0,
    "cpes matchCriteriaId": 5.0,
    "cpematch cveId": 5.0,
    "cvehistory cveId": 5.0,
}
PAGE_RATIO_TARGET = 2.0
REPEATS = 9  # fetches of each page in the paging comparison
EXACT_SHARE = 0.31  # of dictionary names that are a criteria of their own

# The real dictionary's largest product families (1443, 585 and 216 names in cpes-2023).
LARGEST = (("cisco", "ios"), ("linux", "linux_kernel"), ("cisco", "catos"))
EPOCH = 1167609600  # 2007-01-01
SPAN = 17 * 365 * 86400  # to 2024


# -- corpus ---------------------------------------------------------------------------------


def _timestamp(rng: random.Random, low: int = EPOCH, span: int = SPAN) -> str:
    moment = low + rng.randrange(span)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(moment)) + f".{rng.randrange(1000):03d}"


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4)).upper()


def _real(name: str) -> dict[str, Any]:
    data = resources.files("assay.data").joinpath(name).read_bytes()
    parsed: dict[str, Any] = orjson.loads(gzip.decompress(data))
    return parsed


def _escape_free(text: str) -> str:
    return text.replace("\\", "")


class Writer:
    """JSON Lines files of wrapped records."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.files: dict[str, IO[bytes]] = {
            kind: (folder / f"{kind}.jsonl").open("wb")
            for kind in ("products", "criteria", "cves", "changes")
        }
        self.counts: dict[str, int] = defaultdict(int)

    def write(self, kind: str, wrapper: str, record: dict[str, Any]) -> None:
        self.files[kind].write(orjson.dumps({wrapper: record}) + b"\n")
        self.counts[kind] += 1

    def close(self) -> None:
        for handle in self.files.values():
            handle.close()


def generate(folder: Path, clones: int, seed: int) -> dict[str, Any]:
    """Write the corpus; return its manifest (sizes and the ids the queries draw from)."""
    rng = random.Random(seed)
    real = [item["cpe"] for item in _real("nvd-cpes-2023.json.gz")["products"]]
    history = [
        item["change"] for item in _real("nvd-history-CVE-2019-1010218.json.gz")["cveChanges"]
    ]
    families: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for product in real:
        fields = product["cpeName"].split(":")
        families[(fields[2], fields[3], fields[4])].append(product)
    writer = Writer(folder)
    sample_names: list[str] = []
    sample_criteria: list[str] = []
    sample_ranges: list[str] = []
    sample_families: list[str] = []
    pending_criteria: list[dict[str, Any]] = []
    started = time.perf_counter()
    for clone in range(clones):
        for (part, vendor, product), members in families.items():
            name_vendor = vendor if clone == 0 else f"{vendor}_{clone}"
            names = []
            for member in members:
                record = _clone_product(member, name_vendor, vendor, clone, rng)
                writer.write("products", "cpe", record)
                names.append(record)
                if rng.random() < 0.0005:
                    sample_names.append(record["cpeNameId"])
            if rng.random() < 0.01:
                sample_families.append(f"cpe:2.3:*:{name_vendor}:{product}")
            for criteria in _criteria_for(part, name_vendor, product, names, rng):
                writer.write("criteria", "matchString", criteria)
                pending_criteria.append(criteria)
                if rng.random() < 0.001:
                    (
                        sample_ranges if "versionStartIncluding" in criteria else sample_criteria
                    ).append(criteria["matchCriteriaId"])
        if clone % 10 == 0:
            print(
                f"  generated clone {clone + 1}/{clones} ({time.perf_counter() - started:.0f} s)",
                flush=True,
            )
    rng.shuffle(pending_criteria)
    sample_cves: list[str] = []
    position = 0
    number = 0
    while position < len(pending_criteria):
        size = rng.randint(1, 9)
        cve_id = f"CVE-{2010 + number % 15}-{100000 + number}"
        chosen = pending_criteria[position : position + size]
        position += size
        number += 1
        published = _timestamp(rng, EPOCH + 3 * 365 * 86400, SPAN - 3 * 365 * 86400)
        writer.write("cves", "cve", _cve(cve_id, published, chosen, rng))
        for change in _changes(cve_id, published, history, rng):
            writer.write("changes", "change", change)
        if rng.random() < 0.003:
            sample_cves.append(cve_id)
    writer.close()
    manifest = {
        "version": CORPUS_VERSION,
        "clones": clones,
        "seed": seed,
        "counts": dict(writer.counts),
        "generate_s": round(time.perf_counter() - started, 1),
        "sample_names": sample_names,
        "sample_criteria": sample_criteria,
        "sample_ranges": sample_ranges,
        "sample_families": sample_families,
        "sample_cves": sample_cves,
    }
    (folder / "manifest.json").write_text(json.dumps(manifest))
    return manifest


def _clone_product(
    member: dict[str, Any], vendor: str, real_vendor: str, clone: int, rng: random.Random
) -> dict[str, Any]:
    fields = member["cpeName"].split(":")
    fields[3] = vendor
    created = _timestamp(rng)
    record: dict[str, Any] = {
        "deprecated": member["deprecated"],
        "cpeName": ":".join(fields),
        "cpeNameId": _uuid(rng),
        "lastModified": max(created, _timestamp(rng)),
        "created": created,
        "titles": [
            {"title": t["title"] + (f" {clone}" if clone else ""), "lang": t["lang"]}
            for t in member["titles"]
        ],
    }
    if "refs" in member:
        record["refs"] = member["refs"]
    for key in ("deprecatedBy", "deprecates"):
        if key in member:
            record[key] = [
                {
                    "cpeName": link["cpeName"].replace(f":{real_vendor}:", f":{vendor}:", 1),
                    "cpeNameId": _uuid(rng),
                }
                for link in member[key]
            ]
    return record


def _criteria_for(
    part: str, vendor: str, product: str, names: list[dict[str, Any]], rng: random.Random
) -> Iterator[dict[str, Any]]:
    for record in names:
        if rng.random() < EXACT_SHARE:
            criteria = record["cpeName"]
            matches = [{"cpeName": record["cpeName"], "cpeNameId": record["cpeNameId"]}]
            if rng.random() < 0.05:  # a version the dictionary does not hold
                fields = criteria.split(":")
                fields[5] = fields[5] + "x" if fields[5] not in ("*", "-") else "0.0.1x"
                criteria, matches = ":".join(fields), []
            yield _match_record(criteria, {}, matches, rng)
    versioned = sorted(
        (
            (version_key(_escape_free(r["cpeName"].split(":")[5])), r)
            for r in names
            if r["cpeName"].split(":")[5] not in ("*", "-")
        ),
        key=lambda pair: pair[0],
    )
    if len(versioned) < 2:
        return
    keys = [key for key, _ in versioned]
    for _ in range(max(1, round(len(versioned) * 0.12))):
        low = rng.randrange(len(versioned) - 1)
        high = min(len(versioned) - 1, low + rng.randint(1, 40))
        start = versioned[low][1]["cpeName"].split(":")[5]
        end = versioned[high][1]["cpeName"].split(":")[5]
        inclusive = rng.random() < 0.4
        bounds = {"versionStartIncluding": _escape_free(start)}
        bounds["versionEndIncluding" if inclusive else "versionEndExcluding"] = _escape_free(end)
        first = bisect.bisect_left(keys, keys[low])
        last = (
            bisect.bisect_right(keys, keys[high])
            if inclusive
            else bisect.bisect_left(keys, keys[high])
        )
        matches = [
            {"cpeName": r["cpeName"], "cpeNameId": r["cpeNameId"]} for _, r in versioned[first:last]
        ]
        yield _match_record(
            f"cpe:2.3:{part}:{vendor}:{product}:*:*:*:*:*:*:*:*", bounds, matches, rng
        )


def _match_record(
    criteria: str, bounds: dict[str, str], matches: list[dict[str, str]], rng: random.Random
) -> dict[str, Any]:
    created = _timestamp(rng, EPOCH + 5 * 365 * 86400, SPAN - 5 * 365 * 86400)
    record: dict[str, Any] = {"matchCriteriaId": _uuid(rng), "criteria": criteria, **bounds}
    record["lastModified"] = max(created, _timestamp(rng))
    record["cpeLastModified"] = max(created, _timestamp(rng))
    record["created"] = created
    record["status"] = "Active" if rng.random() < 0.97 else "Inactive"
    if matches:
        record["matches"] = matches
    return record


def _cve(
    cve_id: str, published: str, criteria: list[dict[str, Any]], rng: random.Random
) -> dict[str, Any]:
    matches = []
    for c in criteria:
        item: dict[str, Any] = {"vulnerable": rng.random() < 0.85, "criteria": c["criteria"]}
        item.update(
            {
                k: c[k]
                for k in ("versionStartIncluding", "versionEndIncluding", "versionEndExcluding")
                if k in c
            }
        )
        item["matchCriteriaId"] = c["matchCriteriaId"]
        matches.append(item)
    return {
        "id": cve_id,
        "sourceIdentifier": "cve@mitre.org",
        "published": published,
        "lastModified": max(published, _timestamp(rng)),
        "vulnStatus": "Analyzed",
        "descriptions": [
            {"lang": "en", "value": f"A vulnerability in {criteria[0]['criteria'].split(':')[4]}."}
        ],
        "metrics": {},
        "configurations": [{"nodes": [{"operator": "OR", "negate": False, "cpeMatch": matches}]}],
        "references": [],
    }


def _changes(
    cve_id: str, published: str, history: list[dict[str, Any]], rng: random.Random
) -> Iterator[dict[str, Any]]:
    for template in history:
        yield {
            "cveId": cve_id,
            "eventName": template["eventName"],
            "cveChangeId": _uuid(rng),
            "sourceIdentifier": template["sourceIdentifier"],
            "created": max(published, _timestamp(rng)),
            "details": template["details"],
        }


def corpus(clones: int, seed: int) -> dict[str, Any]:
    manifest_path = CORPUS / "manifest.json"
    if manifest_path.exists():
        manifest: dict[str, Any] = json.loads(manifest_path.read_text())
        if (manifest["version"], manifest["clones"], manifest["seed"]) == (
            CORPUS_VERSION,
            clones,
            seed,
        ):
            print(f"reusing the corpus in {CORPUS}", flush=True)
            return manifest
    print(f"generating the corpus in {CORPUS} ({clones} clones of the real dictionary)", flush=True)
    return generate(CORPUS, clones, seed)


# -- import and serve -------------------------------------------------------------------------


def _import(store: Path) -> dict[str, Any]:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{store}{suffix}").unlink(missing_ok=True)
    files = [CORPUS / f"{kind}.jsonl" for kind in ("products", "criteria", "cves", "changes")]
    command = [sys.executable, "-m", "assay", "nvd", "import", "--batch-size", "5000",
               "--store", f"sqlite:///{store}", *map(str, files)]  # fmt: skip
    print(f"importing: {' '.join(command[2:6])} ... ({len(files)} files)", flush=True)
    OUT.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    with (OUT / "products-import.log").open("wb") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, cwd=REPO_ROOT)
        peak_rss = PeakRss(process)
        _, status, _ = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"import failed; see {OUT / 'products-import.log'}")
    size = sum(
        Path(f"{store}{s}").stat().st_size for s in ("", "-wal") if Path(f"{store}{s}").exists()
    )
    return {
        "seconds": round(elapsed, 1),
        "store_mb": round(size / 1e6),
        "peak_rss_mib": peak_rss.peak_mib,
    }


def _warm(store: Path) -> None:
    """Read the store once, so that the figures measure a running server (whose store
    sits in the OS page cache) rather than the disk, as `bench_nvd` does."""
    started = time.perf_counter()
    with store.open("rb") as handle:
        while handle.read(8 * 2**20):
            pass
    print(f"store read into the OS page cache in {time.perf_counter() - started:.1f} s", flush=True)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def _server(store: Path) -> Iterator[str]:
    import httpx

    port = _free_port()
    command = [sys.executable, "-m", "assay", "serve", "--store", f"sqlite:///{store}",
               "--host", "127.0.0.1", "--port", str(port)]  # fmt: skip
    with (OUT / "products-server.log").open("ab") as log:
        process = subprocess.Popen(
            command, stdout=log, stderr=subprocess.STDOUT, cwd=REPO_ROOT, start_new_session=True
        )
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 60
            while True:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"the server did not start; see {OUT / 'products-server.log'}")
                with contextlib.suppress(httpx.HTTPError):
                    httpx.get(f"{base}/openapi.json", timeout=2)
                    break
                time.sleep(0.2)
            yield base
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


# -- measure ----------------------------------------------------------------------------------


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, round(q / 100 * len(ordered) + 0.5) - 1))
    return ordered[rank]


def _timed(client: Any, path: str) -> tuple[float, int, int]:
    started = time.perf_counter()
    response = client.get(path)
    body = response.content
    elapsed = (time.perf_counter() - started) * 1000
    if response.status_code != 200:
        raise SystemExit(f"{path}: {response.status_code} {response.headers.get('message')}")
    head = orjson.loads(body[: body.index(b'"timestamp"') - 1] + b"}")
    return elapsed, int(head["totalResults"]), int(head["resultsPerPage"])


def _class(client: Any, name: str, paths: list[str]) -> dict[str, Any]:
    times, totals = [], []
    for path in paths:
        elapsed, total, _ = _timed(client, path)
        times.append(elapsed)
        totals.append(total)
    result = {
        "name": name,
        "requests": len(times),
        "p50_ms": round(_percentile(times, 50), 2),
        "p99_ms": round(_percentile(times, 99), 2),
        "max_ms": round(max(times), 1),
        "median_total": statistics.median(totals),
        "hits": sum(1 for t in totals if t),
    }
    target = TARGETS_MS.get(name)
    verdict = (
        f"  target p50 <= {target:g} ms: {'ok' if result['p50_ms'] <= target else 'MISSED'}"
        if target
        else ""
    )
    print(
        f"  {name:<32} n={len(times):<5} p50 {result['p50_ms']:7.2f} ms  p99 {result['p99_ms']:7.2f} ms  "
        f"max {result['max_ms']:7.1f} ms  median totalResults {result['median_total']:g}{verdict}",
        flush=True,
    )
    return result


def _pages(client: Any, name: str, path: str, page: int, rng: random.Random) -> dict[str, Any]:
    """The first request computes the ordered id list of the whole collection (cold);
    then every page, the first and ten at random start indexes and the last, is fetched
    REPEATS times and its best time kept (the machine is shared: the best is the page's
    own cost, the others carry other jobs' interference), so all pages are compared
    alike."""
    cold, total, _ = _timed(client, f"{path}?resultsPerPage={page}&startIndex=0")
    starts = [0, *sorted(rng.randrange(page, total - page) for _ in range(10)), total - page]
    best = []
    for start in starts:
        times = [
            _timed(client, f"{path}?resultsPerPage={page}&startIndex={start}")[0]
            for _ in range(REPEATS)
        ]
        best.append((start, min(times)))
    first_ms = best[0][1]
    worst = max(ms for _, ms in best)
    result = {
        "name": name,
        "total": total,
        "page": page,
        "cold_first_ms": round(cold, 1),
        "first_page_ms": round(first_ms, 1),
        "pages_ms": [[start, round(ms, 1)] for start, ms in best],
        "worst_ratio": round(worst / first_ms, 2),
    }
    print(
        f"  {name:<32} total {total}: cold first request {cold:7.1f} ms, first page {first_ms:6.1f} ms, "
        f"slowest page {worst:6.1f} ms = {result['worst_ratio']:.2f}x "
        f"(target <= {PAGE_RATIO_TARGET:g}x: {'ok' if result['worst_ratio'] <= PAGE_RATIO_TARGET else 'MISSED'})",
        flush=True,
    )
    return result


def measure(base: str, manifest: dict[str, Any], queries: int, seed: int) -> dict[str, Any]:
    import httpx

    rng = random.Random(seed + 1)

    def pick(key: str) -> list[str]:
        values = list(manifest[key])
        rng.shuffle(values)
        return values[:queries]

    results: dict[str, Any] = {"classes": [], "pages": []}
    with httpx.Client(base_url=base, timeout=120) as client:
        for _ in range(20):  # warm the connection and the server's code paths
            client.get("/rest/json/cpes/2.0?cpeNameId=" + manifest["sample_names"][0])
        classes = [
            ("cpeMatchString vendor:product", [f"/rest/json/cpes/2.0?cpeMatchString={quote(f, safe=':*')}" for f in pick("sample_families")]),
            ("cpeMatchString, largest families", [
                f"/rest/json/cpes/2.0?cpeMatchString=cpe:2.3:*:{vendor}{'' if k == 0 else f'_{k}'}:{product}"
                for vendor, product in LARGEST for k in rng.sample(range(manifest["clones"]), 10)
            ]),
            ("cpes cpeNameId", [f"/rest/json/cpes/2.0?cpeNameId={i}" for i in pick("sample_names")]),
            ("cpematch matchCriteriaId", [f"/rest/json/cpematch/2.0?matchCriteriaId={i}" for i in pick("sample_criteria") + pick("sample_ranges")][:queries]),
            ("cpes matchCriteriaId", [f"/rest/json/cpes/2.0?matchCriteriaId={i}" for i in pick("sample_ranges") + pick("sample_criteria")][:queries]),
            ("cpematch cveId", [f"/rest/json/cpematch/2.0?cveId={i}" for i in pick("sample_cves")]),
            ("cvehistory cveId", [f"/rest/json/cvehistory/2.0?cveId={i}" for i in pick("sample_cves")]),
        ]  # fmt: skip
        for name, paths in classes:
            results["classes"].append(_class(client, name, paths))
        for name, path, page in (
            ("cpes, whole dictionary", "/rest/json/cpes/2.0", 10000),
            ("cpematch, every criteria", "/rest/json/cpematch/2.0", 500),
            ("cvehistory, every change", "/rest/json/cvehistory/2.0", 5000),
        ):
            results["pages"].append(_pages(client, name, path, page, rng))
    return results


def _machine() -> dict[str, Any]:
    memory = 0
    with contextlib.suppress(OSError), open("/proc/meminfo") as meminfo:
        memory = int(meminfo.readline().split()[1]) // 1024
    return {"cores": os.cpu_count(), "memory_mib": memory, "python": sys.version.split()[0],
            "load_at_start": [round(x, 2) for x in os.getloadavg()]}  # fmt: skip


def run(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="bench_products", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--clones", type=int, default=DEFAULT_CLONES, help="copies of the 10,000 real products"
    )
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--queries", type=int, default=DEFAULT_QUERIES, help="requests per class")
    parser.add_argument("--reuse-store", action="store_true", help="keep the store of the last run")
    args = parser.parse_args(argv)
    machine = _machine()
    print(f"machine: {machine}", flush=True)
    manifest = corpus(args.clones, args.seed)
    print(f"corpus: {manifest['counts']}", flush=True)
    store = CORPUS / "store.db"
    imported: dict[str, Any] = {}
    if not (args.reuse_store and store.exists()):
        imported = _import(store)
        records = sum(manifest["counts"].values())
        print(
            f"import: {imported['seconds']} s ({round(records / imported['seconds'])} records/s), "
            f"store {imported['store_mb']} MB, peak RSS {imported['peak_rss_mib']} MiB",
            flush=True,
        )
    _warm(store)
    with _server(store) as base:
        results = measure(base, manifest, args.queries, args.seed)
    results.update(
        machine=machine,
        corpus={k: manifest[k] for k in ("counts", "clones", "seed")},
        import_=imported,
    )
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "products-results.json").write_text(json.dumps(results, indent=1))
    print(f"results saved in {OUT / 'products-results.json'}")


if __name__ == "__main__":
    run(sys.argv[1:])
