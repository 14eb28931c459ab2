"""Registries: `assay verify-image` against Debian's docker-registry on loopback.

1. The first, fetching verification, in one process: every request it makes (method,
   URL, status, seconds) from the client's log, their sum, and the whole verification;
   what is left beyond the round trips is the verification itself.
2. `assay verify-image` of a cached image as a process (`--offline`, interpreter
   start-up and imports included): the median of N runs. Target: <= 0.5 s.
3. The same command as a process, fetching (a new cache each run), for comparison.

    python -m bench registry        (or: python -m bench.bench_registry --runs 15)
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LAYOUT = (
    ROOT
    / "tests/assets/registry/slsa-verifier/gha_generic_container/v1.10.0/container_workflow_dispatch"
)
DIGEST = "sha256:e0a0a765d690a5104331cfbac88ebbbf01736c1f87aaa3cd455c516a5ea586a5"
SOURCE = "github.com/slsa-framework/example-package"
PROCESS_BUNDLE = (
    ROOT
    / "tests/assets/verify/slsa-verifier/cli/gha_maven/v2.1.0"
    / "binary-linux-amd64-workflow_dispatch.build.slsa"
)
PROCESS_DIGEST = "sha256:4e313a4cd3a7ffa7ef270dd8f65a98cce9c6286c25f5898998feaed73f3ffe92"


def _start(root: Path) -> tuple[subprocess.Popen[bytes], str]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    config = root / "config.yml"
    config.write_text(
        "version: 0.1\nlog:\n  level: error\n  accesslog:\n    disabled: true\n"
        f"storage:\n  filesystem:\n    rootdirectory: {root / 'data'}\n"
        f"http:\n  addr: 127.0.0.1:{port}\n"
    )
    binary = shutil.which("docker-registry") or "/usr/bin/docker-registry"
    process = subprocess.Popen(
        [binary, "serve", str(config)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    import httpx

    for _ in range(200):
        try:
            if httpx.get(f"http://127.0.0.1:{port}/v2/", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.05)
    return process, f"127.0.0.1:{port}"


def _push(host: str) -> str:
    sys.path.insert(0, str(ROOT))
    from tests.registry.conftest import push_layout

    from assay.registry.reference import Reference

    push_layout(LAYOUT, Reference(host, "bench/image"))
    return f"{host}/bench/image@{DIGEST}"


def _in_process(image: str, root: Path, runs: int) -> None:
    """Fetching vs cached verification in one warm process: the difference is what the
    first verification adds, to be compared with the time its requests took."""
    from assay.policy.slsa_github import Options
    from assay.registry.cache import Cache, CachingClient, OfflineClient
    from assay.registry.client import RegistryClient
    from assay.registry.image import verify_image
    from assay.registry.reference import parse_reference
    from assay.sigstore import BundleVerifier, default_roots

    verifier = BundleVerifier(default_roots())
    options = Options(source_uri=SOURCE, image=True)
    reference = parse_reference(image)
    fetching, cached, spent, entries = [], [], [], []
    for number in range(runs + 1):  # the first run warms imports and trusted roots
        cache = Cache(root / f"warm{number}")
        started = time.perf_counter()
        with RegistryClient() as client:
            verdict = verify_image(CachingClient(client, cache), reference, options, verifier)
            took = time.perf_counter() - started
            entries = client.log.entries
        started = time.perf_counter()
        again = verify_image(OfflineClient(cache), reference, options, verifier)
        offline = time.perf_counter() - started
        assert verdict.passed
        assert again.passed
        if number:
            fetching.append(took)
            cached.append(offline)
            spent.append(sum(e[3] for e in entries))
    print(f"in one warm process, {runs} runs (medians):")
    print(f"  fetching verification: {statistics.median(fetching) * 1000:.1f} ms")
    print(f"  cached verification:   {statistics.median(cached) * 1000:.1f} ms")
    added = statistics.median(f - c for f, c in zip(fetching, cached, strict=True))
    print(
        f"  added by fetching: {added * 1000:.1f} ms; its {len(entries)} requests took"
        f" {statistics.median(spent) * 1000:.1f} ms"
        f" ({statistics.median(spent) / len(entries) * 1000:.2f} ms each):"
    )
    for method, url, status, seconds in entries:
        print(f"    {method:4} {status} {seconds * 1000:6.2f} ms  {url.split('/v2/', 1)[1][:72]}")


def _process(argv: list[str], runs: int) -> tuple[float, float, float]:
    walls, cpus = [], []
    for _ in range(runs):
        before = os.times()
        started = time.perf_counter()
        done = subprocess.run(argv, capture_output=True, check=False)
        walls.append(time.perf_counter() - started)
        after = os.times()
        cpus.append(
            after.children_user
            + after.children_system
            - before.children_user
            - before.children_system
        )
        assert done.returncode == 0, done.stderr.decode()
    return statistics.median(walls), min(walls), statistics.median(cpus)


def run(argv: list[str]) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as temporary:
        root = Path(temporary)
        process, host = _start(root)
        try:
            image = _push(host)
            _in_process(image, root, args.runs)
            _seed = [sys.executable, "-m", "assay", "verify-image", image, "--source-uri", SOURCE]
            subprocess.run(
                [*_seed, "--cache-dir", str(root / "warm")], check=True, capture_output=True
            )
            command = [sys.executable, "-m", "assay", "verify-image", image, "--source-uri", SOURCE]
            cached = [*command, "--offline", "--cache-dir", str(root / "warm")]
            artifact = [
                sys.executable,
                "-m",
                "assay",
                "verify-artifact",
                PROCESS_DIGEST,
                "--provenance-path",
                str(PROCESS_BUNDLE),
                "--source-uri",
                SOURCE,
            ]
            rows = {"verify-image, cached (--offline)": [], "verify-artifact (baseline)": []}
            for _ in range(args.runs):  # alternate, so both see the same load
                rows["verify-image, cached (--offline)"].append(_process(cached, 1))
                rows["verify-artifact (baseline)"].append(_process(artifact, 1))
            for name, results in rows.items():
                print(
                    f"{name}, as a process, {args.runs} runs: wall median"
                    f" {statistics.median(r[0] for r in results):.3f} s"
                    f" (min {min(r[1] for r in results):.3f} s), CPU median"
                    f" {statistics.median(r[2] for r in results):.3f} s  (target <= 0.5 s)"
                )
            fetching = []
            for number in range(args.runs):
                fresh = [*command, "--cache-dir", str(root / f"cold{number}")]
                fetching.append(_process(fresh, 1)[0])
            print(
                f"verify-image, fetching (new cache each run), as a process: wall median"
                f" {statistics.median(fetching):.3f} s (min {min(fetching):.3f} s)"
            )
        finally:
            process.terminate()
            process.wait(timeout=10)


if __name__ == "__main__":
    run(sys.argv[1:])
