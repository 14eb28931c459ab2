"""Start-up: building the parser and printing any help imports no heavy module.

Each check runs in a fresh interpreter (what a user's `assay ...` is) and looks at
`sys.modules` afterwards. The time itself is measured by bench/bench_cli.py.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ASSETS = Path(__file__).parent.parent / "assets"
STATEMENT = ASSETS / "slsa" / "slsa-github-generator" / "attestation1.intoto"

# What no help text may cost: the NVD client, sync, storage and importer, the web stack,
# cryptography and Sigstore, and the libraries only some commands use.
HEAVY_FOR_HELP = (
    "assay.nvd.client",
    "assay.nvd.sync",
    "assay.nvd.storage",
    "assay.nvd.ingest.importer",
    "assay.nvd.server.app",
    "assay.verify",
    "assay.policy",
    "assay.keys",
    "assay.dsse",
    "assay.attestation",
    "starlette",
    "uvicorn",
    "httpx",
    "cryptography",
    "sigstore",
    "psycopg",
    "rich",
    "yaml",
    "orjson",
    "msgspec",
    "jinja2",
    # standard library, but ~10 ms with what they import (ast, dis, tokenize)
    "dataclasses",
    "inspect",
)
# `assay attest validate` reads attestations: it needs assay.attestation, nothing of the
# NVD side, the web stack, signatures or policies.
HEAVY_FOR_VALIDATE = (
    "assay.nvd.client",
    "assay.nvd.sync",
    "assay.nvd.storage",
    "assay.nvd.ingest.importer",
    "assay.nvd.server.app",
    "assay.verify",
    "assay.policy",
    "assay.keys",
    "starlette",
    "uvicorn",
    "httpx",
    "cryptography",
    "sigstore",
    "psycopg",
    "yaml",
    "jinja2",
    "rich",  # output into a pipe is plain text
)

_EVERY_HELP = """
import argparse, json, sys
from assay._cli import build_parser

def walk(parser):
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                yield from walk(child)

count = 0
for parser in walk(build_parser()):
    parser.format_help()
    parser.format_usage()
    count += 1
print(json.dumps({"parsers": count, "modules": sorted(sys.modules)}))
"""

_RUN = """
import json, sys
from assay._cli import main
try:
    code = main(sys.argv[1:])
except SystemExit as stop:
    code = stop.code
sys.stdout.flush()
print("\\n" + json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


def _loaded(modules: list[str], heavy: tuple[str, ...]) -> list[str]:
    return [m for m in modules if any(m == h or m.startswith(h + ".") for h in heavy)]


def _run(*argv: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", _RUN, *argv], capture_output=True, text=True, check=False
    )
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def test_every_help_text_imports_no_heavy_module() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _EVERY_HELP], capture_output=True, text=True, check=True
    )
    report = json.loads(done.stdout)
    assert report["parsers"] > 10  # every command's parser was formatted
    assert _loaded(report["modules"], HEAVY_FOR_HELP) == []


@pytest.mark.parametrize(
    "argv",
    [
        ("--help",),
        ("attest", "validate", "--help"),
        ("verify", "--help"),
        ("nvd", "sync", "--help"),
        ("serve", "--help"),
        ("keys", "generate", "--type", "bogus", "--out", "x"),  # a usage error
    ],
)
def test_help_and_usage_errors_import_no_heavy_module(argv: tuple[str, ...]) -> None:
    report = _run(*argv)
    assert report["code"] in (0, 2)
    assert _loaded(list(report["modules"]), HEAVY_FOR_HELP) == []  # type: ignore[arg-type]


def test_validating_one_statement_imports_only_what_validation_needs() -> None:
    report = _run("attest", "validate", str(STATEMENT))
    assert report["code"] == 0
    modules = list(report["modules"])  # type: ignore[call-overload]
    assert "assay.attestation.validate" in modules
    assert _loaded(modules, HEAVY_FOR_VALIDATE) == []


def test_the_check_would_see_a_heavy_import() -> None:
    """The subprocess really reports what a command loads (the test above could fail)."""
    report = _run("keys", "generate", "--type", "ed25519", "--out", "/nonexistent-dir/k")
    assert report["code"] == 2
    assert "cryptography" in {m.split(".")[0] for m in report["modules"]}  # type: ignore[attr-defined]
