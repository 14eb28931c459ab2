"""Hostile inputs against a real `assay serve`, by kind: how many were tried, how many got
a 500 (or another answer than the kind allows), and whether the server logged a
traceback. The counts of the "Service" section of docs/security.md.

    python -m bench service_attack
    python -m bench.bench_service_attack [--seed N] [--api N] [--pages N]

One server (SQLite store of the bundled sample, `--upload-timeout 10`):

* API queries: random and hostile values for every parameter of every endpoint
  (numbers out of range, huge, negative, unicode, NUL, repeated, very long), and keys in
  the wrong place;
* pages: `/cve/`, `/cpe/`, `/criteria/`, `/?q=` with hostile values;
* uploads (`POST /api/scan` and the `/scan` form): random bytes, truncated and deeply
  nested JSON, XML entity expansion and deep nesting, a 20,000-line requirements file,
  BOMs over the component cap, deep TOML lock files, lone surrogates;
* `/verify` posts: broken and deeply nested attestations and policies;
* requests: hostile Host and Origin headers, cross-site posts.

Results are printed and saved in `bench/out/service-attack-results.json`.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import quote

import httpx

from bench._store import BenchStore
from bench.bench_nvd import OUT, _machine, _server

ENDPOINTS = {
    "/rest/json/cves/2.0": ["cveId", "cpeName", "keywordSearch", "resultsPerPage", "startIndex",
                            "pubStartDate", "pubEndDate", "lastModStartDate", "lastModEndDate",
                            "cvssV3Severity", "cvssV3Metrics", "cweId", "virtualMatchString",
                            "versionStart", "versionStartType", "isVulnerable", "noRejected",
                            "sourceIdentifier", "hasKev", "cveTag", "keywordExactMatch"],
    "/rest/json/cpes/2.0": ["cpeName", "cpeNameId", "cpeMatchString", "keywordSearch",
                            "resultsPerPage", "startIndex", "matchCriteriaId"],
    "/rest/json/cpematch/2.0": ["cveId", "matchStringSearch", "matchCriteriaId",
                                "resultsPerPage", "startIndex", "lastModStartDate"],
    "/rest/json/cvehistory/2.0": ["cveId", "changeStartDate", "changeEndDate", "eventName",
                                  "resultsPerPage", "startIndex"],
    "/rest/json/source/2.0": ["sourceIdentifier", "resultsPerPage", "startIndex"],
}  # fmt: skip
VALUES = ["", "0", "-1", "2001", "99999999999999999999", "1e9", "NaN", "CVE-2024-23113",
          "cpe:2.3:a:*:*:*:*:*:*:*:*:*:*", "cpe:2.3:" + ":" * 50, "2024-01-01T00:00:00.000",
          "9999-12-31T23:59:59.999", "0000-00-00", "\x00", "%00", "'; DROP TABLE cve; --",
          "<script>alert(1)</script>", "\u202e\ud7ff", "a" * 5000, "💥" * 300, "HIGH", "true",
          "javascript:alert(1)", "../../etc/passwd", "AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H",
          "CWE-79", "nvd@nist.gov", "CVE-1-1", "Initial Analysis"]  # fmt: skip


def run(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.bench_service_attack")
    parser.add_argument("--seed", type=int, default=24)
    parser.add_argument("--api", type=int, default=3000, help="API requests")
    parser.add_argument("--pages", type=int, default=600, help="page requests")
    parser.add_argument(
        "--store", default=None, help="postgresql://...?schema=NAME (made anew); default SQLite"
    )
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    OUT.mkdir(parents=True, exist_ok=True)
    store = BenchStore(args.store) if args.store else BenchStore.sqlite(OUT / "service-attack.db")
    store.reset()
    subprocess.run(
        [sys.executable, "-m", "assay", "nvd", "import", "--store", store.url, "--bundled"],
        check=True,
        capture_output=True,
    )
    log = OUT / "nvd-server.log"
    log_start = log.stat().st_size if log.exists() else 0
    command = [sys.executable, "-m", "assay", "serve", "--store", store.url,
               "--upload-timeout", "10", "--access-log"]  # fmt: skip
    results: dict[str, Any] = {
        "machine": _machine(),
        "seed": args.seed,
        "store": "PostgreSQL" if store.is_postgres else "SQLite",
        "kinds": {},
    }
    with _server((command, {})) as base:
        kinds = {
            "api queries": (_api(rng, args.api), {200, 404, 503}),
            "pages": (_pages(rng, args.pages), {200, 303, 400, 404}),
            "uploads (/api/scan)": (_uploads("/api/scan"), {200, 400, 403, 413, 422, 503}),
            "uploads (/scan form)": (_uploads("/scan"), {200, 400, 403, 413, 415, 422, 503}),
            "/verify posts": (_verify(), {200, 400, 403, 413, 415, 503}),
            "hostile headers": (_headers(), {200, 400, 403, 404, 431}),
        }
        for kind, (requests, allowed) in kinds.items():
            statuses = _send(base, list(requests))
            unexpected = {s: n for s, n in statuses.items() if s not in allowed}
            results["kinds"][kind] = {
                "tried": sum(statuses.values()),
                "statuses": {str(k): v for k, v in sorted(statuses.items())},
                "500s": statuses.get(500, 0),
                "unexpected": {str(k): v for k, v in unexpected.items()},
            }
            print(f"{kind:<22} {sum(statuses.values()):>6} tried  {dict(sorted(statuses.items()))}")
    text = log.read_bytes()[log_start:].decode("utf-8", "replace")
    results["tracebacks"] = text.count("Traceback")
    results["tried"] = sum(k["tried"] for k in results["kinds"].values())
    results["500s"] = sum(k["500s"] for k in results["kinds"].values())
    print(f"in all: {results['tried']} tried, {results['500s']} answered 500, "
          f"{results['tracebacks']} tracebacks in the server's log")  # fmt: skip
    suffix = "-postgres" if store.is_postgres else ""
    (OUT / f"service-attack-results{suffix}.json").write_text(json.dumps(results, indent=1))


Request = tuple[str, str, dict[str, Any]]


def _api(rng: random.Random, count: int) -> Iterator[Request]:
    paths = list(ENDPOINTS)
    for _ in range(count):
        path = rng.choice(paths)
        pairs = [
            (rng.choice(ENDPOINTS[path] + ["apiKey", "bogus"]), rng.choice(VALUES))
            for _ in range(rng.randint(0, 4))
        ]
        prefix = rng.choice(["", "", "/compat/nvd-api"])
        yield "GET", prefix + path, {"params": pairs}


def _pages(rng: random.Random, count: int) -> Iterator[Request]:
    for _ in range(count):
        value = rng.choice(VALUES)
        quoted = quote(value, safe="")
        yield rng.choice(
            [
                ("GET", "/cve/" + quoted, {}),
                ("GET", "/cpe/" + quoted, {}),
                ("GET", "/criteria/" + quoted, {}),
                ("GET", "/", {"params": {"q": value, "resultsPerPage": rng.choice(VALUES)}}),
                ("GET", "/cpe", {"params": {"q": value}}),
            ]
        )


def _hostile_files() -> Iterator[tuple[str, bytes]]:
    rng = random.Random(7)
    for size in (1, 100, 10_000, 1_000_000):
        yield "bom.json", rng.randbytes(size)
    yield "bom.json", b'{"bomFormat": "CycloneDX", "specVersion": "1.5", "components": [' * 3
    yield "bom.json", b"[" * 200_000 + b"]" * 200_000
    yield "bom.json", b'{"a":' * 100_000 + b"1" + b"}" * 100_000
    yield "bom.json", b'{"bomFormat": "CycloneDX", "specVersion": "1.5", "x": "\\ud800"}'
    yield "bom.json", b'{"bomFormat": "CycloneDX", "specVersion": "1.5", "bomFormat": "SPDX"}'
    yield (
        "bom.xml",
        (
            b'<?xml version="1.0"?><!DOCTYPE b [<!ENTITY a "aaaaaaaaaa">'
            b'<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;">]>'
            b'<bom xmlns="http://cyclonedx.org/schema/bom/1.5">&c;</bom>'
        ),
    )
    yield "bom.xml", b'<bom xmlns="http://cyclonedx.org/schema/bom/1.5">' + b"<a>" * 50_000
    yield (
        "bom.xml",
        (
            b'<bom xmlns="http://cyclonedx.org/schema/bom/1.5" version="1"><components>'
            + b"".join(
                b'<component type="library"><name>p%d</name><version>1</version></component>' % i
                for i in range(12_000)
            )
            + b"</components></bom>"
        ),
    )
    yield "requirements.txt", "\n".join(f"pkg-{i}==1.{i}" for i in range(20_000)).encode()
    yield "requirements.txt", b"-r " + b"../" * 1000 + b"etc/passwd\n"
    yield "poetry.lock", b"[[package]]\nname = 'a'\nversion = '1'\nx = " + b"[" * 50_000
    yield "uv.lock", b"version = 1\n[[package]]\nname = 'a'\nx = " + b"{a = " * 20_000
    yield "package-lock.json", b'{"lockfileVersion": 3, "packages": ' + b'{"a":' * 50_000
    yield "bom.spdx", b"SPDXVersion: SPDX-2.3\n" + b"PackageName: x\n" * 30_000
    yield "input", b"\xef\xbb\xbf" + b"\x00" * 1000
    yield "input", b""
    yield "bom.json", b'{"payloadType": "application/vnd.in-toto+json", "payload": "!!!"}'


def _uploads(path: str) -> Iterator[Request]:
    for name, data in _hostile_files():
        if path == "/api/scan":
            yield "POST", path, {"params": {"filename": name}, "content": data}
        else:
            yield "POST", path, {"files": {"input": (name, data)}, "data": {"format": "json"}}
    if path == "/api/scan":
        yield "POST", path, {"params": {"filename": "../../x"}, "content": b"a==1"}
        yield "POST", path, {"params": [("purl", "pkg:" + "x" * 5000)] * 3}
        yield "POST", path, {"params": [("purl", f"pkg:pypi/p{i}@1") for i in range(1001)]}
        yield "POST", path, {"content": b"x" * (17 * 2**20)}
        yield "POST", path, {"params": {"minConfidence": "NaN"}, "content": b"a==1"}


def _verify() -> Iterator[Request]:
    for name, data in _hostile_files():
        yield "POST", "/verify", {"files": {"attestation": (name, data)}, "data": {"policy": "gcb"}}
    for text in (
        "a: [" * 10_000,
        "{" * 100_000,
        "x: !!python/object:os.system ls",
        '{"a": "\\ud800"}',
    ):
        yield "POST", "/verify", {"data": {"attestation_text": "{}", "policy_text": text}}
    yield "POST", "/verify", {"content": b"not a form", "headers": {"content-type": "text/plain"}}


def _headers() -> Iterator[Request]:
    for host in ("attacker.example", "", "127.0.0.1:1", "[::1]", "localhost\r\nX: y", "a" * 300):
        yield "GET", "/", {"headers": {"host": host}}
    for origin in ("https://evil.example", "null", "http://127.0.0.1.evil.example"):
        yield (
            "POST",
            "/api/scan",
            {"headers": {"origin": origin}, "params": {"purl": "pkg:pypi/a@1"}},
        )
        yield "POST", "/scan", {"headers": {"origin": origin}, "data": {"purls": "pkg:pypi/a@1"}}
    yield "GET", "/", {"headers": {"x-big": "a" * 100_000}}
    yield "GET", "/rest/json/cves/2.0", {"headers": {"apiKey": "\u00ff" * 100}}


def _send(base: str, requests: list[Request]) -> Counter[int]:
    def one(request: Request) -> int:
        method, path, options = request
        try:
            with httpx.Client(base_url=base, timeout=120) as client:
                return client.request(method, path, **options).status_code
        except (httpx.HTTPError, UnicodeError, ValueError):
            return 0  # refused by the client library or the connection dropped

    with ThreadPoolExecutor(4) as pool:
        return Counter(pool.map(one, requests))


if __name__ == "__main__":
    run(sys.argv[1:])
