"""What `--vex` adds to a scan: 1,000 findings, 1,000 VEX statements.

    python -m bench vex
    python -m bench.bench_vex [--findings 1000] [--statements 1000] [--runs 15]

A scan's result of `--findings` components (each with a purl, a CPE name and one
finding, as `assay.audit.scan` makes them) and an OpenVEX document of `--statements`
statements (each naming one of the findings by CVE id and by the purl without its
version, so that every statement is matched the OpenVEX way; the rest name other CVEs)
are made once. Then, `--runs` times each, the work `assay scan --vex FILE` does beyond
the scan alone is timed: reading the document (strict JSON, its statements as typed
values), applying it (`assay.audit.vex.apply_vex`), judging the result
(`assay.audit.rules.evaluate`) and writing the JSON output, against judging and writing
the result without VEX. Importing the VEX modules is timed apart: their own import time
(`-X importtime`) in a fresh interpreter importing what `assay scan --vex` imports.

Target: the median of the added work, import included, <= 100 ms. Wall and CPU time
(`time.process_time`) are both printed: on a loaded machine the CPU time is what a quiet
one's wall time comes close to.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from typing import Any

TARGET_MS = 100.0


def _result(findings: int) -> Any:
    from assay.audit.model import (
        Component,
        ComponentResult,
        Cvss,
        Identification,
        ScanResult,
        SourceStatus,
        Vulnerability,
    )

    components = []
    for index in range(findings):
        name = f"lib{index}"
        cpe = f"cpe:2.3:a:vendor{index % 97}:{name}:1.{index % 13}.0:*:*:*:*:*:*:*"
        component = Component(
            f"ref-{index}", name, f"1.{index % 13}.0", f"pkg:pypi/{name}@1.{index % 13}.0"
        )
        finding = Vulnerability(
            f"CVE-2024-{10000 + index}",
            "HIGH",
            Cvss("3.1", 7.5, "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:N/A:N"),
            False,
            ("CWE-79",),
            "0" * 8 + f"-{index:04d}",
            None,
            False,
        )
        components.append(
            ComponentResult(
                component, Identification((cpe,), "cpe", 1.0, "given"), (finding,), "bom"
            )
        )
    return ScanResult(tuple(components), (), SourceStatus(1, "2026-01-01T00:00:00Z"))


def _document(findings: int, statements: int) -> bytes:
    items = []
    for index in range(statements):
        matched = index < findings
        cve = f"CVE-2024-{10000 + index}" if matched else f"CVE-2023-{10000 + index}"
        items.append(
            {
                "vulnerability": {"name": cve, "aliases": [f"GHSA-bench-{index:04d}"]},
                "timestamp": "2026-01-02T00:00:00Z",
                "products": [{"@id": f"pkg:pypi/lib{index}"}],
                "status": "not_affected",
                "justification": "vulnerable_code_not_in_execute_path",
                "impact_statement": "the vulnerable function is never called",
            }
        )
    return json.dumps(
        {
            "@context": "https://openvex.dev/ns/v0.2.0",
            "@id": "https://example.com/vex/bench",
            "author": "bench",
            "timestamp": "2026-01-02T00:00:00Z",
            "version": 1,
            "statements": items,
        }
    ).encode()


def _judge_and_write(result: Any) -> int:
    from assay.audit.json_stream import json_chunks
    from assay.audit.rules import evaluate, parse_fail_on

    verdict = evaluate(
        result, [parse_fail_on("severity>=HIGH")], [], today=datetime.now(UTC).date()
    )
    return sum(len(chunk) for chunk in json_chunks(result, verdict))


def _import_ms() -> float:
    """Importing the VEX modules (their own time, `-X importtime`), in a fresh interpreter
    that imports what `assay scan --vex` imports."""
    output = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import assay.audit.scan, assay.audit.vex"],
        check=True,
        capture_output=True,
        text=True,
    ).stderr
    own = 0
    for line in output.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[2].strip().startswith(("assay.vex", "assay.audit.vex")):
            own += int(parts[0].split(":")[1])
    return own / 1000


def run(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="bench vex")
    parser.add_argument("--findings", type=int, default=1000)
    parser.add_argument("--statements", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args(argv)
    from assay.audit.vex import apply_vex
    from assay.vex import read_vex

    result = _result(args.findings)
    data = _document(args.findings, args.statements)
    plain: list[tuple[float, float]] = []
    added: list[tuple[float, float]] = []
    imports: list[float] = []
    applied_count = 0
    for _ in range(args.runs):
        wall, cpu = time.perf_counter(), time.process_time()
        _judge_and_write(result)
        plain.append(((time.perf_counter() - wall) * 1000, (time.process_time() - cpu) * 1000))
        wall, cpu = time.perf_counter(), time.process_time()
        document = read_vex(data, "bench.openvex.json")
        applied = apply_vex(result, [document])
        _judge_and_write(applied.result)
        added.append(
            (
                (time.perf_counter() - wall) * 1000 - plain[-1][0],
                (time.process_time() - cpu) * 1000 - plain[-1][1],
            )
        )
        applied_count = applied.changed
        imports.append(_import_ms())
    wall_added = statistics.median(a[0] for a in added)
    cpu_added = statistics.median(a[1] for a in added)
    imported = statistics.median(imports)
    print(
        f"{args.findings} findings, {args.statements} statements ({len(data) / 1e6:.2f} MB), "
        f"{applied_count} findings changed, {args.runs} runs"
    )
    print(
        f"judge + write without VEX: median {statistics.median(p[0] for p in plain):.1f} ms "
        f"wall, {statistics.median(p[1] for p in plain):.1f} ms CPU"
    )
    print(
        f"added by --vex (read, apply, judge, write): median {wall_added:.1f} ms wall, "
        f"{cpu_added:.1f} ms CPU"
    )
    print(f"importing the VEX modules: median {imported:.1f} ms")
    for label, value in (("wall", wall_added + imported), ("CPU", cpu_added + imported)):
        verdict = "met" if value <= TARGET_MS else "NOT met"
        print(f"total added ({label}): {value:.1f} ms (target <= {TARGET_MS:g} ms: {verdict})")


if __name__ == "__main__":
    run(sys.argv[1:])
