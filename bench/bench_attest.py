"""Parse and fully validate 10,000 distinct SLSA provenance v1 statements.

Three pipelines over the same bytes, in one run:
- `json.loads` alone (the reference: parsing, no checks), and `orjson.loads` alone (the
  parser assay uses, so the cost of validation itself shows);
- assay: `parse_statement` then `validate` (every rule of the spec);
- in-toto-attestation 0.9.3: `json_format.Parse` into the Statement proto, then
  `Statement.validate()` (statement layer only; the predicate is not checked).

The statements are real ones from tests/assets/slsa (GitHub Actions, Bazel Central
Registry and container-based builder provenance) with every digest, identifier, name and
time changed, so no two are alike.
"""

from __future__ import annotations

import argparse
import base64
import json
import platform
import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ASSETS = Path(__file__).parent.parent / "tests" / "assets" / "slsa"
TEMPLATES = (
    "github-cli/sigstore-js-2.1.0-bundle.json",
    "slsa-verifier/cli/bcr/rules_lint-v1.3.1.tar.gz.intoto.jsonl",
    "slsa-verifier/cli/gha_container-based/v2.1.0/binary-linux-amd64-push-v14.intoto.build.slsa",
)
HEX = "0123456789abcdef"


def _templates() -> list[dict[str, Any]]:
    found = []
    for name in TEMPLATES:
        raw = (ASSETS / name).read_bytes()
        bundle = json.loads(raw if name.endswith(".json") else raw.splitlines()[0])
        statement = json.loads(base64.b64decode(bundle["dsseEnvelope"]["payload"]))
        # Real-shaped v1 statements: the in-toto Statement/v1 layer around the predicate.
        statement["_type"] = "https://in-toto.io/Statement/v1"
        found.append(statement)
    return found


FIXED = frozenset({"_type", "predicateType", "buildType"})


def _vary(value: Any, rng: random.Random) -> Any:
    """The same shape with fresh digests, ids and numbers (type identifiers kept)."""
    if isinstance(value, dict):
        return {key: item if key in FIXED else _vary(item, rng) for key, item in value.items()}
    if isinstance(value, list):
        return [_vary(item, rng) for item in value]
    if isinstance(value, str):
        if len(value) in (40, 64, 128) and not value.strip(HEX):
            return "".join(rng.choice(HEX) for _ in value)
        if value[-1:].isdigit():
            return f"{value}{rng.randrange(10**6)}"
        return value
    return value


def make_statements(count: int, seed: int = 5) -> list[bytes]:
    rng = random.Random(seed)
    templates = _templates()
    made = [json.dumps(_vary(templates[i % len(templates)], rng)).encode() for i in range(count)]
    assert len(set(made)) == count
    return made


def _json_loads(data: list[bytes]) -> None:
    for item in data:
        json.loads(item)


def _orjson_loads(data: list[bytes]) -> None:
    import orjson

    for item in data:
        orjson.loads(item)


def _assay(data: list[bytes]) -> None:
    from assay.attestation import has_errors, parse_statement, validate

    for item in data:
        if has_errors(validate(parse_statement(item))):
            raise AssertionError("a generated statement did not validate")


def _in_toto(data: list[bytes]) -> None:
    from google.protobuf import json_format  # type: ignore[import-untyped]
    from in_toto_attestation.v1 import statement_pb2
    from in_toto_attestation.v1.statement import Statement

    for item in data:
        proto = statement_pb2.Statement()
        json_format.Parse(item, proto, ignore_unknown_fields=True)
        Statement.copy_from_pb(proto).validate()


def _best(
    pipelines: dict[str, Callable[[list[bytes]], None]], data: list[bytes], repeat: int
) -> dict[str, float]:
    """Best time of each pipeline; rounds interleave them so they share the machine's load."""
    best = dict.fromkeys(pipelines, float("inf"))
    for _ in range(repeat):
        for name, work in pipelines.items():
            started = time.perf_counter()
            work(data)
            best[name] = min(best[name], time.perf_counter() - started)
    return best


def run(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench attest")
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    data = make_statements(args.count)
    size = sum(len(item) for item in data) / len(data)
    print(f"{args.count} distinct v1 statements, {size:.0f} bytes each on average")
    print(f"Python {platform.python_version()} on {platform.machine()}, best of {args.repeat}")
    # orjson.loads is what assay parses with: shown so the cost of validation is visible.
    pipelines: dict[str, Callable[[list[bytes]], None]] = {
        "json.loads": _json_loads,
        "orjson.loads": _orjson_loads,
        "assay parse+validate": _assay,
        "in-toto-attestation": _in_toto,
    }
    _assay(data[:100])  # warm imports and regex caches outside the timing
    _in_toto(data[:100])
    timings = _best(pipelines, data, args.repeat)
    floor = timings["json.loads"]
    for name, seconds in timings.items():
        per = seconds / args.count * 1e6
        print(f"{name:<22} {per:8.2f} us/statement  {seconds / floor:5.2f}x json.loads")
    ours, theirs = timings["assay parse+validate"], timings["in-toto-attestation"]
    print(f"in-toto-attestation / assay: {theirs / ours:.1f}x")
