"""slsa-verifier's and gh's modes are built-in policies run by the one `Verifier`.

The policy built from `verify-artifact`'s flags (`slsa_verifier_policy`) and from
`verify-bundle`'s (`GhPolicy.mode_policy`), run by the `Verifier` that runs policy
files, gives the verdict the command gives, in the same `Report`; the certificate's
rules are `CertificateRules` with upstream's check names; the validator is a policy
choice (off for the modes, as upstream, on for a policy file).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay import verify as verify_package
from assay._cli import main
from assay.policy.builtin import BuiltinPolicy, ModePolicy, SignatureForm, StatementRules
from assay.policy.gh_attestation import GhPolicy
from assay.policy.identity import CertificateRules, IdentityRule
from assay.policy.loader import load_policy
from assay.policy.slsa_github import (
    BUILTIN_POLICY_URI,
    FAMILIES,
    GeneratorIdentity,
    Options,
    slsa_verifier_policy,
)
from assay.sigstore import BundleVerifier, default_roots
from assay.verify.artifact import read_envelopes
from assay.verify.bundle_check import read_bundles
from assay.verify.certificates import SigstoreTrust
from assay.verify.inputs import read_attestations
from assay.verify.model import Artifact
from assay.verify.report import Report
from assay.verify.verifier import Verifier

ASSETS = Path(__file__).resolve().parents[1] / "assets"
GO = (
    ASSETS
    / "verify/slsa-verifier/cli/gha_go/v2.1.0/binary-linux-amd64-workflow_dispatch.intoto.jsonl"
)
GO_SHA256 = "f6ab7ad0c7549b5a4942c3b0690519d791c28c4c0f8b286208cb40da3322a066"
SOURCE = "github.com/slsa-framework/example-package"
GH_BUNDLE = ASSETS / "sigstore/github-cli/github_provenance_demo-0.0.12-py3-none-any-bundle.jsonl"
GH_SHA256 = "ae57936def59bc4c75edd3a837d89bcefc6d3a5e31d55a6fa7a71624f92c3c3b"


@pytest.fixture(scope="module")
def trust() -> SigstoreTrust:
    verifier = BundleVerifier(default_roots())
    return SigstoreTrust(roots=verifier.roots, insecure_ignore_tlog=True, verifier=verifier)


def _cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, object]]:
    try:
        code = main(argv)
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    return code, json.loads(capsys.readouterr().out)


def _artifact_argv(source: str) -> list[str]:
    return [
        "verify-artifact",
        f"sha256:{GO_SHA256}",
        "--provenance-path",
        str(GO),
        "--source-uri",
        source,
        "--insecure-ignore-tlog",
        "--json",
    ]


def test_a_policy_file_and_a_modes_builtin_policy_run_through_one_verifier(
    trust: SigstoreTrust,
) -> None:
    # The same provenance, judged by slsa-verifier's built-in policy and by the shipped
    # Go builder policy file: one `Verifier`, one kind of report, the same verdict.
    artifacts = [Artifact("go", {"sha256": GO_SHA256})]
    mode = Verifier(policy=slsa_verifier_policy(Options(source_uri=SOURCE)), trust=trust)
    mode_report = mode.verify(artifacts, read_envelopes(GO.read_bytes(), str(GO)))
    shipped = BuiltinPolicy("slsa-github-generator-go", Path()).reference
    policy_file = Verifier(policy=load_policy(shipped), trust=trust)
    file_report = policy_file.verify(artifacts, read_attestations(GO.read_bytes(), str(GO)))
    assert isinstance(mode_report, Report)
    assert isinstance(file_report, Report)
    assert mode_report.passed
    assert file_report.passed
    assert mode_report.level == file_report.level == 3
    assert [a.covering[0].name for a in mode_report.artifacts] == [
        a.covering[0].name for a in file_report.artifacts
    ]
    assert not hasattr(verify_package, "ModeVerifier")  # no second verifier to drift


@pytest.mark.parametrize(
    ("source", "passed"),
    [(SOURCE, True), ("github.com/slsa-framework/another-repository", False)],
)
def test_the_policy_of_verify_artifacts_flags_gives_the_commands_verdict(
    source: str, passed: bool, trust: SigstoreTrust, capsys: pytest.CaptureFixture[str]
) -> None:
    policy = slsa_verifier_policy(Options(source_uri=source))
    report = Verifier(policy=policy, trust=trust).verify(
        [Artifact(f"sha256:{GO_SHA256}", {"sha256": GO_SHA256})],
        read_envelopes(GO.read_bytes(), str(GO)),
    )
    code, printed = _cli(_artifact_argv(source), capsys)
    (coverage,) = report.artifacts
    assert coverage.passed is passed
    assert code == (0 if passed else 1)
    envelopes = printed["envelopes"]
    assert isinstance(envelopes, list)
    assert [[c.to_dict() for c in e.checks] for e in report.attestations] == [
        e["checks"] for e in envelopes
    ]


def test_an_untrusted_source_fails_on_the_certificate_before_the_statement_is_read(
    trust: SigstoreTrust,
) -> None:
    policy = slsa_verifier_policy(Options(source_uri="github.com/someone/else"))
    (evaluation,) = (
        Verifier(policy=policy, trust=trust)
        .verify([], read_envelopes(GO.read_bytes(), str(GO)))
        .attestations
    )
    names = [c.name for c in evaluation.checks]
    failed = [c.name for c in evaluation.checks if not c.passed]
    assert failed == ["certificate.sourceRepository"]
    assert evaluation.statement is None  # nothing an untrusted workflow signed was read
    assert names[-1] == "payloadType"


def test_verify_artifacts_policy_names_one_claims_policy_per_trusted_workflow() -> None:
    policy = slsa_verifier_policy(Options(source_uri=SOURCE))
    assert policy.uri == BUILTIN_POLICY_URI
    assert policy.signature is SignatureForm.CERTIFIED_ENVELOPE
    assert policy.certificate_first
    assert set(policy.statements) == {family.workflow for family in FAMILIES}
    for family in FAMILIES:
        rules = policy.statements[family.workflow]
        assert rules.policy is not None
        assert rules.builder_is_signer is not family.delegator
        assert rules.validate is False  # slsa-verifier does not run assay's validator
    images = slsa_verifier_policy(Options(source_uri=SOURCE, image=True))
    assert len(images.statements) == len(FAMILIES) + 1


def test_the_certificate_rules_are_one_family() -> None:
    rules: list[CertificateRules] = [
        IdentityRule(issuer="https://token.actions.githubusercontent.com", subject="x"),
        GeneratorIdentity(Options(source_uri=SOURCE)),
        GhPolicy(owner="actions"),
    ]
    assert all(callable(rule.checks) for rule in rules)


def test_the_policy_of_verify_bundles_flags_gives_the_commands_verdict(
    trust: SigstoreTrust, capsys: pytest.CaptureFixture[str]
) -> None:
    gh = GhPolicy(owner="actions", repo="actions/attest-demo")
    policy = gh.mode_policy()
    assert isinstance(policy, ModePolicy)
    assert policy.signature is SignatureForm.BUNDLE
    assert not policy.certificate_first  # gh reads the statement, then judges the certificate
    assert policy.default == StatementRules(predicate_type=gh.predicate_type)
    report = Verifier(policy=policy, trust=trust).verify(
        [Artifact("demo", {"sha256": GH_SHA256})],
        read_bundles(GH_BUNDLE.read_bytes(), str(GH_BUNDLE)),
    )
    code, printed = _cli(
        [
            "verify-bundle",
            f"sha256:{GH_SHA256}",
            "--bundle",
            str(GH_BUNDLE),
            "--repo",
            "actions/attest-demo",
            "--json",
        ],
        capsys,
    )
    (coverage,) = report.artifacts
    assert coverage.passed
    assert code == 0
    assert printed["verified"] == len(coverage.covering)
    names = [c.name for c in report.attestations[0].checks]
    assert names.index("predicateType") < names.index("certificate.sourceRepositoryOwnerUri")


def test_gh_policy_fails_another_owner_under_ghs_check_name(trust: SigstoreTrust) -> None:
    policy = GhPolicy(owner="someone-else").mode_policy()
    report = Verifier(policy=policy, trust=trust).verify(
        [Artifact("demo", {"sha256": GH_SHA256})],
        read_bundles(GH_BUNDLE.read_bytes(), str(GH_BUNDLE)),
    )
    assert not report.artifacts[0].passed
    failed = [c.name for e in report.attestations for c in e.checks if not c.passed]
    assert failed[0] == "certificate.sourceRepositoryOwnerUri"


def test_the_validator_is_a_policy_choice(trust: SigstoreTrust) -> None:
    base = slsa_verifier_policy(Options(source_uri=SOURCE))
    validating = ModePolicy(
        uri=base.uri,
        signature=base.signature,
        certificate=base.certificate,
        statements={
            workflow: StatementRules(
                policy=rules.policy, builder_is_signer=rules.builder_is_signer, validate=True
            )
            for workflow, rules in base.statements.items()
        },
    )
    documents = read_envelopes(GO.read_bytes(), str(GO))
    artifacts = [Artifact("go", {"sha256": GO_SHA256})]
    plain = Verifier(policy=base, trust=trust).verify(artifacts, documents).attestations[0]
    validated = (
        Verifier(policy=validating, trust=trust).verify(artifacts, documents).attestations[0]
    )
    assert "statement.valid" not in [c.name for c in plain.checks]
    assert "statement.valid" in [c.name for c in validated.checks]
