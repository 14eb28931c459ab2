"""`assay verify-vsa` on a Sigstore bundle: the certificate identity stands for a key.

No keylessly signed VSA exists among the real test files, so a real bundle of another
predicate (sigstore-js's npm provenance) shows each step: the bundle verifies offline and
its certificate shows the identity (steps pass up to the signature), then the statement
is judged as a VSA (its predicateType fails)."""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Callable
from pathlib import Path

import pytest

BUNDLE = Path(__file__).parents[1] / "assets/sigstore/github-cli/sigstore-js-2.1.0-bundle.json"
SAN = "https://github.com/sigstore/sigstore-js/.github/workflows/release.yml@refs/heads/main"
ISSUER = "https://token.actions.githubusercontent.com"


def _digest() -> str:
    payload = json.loads(BUNDLE.read_bytes())["dsseEnvelope"]["payload"]
    (subject,) = json.loads(base64.b64decode(payload))["subject"]
    return f"sha512:{subject['digest']['sha512']}"


def _run(cli: Callable[..., int], *identity: str) -> int:
    return cli(
        "verify-vsa", str(BUNDLE), "--subject-digest", _digest(),
        "--verifier-id", "https://verifier.example", "--resource-uri", "pkg:npm/sigstore",
        "--json", *identity,
    )  # fmt: skip


def _checks(capsys: pytest.CaptureFixture[str]) -> dict[str, bool]:
    report = json.loads(capsys.readouterr().out)
    return {c["check"]: c["passed"] for c in report["checks"]}


def test_the_identity_signs_for_the_verifier(
    cli: Callable[..., int], capsys: pytest.CaptureFixture[str]
) -> None:
    code = _run(cli, "--certificate-identity", SAN, "--certificate-oidc-issuer", ISSUER)
    checks = _checks(capsys)
    assert checks["signature.certificate"] is True
    assert checks["signature"] is True
    assert checks["subject"] is True
    assert checks["predicateType"] is False  # a provenance, not a VSA
    assert code == 1


@pytest.mark.parametrize(
    "identity",
    [
        ("--certificate-identity", SAN, "--certificate-oidc-issuer", "https://accounts.google.com"),
        (
            "--certificate-identity",
            "/https://github.com/acme/.+/",
            "--certificate-oidc-issuer",
            ISSUER,
        ),
    ],
)
def test_another_identity_does_not(
    cli: Callable[..., int], capsys: pytest.CaptureFixture[str], identity: tuple[str, ...]
) -> None:
    assert _run(cli, *identity) == 1
    checks = _checks(capsys)
    assert checks["signature.certificate"] is False
    assert checks["signature"] is False


def test_a_pattern_identity_matches_the_whole_san(
    cli: Callable[..., int], capsys: pytest.CaptureFixture[str]
) -> None:
    pattern = "/https://github.com/sigstore/sigstore-js/.+@refs/heads/main/"
    _run(cli, "--certificate-identity", pattern, "--certificate-oidc-issuer", ISSUER)
    assert _checks(capsys)["signature"] is True


def test_neither_key_nor_identity_is_a_usage_error(cli: Callable[..., int]) -> None:
    assert _run(cli) == 2
    assert hashlib.sha256(BUNDLE.read_bytes()).hexdigest()  # the file is untouched
