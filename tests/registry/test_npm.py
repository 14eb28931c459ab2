"""`assay verify-npm-package`: slsa-verifier's 43 npm cases through the command line, and
npm's recorded attestations served by a local registry (fetched, cached, offline)."""

from __future__ import annotations

import base64
import contextlib
import io
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.registry.recorded import Answer, Recorded, serve

from assay._cli import main
from assay.registry.npm import attestations_url

ASSETS = Path(__file__).resolve().parents[1] / "assets" / "registry"
CASES: list[dict[str, Any]] = json.loads(
    (ASSETS / "slsa-verifier" / "npm-expectations.json").read_text()
)["cases"]
RECORDED = ASSETS / "npm" / "valid-sigstore-attestations.json"
SIGSTORE = ["--source-uri", "github.com/sigstore/sigstore-js"]
NPM_CLI = ["--builder-id", "https://github.com/actions/runner/github-hosted"]


@contextlib.contextmanager
def _testing() -> Iterator[None]:
    before = os.environ.get("SLSA_VERIFIER_TESTING")
    os.environ["SLSA_VERIFIER_TESTING"] = "1"
    try:
        yield
    finally:
        if before is None:
            del os.environ["SLSA_VERIFIER_TESTING"]
        else:
            os.environ["SLSA_VERIFIER_TESTING"] = before


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), _testing():
        try:
            code = main(argv)
        except SystemExit as exit_:
            code = int(exit_.code or 0)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_each_slsa_verifier_case_agrees(case: dict[str, Any]) -> None:
    options = case["options"]
    path = ASSETS / "slsa-verifier" / "npm" / case["attestations"].split("/")[-1]
    base = [
        "verify-npm-package",
        f"sha512:{case['artifacts'][0]['sha512']}",
        "--attestations-path",
        str(path),
        "--source-uri",
        options["source_uri"],
    ]
    for flag in ("package_name", "package_version"):
        if options.get(flag) is not None:
            base += ["--" + flag.replace("_", "-"), options[flag]]
    for builder_id in case["builder_id_variants"]:
        argv = base + (["--builder-id", builder_id] if builder_id is not None else [])
        code, _, err = run(argv)
        if case["expected"] == "pass":
            assert code == 0, err
        else:
            assert code in (1, 2), err
            assert "FAILED" in err or "error" in err


V1 = ASSETS / "slsa-verifier" / "npm" / "provenance-npm-test-cli-v1-prega.tgz.json"


def _sha512(path: Path = RECORDED) -> str:
    document = json.loads(path.read_text())
    payload = document["attestations"][0]["bundle"]["dsseEnvelope"]["payload"]
    return str(json.loads(base64.b64decode(payload))["subject"][0]["digest"]["sha512"])


@pytest.fixture
def npm_registry() -> Iterator[Recorded]:
    recorded = Recorded(
        {
            "/-/npm/v1/attestations/sigstore@1.0.0": Answer(RECORDED.read_bytes()),
            "/-/npm/v1/attestations/sigstore@2.3.1": Answer(V1.read_bytes()),
        }
    )
    with serve(recorded) as running:
        yield running


def test_attestations_are_fetched_from_the_registry_then_verified_offline(
    npm_registry: Recorded, tmp_path: Path
) -> None:
    argv = [
        "verify-npm-package",
        f"sha512:{_sha512(V1)}",
        *SIGSTORE,
        *NPM_CLI,
        "--package-name",
        "sigstore",
        "--package-version",
        "2.3.1",
        "--cache-dir",
        str(tmp_path),
    ]
    argv += ["--registry", npm_registry.url]
    code, _, err = run(argv)
    assert code == 0, err
    assert [path for path, _ in npm_registry.requests] == ["/-/npm/v1/attestations/sigstore@2.3.1"]
    code, out, err = run([*argv, "--offline", "--json"])
    assert code == 0, err
    assert len(npm_registry.requests) == 1  # offline: no request
    report = json.loads(out)
    assert set(report) == {
        "passed",
        "artifact",
        "package",
        "builderId",
        "provenance",
        "publishAttestation",
        "checks",
    }
    assert report["artifact"] == {
        "name": f"sha512:{_sha512(V1)}",
        "digest": {"sha512": _sha512(V1)},
    }
    assert report["builderId"] == "https://github.com/actions/runner/github-hosted"
    assert report["package"] == {"name": "sigstore", "version": "2.3.1"}
    assert report["publishAttestation"]["transparencyLog"]["proof"] == "inclusion-proof"
    assert report["passed"] is True


