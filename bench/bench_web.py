"""Page rendering on the full-size corpus: a CVE page and search pages, server-side.

    python -m bench web [--count 340000] [--seed 2] [--reuse-store] [--requests 200]

1. Generate (or reuse) the corpus of `bench/nvd_corpus.py` and import it into a SQLite
   store (`bench/out/nvd-COUNT.db`, shared with `bench nvd`; `--reuse-store` keeps it).
2. Build the composed app (`assay.web.app.create_web_app`) over it and send requests
   through ASGI in-process (no sockets: the time is the server's own), each page beside
   its peer in the same run, the API request that returns the same records as JSON.
3. Print p50/p95 per class and the page/API ratio; the targets are a CVE page ≤ 30 ms
   p50 and a search page ≤ 100 ms p50.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from bench._store import BenchStore
from bench.bench_nvd import OUT, _import
from bench.nvd_corpus import DEFAULT_COUNT, DEFAULT_OUT, DEFAULT_SEED, DEFAULT_SOURCE, generate

TARGETS_MS = {"cve page": 30.0, "search": 100.0}


def run(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench web")
    parser.add_argument("--count", type=int, default=DEFAULT_COUNT)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE)
    parser.add_argument("--corpus-out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--reuse-store", action="store_true")
    parser.add_argument("--requests", type=int, default=200, help="requests per class")
    args = parser.parse_args(argv)

    folder = generate(args.source, args.corpus_out, count=args.count, seed=args.seed, feeds=False)
    manifest = json.loads((folder / "manifest.json").read_text())
    OUT.mkdir(parents=True, exist_ok=True)
    store = BenchStore.sqlite(OUT / f"nvd-{args.count}.db")
    if not (args.reuse_store and store.exists()):
        _import(store, sorted(folder.glob("cves-*.jsonl.gz")), args.count)
    store.warm()
    results = asyncio.run(_measure(store.url, manifest, args.requests, args.seed))
    _report(results, args.count)


def _classes(manifest: dict[str, Any], rng: random.Random, n: int) -> dict[str, list[str]]:
    ids = list(manifest["sample_ids"])
    products = [name for name, _ in manifest["top_products"]]
    words = ["buffer overflow", "cross-site scripting", "remote code execution", "sql injection",
             "denial of service", "kernel", "privilege escalation", "authentication bypass"]  # fmt: skip
    cve_ids = [rng.choice(ids) for _ in range(n)]
    searches: list[dict[str, str]] = []
    for i in range(n):
        kind = i % 4
        if kind == 0:
            searches.append({"q": rng.choice(words)})
        elif kind == 1:
            searches.append({"q": rng.choice(words), "severity": "CRITICAL"})
        elif kind == 2:
            searches.append({"q": rng.choice(words), "kev": "1", "order": "oldest"})
        else:
            vendor, product = rng.choice(products).split(":", 1)
            searches.append({"q": f"cpe:2.3:*:{vendor}:{product}"})
    return {
        "cve page": [f"/cve/{cve}" for cve in cve_ids],
        "cve api": [f"/rest/json/cves/2.0?cveId={cve}" for cve in cve_ids],
        "search": [f"/?{urlencode(form)}" for form in searches],
        "search api": [],  # filled from each page's JSON twin
    }


async def _measure(url: str, manifest: dict[str, Any], n: int, seed: int) -> dict[str, list[float]]:
    import re

    import httpx

    from assay.nvd.storage import open_store
    from assay.web.app import create_web_app

    store = open_store(url)
    app = create_web_app(store)
    classes = _classes(manifest, random.Random(seed), n)
    timings: dict[str, list[float]] = {name: [] for name in classes}
    transport = httpx.ASGITransport(app=app)
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=transport, base_url="http://bench") as client,
    ):
        for path in classes["cve page"][:5] + classes["search"][:5]:
            await client.get(path)  # warm: templates compiled, id lists of each filter
        for name in ("cve page", "cve api", "search"):
            for path in classes[name]:
                started = time.perf_counter()
                answer = await client.get(path)
                timings[name].append((time.perf_counter() - started) * 1000)
                assert answer.status_code in (200, 404), (path, answer.status_code)
                if name == "search":
                    twin = re.search(
                        r'href="(/rest/json/cves/2.0\?[^"]+)" rel="alternate"', answer.text
                    )
                    if twin:
                        classes["search api"].append(twin.group(1).replace("&amp;", "&"))
        for path in classes["search api"]:
            started = time.perf_counter()
            await client.get(path)
            timings["search api"].append((time.perf_counter() - started) * 1000)
    store.close()
    return timings


def _report(timings: dict[str, list[float]], count: int) -> None:
    print(f"corpus: {count:,} CVEs, SQLite; in-process ASGI, one request at a time")
    p50: dict[str, float] = {}
    for name, values in timings.items():
        if not values:
            continue
        values.sort()
        p50[name] = statistics.median(values)
        p95 = values[int(len(values) * 0.95) - 1]
        target = TARGETS_MS.get(name)
        verdict = (
            ""
            if target is None
            else f"  (target p50 ≤ {target:.0f} ms: {'met' if p50[name] <= target else 'MISSED'})"
        )
        print(f"{name:12} n={len(values):4}  p50 {p50[name]:7.2f} ms  p95 {p95:7.2f} ms{verdict}")
    for page, api in (("cve page", "cve api"), ("search", "search api")):
        if page in p50 and api in p50:
            print(f"{page} / {api}: {p50[page] / p50[api]:.1f}x")


if __name__ == "__main__":
    import sys

    run(sys.argv[1:])
