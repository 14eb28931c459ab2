"""Agreement through the command line, and the CLI's exit code held to the library's verdict.

Every counted case of slsa-verifier's and gh's expectations (tests/sigstore_verification/agreement.py
says which and how) runs through `assay._cli.main`; the same inputs then go to the
library (`verify_artifacts` / `verify_bundles`) and its verdict must give the same exit
code. The known differences are listed here and explained in docs/verification.md.
slsa-verifier's legacy `.intoto.jsonl` cases are counted apart: they run with
`--insecure-ignore-tlog` in place of upstream's online Rekor search, and each expected
failure must fail on the check upstream's error names.
"""

from __future__ import annotations

import argparse
import functools
import re

import pytest
from tests.sigstore_verification import agreement

from assay._cli import build_parser
from assay.errors import AssayError

CASES = agreement.all_cases()

KNOWN_DIFFERENCES: dict[str, str] = {}
"""None: GitHub's own instance (gh02: RFC 3161 timestamps, no log entry) verifies with the
shipped GitHub trusted root."""


@functools.cache
def _parser() -> argparse.ArgumentParser:
    return build_parser()


def _library_exit(argv: tuple[str, ...]) -> int:
    """The verdict the library gives for the same command line, as an exit code."""
    from assay._cli import verify_artifact as cli

    args = _parser().parse_args(list(argv))
    try:
        if args.command == "verify-artifact":
            return _artifact_verdict(cli, args)
        return _bundle_verdict(cli, args)
    except AssayError:
        return 2


def _artifact_verdict(cli: object, args: argparse.Namespace) -> int:
    from assay.attestation.files import read_file
    from assay.policy.slsa_github import Options
    from assay.verify.artifact import verify_artifacts
    from assay.verify.request import bundle_verifier, read_artifact

    options = Options(
        source_uri=args.source_uri,
        source_branch=args.source_branch,
        source_tag=args.source_tag,
        source_versioned_tag=args.source_versioned_tag,
        builder_id=args.builder_id,
        workflow_inputs=tuple(tuple(p.split("=", 1)) for p in args.build_workflow_input),  # type: ignore[misc]
    )
    result = verify_artifacts(
        [read_artifact(a) for a in args.artifacts],
        read_file(args.provenance_path),
        args.provenance_path,
        options,
        bundle_verifier(args.trusted_root, only=args.only_trusted_roots),
        insecure_ignore_tlog=args.insecure_ignore_tlog,
    )
    return 0 if result.passed else 1


def _bundle_verdict(cli: object, args: argparse.Namespace) -> int:
    from assay.attestation.files import read_file
    from assay.policy.gh_attestation import GhPolicy, parse_regex
    from assay.verify.bundle_check import verify_bundles
    from assay.verify.request import bundle_verifier, read_artifact

    artifact = read_artifact(args.artifact)
    algorithm = (
        args.digest_alg if args.digest_alg in artifact.digest else next(iter(artifact.digest))
    )
    policy = GhPolicy(
        owner=args.owner or args.repo.split("/")[0],
        repo=args.repo,
        cert_identity=args.cert_identity,
        cert_identity_regex=parse_regex(args.cert_identity_regex, "x")
        if args.cert_identity_regex
        else None,
        oidc_issuer=args.cert_oidc_issuer or "https://token.actions.githubusercontent.com",
    )
    args.trusted_root = args.custom_trusted_root
    args.only_trusted_roots = bool(args.custom_trusted_root)
    result = verify_bundles(
        artifact.name,
        (algorithm, artifact.digest[algorithm]),
        read_file(args.bundle),
        args.bundle,
        policy=policy,
        verifier=bundle_verifier(args.trusted_root, only=args.only_trusted_roots),
    )
    return 0 if result.passed else 1


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_cli_agrees_and_matches_the_library(case: agreement.Case) -> None:
    outcome = agreement.run(case)
    if case.id in KNOWN_DIFFERENCES:
        assert not outcome.agrees, f"{case.id} now agrees: update docs/verification.md"
    else:
        assert outcome.agrees, (
            case.expected,
            case.expected_error,
            outcome.codes,
            outcome.stderr[-400:],
        )
    with agreement.environment(case):
        library = tuple(_library_exit(argv) for argv in case.argv)
    assert outcome.codes == library


def test_the_corpus_is_the_documented_size() -> None:
    counts = agreement.summary([])
    assert not counts
    by_corpus = {"slsa-verifier": 0, "gh": 0}
    for case in CASES:
        by_corpus[case.corpus] += 1
    assert by_corpus == {"slsa-verifier": 485, "gh": 16}


LEGACY = agreement.legacy_cases()

# The check assay fails on, for each error slsa-verifier expects in the legacy cases.
_LEGACY_CHECKS = {
    "ErrorInvalidRef": ("source.tag", "source.versionedTag"),
    "ErrorMismatchBranch": ("source.branch",),
    "ErrorMismatchHash": ("subject",),
    "ErrorMismatchSource": ("certificate.sourceRepository",),
    "ErrorMismatchTag": ("source.tag",),
    "ErrorMismatchVersionedTag": ("source.versionedTag",),
    "ErrorMismatchWorkflowInputs": ("workflowInputs.",),
    "ErrorUntrustedReusableWorkflow": ("certificate.builder",),
}


@pytest.mark.parametrize("case", LEGACY, ids=[c.id for c in LEGACY])
def test_legacy_case_agrees_for_the_reason_upstream_gives(case: agreement.Case) -> None:
    outcome = agreement.run(case)
    assert outcome.agrees, (
        case.expected,
        case.expected_error,
        outcome.codes,
        outcome.stderr[-400:],
    )
    if case.expected == "fail":
        failed = set(re.findall(r"FAILED: SLSA verification failed: ([^:]+):", outcome.stderr))
        assert failed, outcome.stderr[-400:]
        expected = _LEGACY_CHECKS[str(case.expected_error)]
        assert all(name.startswith(expected) for name in failed), (case.expected_error, failed)
    else:
        assert "no transparency-log entry was checked" in outcome.stderr  # never silent
    with agreement.environment(case):
        library = tuple(_library_exit(argv) for argv in case.argv)
    assert outcome.codes == library


def test_the_legacy_corpus_is_the_documented_size() -> None:
    by_expectation = {"pass": 0, "fail": 0}
    for case in LEGACY:
        by_expectation[case.expected] += 1
    assert by_expectation == {"pass": 158, "fail": 455}