def test_a_pre_release_npm_cli_provenance_is_refused_online_and_offline(
    npm_registry: Recorded, tmp_path: Path
) -> None:
    """npm's recorded answer for sigstore@1.0.0 (February 2023): both signatures verify
    (the publish attestation by its promise), but the provenance names the npm CLI
    release itself as builder (`https://github.com/npm/cli@9.4.2`), which no builder
    rule trusts."""
    argv = [
        "verify-npm-package",
        f"sha512:{_sha512()}",
        *SIGSTORE,
        *NPM_CLI,
        "--package-name",
        "sigstore",
        "--package-version",
        "1.0.0",
        "--cache-dir",
        str(tmp_path),
    ]
    argv += ["--registry", npm_registry.url]
    online = run(argv)
    offline = run([*argv, "--offline"])
    assert online[0] == offline[0] == 1
    reason = "provenance.builderId: expected 'https://github.com/actions/runner', found"
    assert reason in online[2]
    assert reason in offline[2]


def test_the_wrong_expected_version_fails(npm_registry: Recorded, tmp_path: Path) -> None:
    code, _, err = run(
        [
            "verify-npm-package",
            f"sha512:{_sha512()}",
            *SIGSTORE,
            *NPM_CLI,
            "--attestations-path",
            str(RECORDED),
            "--package-version",
            "1.0.1",
        ]
    )
    assert code == 1
    assert "package.version: expected '1.0.1', found '1.0.0'" in err


def test_a_version_the_registry_does_not_have_exit_2_naming_the_url(
    npm_registry: Recorded, tmp_path: Path
) -> None:
    code, _, err = run(
        [
            "verify-npm-package",
            f"sha512:{_sha512()}",
            *SIGSTORE,
            *NPM_CLI,
            "--package-name",
            "sigstore",
            "--package-version",
            "9.9.9",
            "--registry",
            npm_registry.url,
            "--cache-dir",
            str(tmp_path),
        ]
    )
    assert code == 2
    assert f"{npm_registry.url}/-/npm/v1/attestations/sigstore@9.9.9: HTTP 404 not found" in err


def test_a_scoped_name_is_escaped_as_npm_escapes_it() -> None:
    url = attestations_url("https://registry.npmjs.org/", "@scope/name", "1.2.3")
    assert url == "https://registry.npmjs.org/-/npm/v1/attestations/@scope%2Fname@1.2.3"


def test_plain_http_is_refused_off_loopback(tmp_path: Path) -> None:
    code, _, err = run(
        [
            "verify-npm-package",
            f"sha512:{_sha512()}",
            *SIGSTORE,
            *NPM_CLI,
            "--package-name",
            "sigstore",
            "--package-version",
            "1.0.0",
            "--registry",
            "http://registry.example.com",
            "--cache-dir",
            str(tmp_path),
        ]
    )
    assert code == 2
    assert "expected an https:// URL (plain HTTP only on loopback)" in err


@pytest.mark.parametrize(
    ("document", "where"),
    [
        ({"attestations": "none"}, "$.attestations: expected npm's list of attestations"),
        (
            {"attestations": [{"predicateType": "x", "bundle": {}}]},
            "$.attestations[0].predicateType",
        ),
        (
            {"attestations": []},
            "$.attestations: expected one publish attestation and one provenance",
        ),
    ],
)
def test_a_malformed_attestations_document_exit_2_naming_the_path(
    document: dict[str, Any], where: str, tmp_path: Path
) -> None:
    path = tmp_path / "att.json"
    path.write_text(json.dumps(document))
    code, _, err = run(
        [
            "verify-npm-package",
            "sha512:" + "a" * 128,
            *SIGSTORE,
            *NPM_CLI,
            "--attestations-path",
            str(path),
        ]
    )
    assert code == 2
    assert f"{path}: {where}" in err
