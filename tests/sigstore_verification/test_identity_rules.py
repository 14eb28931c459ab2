"""Identity rules: exact and full-match SANs, issuer, Fulcio extension pins."""

from __future__ import annotations

import dataclasses
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.errors import AttestationError
from assay.policy.identity import IdentityRule
from assay.sigstore.identity import CertificateIdentity

ISSUER = "https://token.actions.githubusercontent.com"
SAN = "https://github.com/acme/widget/.github/workflows/release.yml@refs/tags/v1.2.3"
IDENTITY = CertificateIdentity(
    san=SAN,
    issuer=ISSUER,
    source_repository_uri="https://github.com/acme/widget",
    source_repository_ref="refs/tags/v1.2.3",
    runner_environment="github-hosted",
    build_trigger="push",
)


def test_every_requirement_is_a_check() -> None:
    rule = IdentityRule.from_mapping(
        {
            "issuer": ISSUER,
            "subjectPattern": r"https://github\.com/acme/widget/\.github/workflows/release\.yml@refs/tags/v[0-9]+\.[0-9]+\.[0-9]+",
            "sourceRepository": "https://github.com/acme/widget",
            "runnerEnvironment": "github-hosted",
            "buildTrigger": "push",
        },
        "p",
    )
    assert rule.matches(IDENTITY)
    assert [c.name for c in rule.checks(IDENTITY)] == [
        "identity.issuer",
        "identity.subject",
        "identity.sourceRepository",
        "identity.runnerEnvironment",
        "identity.buildTrigger",
    ]
    self_hosted = dataclasses.replace(IDENTITY, runner_environment="self-hosted")
    assert not rule.matches(self_hosted)
    assert not rule.checks(self_hosted)[3].passed


@settings(max_examples=50)
@given(suffix=st.text(min_size=1, max_size=5))
def test_a_pattern_matches_the_whole_san_only(suffix: str) -> None:
    rule = IdentityRule.from_mapping({"issuer": ISSUER, "subjectPattern": re.escape(SAN)}, "p")
    assert rule.matches(IDENTITY)
    longer = CertificateIdentity(san=SAN + suffix, issuer=ISSUER)
    assert not rule.matches(longer)


def test_an_exact_subject_and_a_wrong_issuer() -> None:
    rule = IdentityRule.from_mapping({"issuer": ISSUER, "subject": SAN}, "p")
    assert rule.matches(IDENTITY)
    assert not rule.matches(CertificateIdentity(san=SAN, issuer="https://accounts.google.com"))
    assert not rule.matches(CertificateIdentity(san=SAN + "\n", issuer=ISSUER))


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"subject": SAN}, "issuer"),
        ({"issuer": ISSUER}, "exactly one of subject or subjectPattern"),
        ({"issuer": ISSUER, "subject": SAN, "subjectPattern": ".*"}, "exactly one"),
        ({"issuer": ISSUER, "subject": SAN, "runner": "x"}, "p.runner: unknown key"),
        ({"issuer": ISSUER, "subjectPattern": "("}, "regular expression"),
        ({"issuer": ISSUER, "subject": ""}, "non-empty string"),
    ],
)
def test_malformed_rules_name_the_key(data: dict, message: str) -> None:
    with pytest.raises(AttestationError, match=re.escape(message)):
        IdentityRule.from_mapping(data, "p")


def test_policy_subject_patterns_are_full_matches() -> None:
    """A policy's `subjectPattern` must match the whole SAN; `--cert-identity-regex` is a
    search, as gh and cosign read it (test_the_cli_identity_regex_is_a_search_as_gh_reads_it)."""
    for pattern, matched in [
        (r"https://github\.com/acme/widget/.*", True),
        (r"acme/widget", False),  # a substring: a search would match it
        (r"https://github\.com/acme/", False),  # a prefix
        (r".*release\.yml", False),  # a ref follows
        (r".*@refs/tags/v1\.2\.3$", True),
    ]:
        rule = IdentityRule.from_mapping({"issuer": ISSUER, "subjectPattern": pattern}, "p")
        assert rule.matches(IDENTITY) is matched, pattern
        assert rule.checks(IDENTITY)[1].passed is matched, pattern
    newline = dataclasses.replace(IDENTITY, san=SAN + "\n")
    rule = IdentityRule.from_mapping({"issuer": ISSUER, "subjectPattern": r".*v1\.2\.3$"}, "p")
    assert not rule.matches(newline)


def test_the_cli_identity_regex_is_a_search_as_gh_reads_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from pathlib import Path

    from assay._cli import main

    bundle = (
        Path(__file__).resolve().parents[1]
        / "assets"
        / "sigstore"
        / "github-cli"
        / "sigstore-js-2.1.0-bundle.json"
    )
    digest = (
        "sha512:90f223f992e4c88dd068cd2a5fc57f9d2b30798343dd6e38f29c240e04ba090e"
        "f831f84490847c4e82b9232c78e8a258463b1e55c0f7469f730265008fa6633f"
    )

    def run(regex: str) -> int:
        argv = ["verify-bundle", digest, "--bundle", str(bundle), "--owner", "sigstore"]
        try:
            return main([*argv, "--cert-identity-regex", regex])
        except SystemExit as exit_:
            return int(exit_.code or 0)

    assert run("sigstore/sigstore-js") == 0  # unanchored: a part of the SAN is enough
    assert run("^https://github.com/sigstore/sigstore-js/") == 0
    assert run("^sigstore/sigstore-js") == 1  # anchored by the user: the whole start
    assert run("sigstore/other") == 1
    capsys.readouterr()
