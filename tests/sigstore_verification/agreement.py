"""Agreement of `assay verify-artifact` / `assay verify-bundle` with slsa-verifier and gh.

Every case of the two expectation files that needs no network is run through the command
line (`assay._cli.main`, in-process, one call per builder-id variant) and its exit code
compared with the expected verdict: pass = exit 0, fail = exit 1 or 2 (2 when assay
judges the input itself unusable, e.g. a malformed `--source-uri`). A case with several
`--builder-id` variants agrees only when every variant agrees.

Counted (docs/verification.md, "Agreement through the command line"):
- slsa-verifier `verify-artifact` cases whose provenance is a Sigstore bundle (the log
  entry is in the file);
- gh `attestation verify` cases with a local bundle and an artifact digest.
Counted apart (`legacy_cases`): slsa-verifier's legacy `.intoto.jsonl` cases, which
upstream looks up in Rekor online, run offline with `--insecure-ignore-tlog` in place of
that search, except the one whose expected failure is the search itself.
Not counted: images, npm, unit-level cases.

`python -m tests.sigstore_verification.agreement [--legacy]` prints the figures.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay._cli import main

ROOT = Path(__file__).resolve().parents[2]
SLSA_VERIFIER = ROOT / "tests" / "assets" / "verify" / "slsa-verifier"
GITHUB_CLI = ROOT / "tests" / "assets" / "sigstore" / "github-cli"


@dataclass(frozen=True)
class Case:
    id: str
    corpus: str
    argv: tuple[tuple[str, ...], ...]
    """One command line per variant."""
    expected: str
    expected_error: str | None


@dataclass(frozen=True)
class Outcome:
    case: Case
    codes: tuple[int, ...]
    stderr: str

    @property
    def got(self) -> str:
        return (
            "pass"
            if all(c == 0 for c in self.codes)
            else ("fail" if all(c != 0 for c in self.codes) else "mixed")
        )

    @property
    def agrees(self) -> bool:
        return self.got == self.case.expected


def _artifact(entry: dict[str, Any]) -> str:
    path = SLSA_VERIFIER / entry["path"]
    if entry.get("file_included") and path.is_file():
        return str(path)
    return f"sha256:{entry['sha256']}"


def slsa_verifier_cases(*, legacy: bool = False) -> Iterator[Case]:
    """slsa-verifier's `verify-artifact` cases: those whose provenance is a Sigstore
    bundle, or (`legacy`) those whose provenance is a legacy `.intoto.jsonl` envelope."""
    data = json.loads((SLSA_VERIFIER / "expectations.json").read_text())
    for case in data["cases"]:
        if case.get("command") != "verify-artifact":
            continue
        if ("in bundle" in (case.get("tlog_material") or "")) == legacy:
            continue
        if legacy and case["expected_error"] in ONLINE_ERRORS:
            continue
        options = case.get("options") or {}
        base = [
            "verify-artifact",
            *[_artifact(a) for a in case["artifacts"]],
            "--provenance-path",
            str(SLSA_VERIFIER / case["provenance"]),
        ]
        if legacy:
            base.append("--insecure-ignore-tlog")
        if options.get("source_uri") is not None:
            base += ["--source-uri", options["source_uri"]]
        for flag in ("source_branch", "source_tag", "source_versioned_tag"):
            if options.get(flag) is not None:
                base += ["--" + flag.replace("_", "-"), options[flag]]
        for key, value in (options.get("build_workflow_inputs") or {}).items():
            base += ["--build-workflow-input", f"{key}={value}"]
        variants = []
        for builder_id in case.get("builder_id_variants") or [None]:
            argv = list(base)
            if builder_id is not None:
                argv += ["--builder-id", builder_id]
            variants.append(tuple(argv))
        corpus = "slsa-verifier-legacy" if legacy else "slsa-verifier"
        yield Case(case["id"], corpus, tuple(variants), case["expected"], case["expected_error"])


ONLINE_ERRORS = frozenset({"ErrorRekorSearch"})
"""Legacy cases whose expected failure is the Rekor search itself: only the network
decides them, and they are not counted."""


def github_cli_cases() -> Iterator[Case]:
    data = json.loads((GITHUB_CLI / "expectations.json").read_text())
    artifacts = data["artifacts"]
    for number, recorded in enumerate(data["cases"], 1):
        case = dict(recorded)
        if "artifact" not in case:
            # gh's loading tests name no artifact: the bundle's own artifact is used.
            case["artifact"] = _LOADED_ARTIFACT[case["bundle"].split("-0", 1)[0]]
            case["digest_alg"] = "sha512" if "sigstore-js" in case["artifact"] else "sha256"
        info = artifacts[case["artifact"]]
        algorithm = case.get("digest_alg", "sha256")
        path = GITHUB_CLI / case["artifact"]
        artifact = (
            str(path)
            if info.get("file_included") and path.is_file()
            else (f"{algorithm}:{info[algorithm]}")
        )
        options = case.get("options") or {}
        argv = ["verify-bundle", artifact, "--bundle", str(GITHUB_CLI / case["bundle"])]
        argv += ["--digest-alg", algorithm]
        if options.get("repo"):
            argv += ["--repo", options["repo"]]
        else:
            owner = options.get("owner") or _owner_of(GITHUB_CLI / case["bundle"])
            argv += ["--owner", owner]
        if options.get("san"):
            argv += ["--cert-identity", options["san"]]
        if options.get("san_regex"):
            argv += ["--cert-identity-regex", options["san_regex"]]
        if options.get("oidc_issuer"):
            argv += ["--cert-oidc-issuer", options["oidc_issuer"]]
        if case.get("trusted_root"):
            argv += ["--custom-trusted-root", str(GITHUB_CLI / case["trusted_root"])]
        yield Case(f"gh{number:02d}", "gh", (tuple(argv),), case["expected"], None)


_LOADED_ARTIFACT = {
    "sigstore-js-2.1.0_with_2_bundles.jsonl": "sigstore-js-2.1.0.tgz",
    "sigstore-js-2.1.0": "sigstore-js-2.1.0.tgz",
    "github_provenance_demo": "github_provenance_demo-0.0.12-py3-none-any.whl",
}


_SIGNER_OWNER = {
    "sigstore-js": "sigstore",
    "github_provenance_demo": "actions",
    "custom": "too-legit",
}


def _owner_of(bundle: Path) -> str:
    """gh's verifier tests check the digest only; the command needs an owner: the signer's."""
    return next(owner for prefix, owner in _SIGNER_OWNER.items() if bundle.name.startswith(prefix))


@contextlib.contextmanager
def environment(case: Case) -> Iterator[None]:
    """slsa-verifier's regression tests run with SLSA_VERIFIER_TESTING; gh's without."""
    before = os.environ.get("SLSA_VERIFIER_TESTING")
    os.environ["SLSA_VERIFIER_TESTING"] = "1" if case.corpus.startswith("slsa-verifier") else ""
    try:
        yield
    finally:
        if before is None:
            del os.environ["SLSA_VERIFIER_TESTING"]
        else:
            os.environ["SLSA_VERIFIER_TESTING"] = before


def run(case: Case) -> Outcome:
    """Run every variant through the command line."""
    with environment(case):
        return _run(case)


def _run(case: Case) -> Outcome:
    codes = []
    stderr = io.StringIO()
    for argv in case.argv:
        with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
            try:
                code = main(list(argv))
            except SystemExit as exit_:
                code = int(exit_.code or 0)
        codes.append(code)
    return Outcome(case, tuple(codes), stderr.getvalue())


def all_cases() -> list[Case]:
    return [*slsa_verifier_cases(), *github_cli_cases()]


def legacy_cases() -> list[Case]:
    return list(slsa_verifier_cases(legacy=True))


def summary(outcomes: list[Outcome]) -> Counter[tuple[str, str, str]]:
    return Counter(
        (o.case.corpus, o.case.expected, "agrees" if o.agrees else "differs") for o in outcomes
    )


if __name__ == "__main__":
    import sys

    chosen = legacy_cases() if "--legacy" in sys.argv else all_cases()
    results = [run(case) for case in chosen]
    for key, count in sorted(summary(results).items()):
        print(key, count)
    for outcome in results:
        if not outcome.agrees:
            print(
                outcome.case.id, outcome.case.expected, outcome.case.expected_error, outcome.codes
            )
            print(
                "   ",
                outcome.stderr.strip().splitlines()[-1][:300] if outcome.stderr.strip() else "",
            )
