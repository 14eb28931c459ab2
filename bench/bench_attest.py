"""Parse and fully validate 10,000 distinct SLSA provenance v1 statements.

Three pipelines over the same bytes, in one run:
- `json.loads` alone (the reference: parsing, no checks), and `orjson.loads` alone (the
  parser assay uses, so the cost of validation itself shows);
- assay: `parse_statement` then `validate` (every rule of the spec);
- in-toto-attestation 0.9.3: `json_format.Parse` into the Statement proto, then
  `Statement.validate()` (statement layer only; the predicate is not checked).

The statements are real ones from tests/assets/slsa (GitHub Actions, Bazel Central
Registry and container-based builder provenance) with every digest and numbered
identifier changed, so no two are alike. Figures are printed for all of them and for each
shape, since json.loads' cost grows with size and validation's with structure.
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


def make_statements(count: int, seed: int = 5) -> list[list[bytes]]:
    """`count` distinct statements, in one block per template (shape)."""
    rng = random.Random(seed)
    templates = _templates()
    blocks: list[list[bytes]] = []
    for index, template in enumerate(templates):
        size = count // len(templates) + (index < count % len(templates))
        blocks.append([json.dumps(_vary(template, rng)).encode() for _ in range(size)])
    assert len({item for block in blocks for item in block}) == count
    return blocks


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
    pipelines: dict[str, Callable[[list[bytes]], None]],
    blocks: list[list[bytes]],
    repeat: int,
    chunk: int = 250,
) -> dict[str, list[float]]:
    """Per pipeline, the time of each block: the sum of its chunks' best times.

    Pipelines take turns chunk by chunk, so they share whatever load the machine has;
    keeping the best of `repeat` tries per chunk filters out the other processes.
    """
    chunks = [
        (number, block[i : i + chunk])
        for number, block in enumerate(blocks)
        for i in range(0, len(block), chunk)
    ]
    best = {name: [float("inf")] * len(chunks) for name in pipelines}
    for _ in range(repeat):
        for index, (_, part) in enumerate(chunks):
            for name, work in pipelines.items():
                started = time.perf_counter()
                work(part)
                elapsed = time.perf_counter() - started
                best[name][index] = min(best[name][index], elapsed)
    totals = {name: [0.0] * len(blocks) for name in pipelines}
    for name, times in best.items():
        for (number, _), seconds in zip(chunks, times, strict=True):
            totals[name][number] += seconds
    return totals


def run(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench attest")
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args(argv)
    blocks = make_statements(args.count)
    data = [item for block in blocks for item in block]
    size = sum(len(item) for item in data) / len(data)
    print(f"{args.count} distinct v1 statements, {size:.0f} bytes each on average")
    print(
        f"Python {platform.python_version()} on {platform.machine()}; "
        f"best of {args.repeat} per chunk of 250, pipelines interleaved"
    )
    # orjson.loads is what assay parses with: shown so the cost of validation is visible.
    pipelines: dict[str, Callable[[list[bytes]], None]] = {
        "json.loads": _json_loads,
        "orjson.loads": _orjson_loads,
        "assay parse+validate": _assay,
        "in-toto-attestation": _in_toto,
    }
    _assay(data[:100])  # warm imports and caches outside the timing
    _in_toto(data[:100])
    timings = _best(pipelines, blocks, args.repeat)
    floor = sum(timings["json.loads"])
    print("all statements:")
    for name, seconds in timings.items():
        per = sum(seconds) / len(data) * 1e6
        print(f"  {name:<22} {per:8.2f} us/statement  {sum(seconds) / floor:5.2f}x json.loads")
    ours, theirs = sum(timings["assay parse+validate"]), sum(timings["in-toto-attestation"])
    print(f"  in-toto-attestation / assay: {theirs / ours:.1f}x")
    print("by shape (assay and in-toto-attestation against json.loads):")
    for number, block in enumerate(blocks):
        shape = TEMPLATES[number].split("/")[-1]
        average = sum(len(item) for item in block) / len(block)
        base = timings["json.loads"][number]
        print(
            f"  {shape:<48} {average:6.0f} B  json.loads "
            f"{base / len(block) * 1e6:6.2f} us  assay "
            f"{timings['assay parse+validate'][number] / base:4.2f}x  in-toto "
            f"{timings['in-toto-attestation'][number] / base:5.2f}x"
        )
