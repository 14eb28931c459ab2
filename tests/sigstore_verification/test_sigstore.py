"""Sigstore bundles and legacy envelopes: what verifies, what is refused, and why."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assay._cli import main
from assay.errors import AttestationError, VerificationError
from assay.sigstore import BundleVerifier, LogProof, TimeSource, default_roots
from assay.sigstore.roots import read_root, update_root

ASSETS = Path(__file__).resolve().parents[1] / "assets"
CLI = ASSETS / "verify" / "slsa-verifier" / "cli"
GH = ASSETS / "sigstore" / "github-cli"
MAVEN = CLI / "gha_maven" / "v2.1.0" / "binary-linux-amd64-workflow_dispatch.build.slsa"
MAVEN_SHA256 = "4e313a4cd3a7ffa7ef270dd8f65a98cce9c6286c25f5898998feaed73f3ffe92"
CONTAINER_V01 = (
    CLI
    / "gha_container-based"
    / "v1.8.0"
    / "binary-linux-amd64-workflow_dispatch.intoto.build.slsa"
)
LEGACY = CLI / "gha_go" / "v1.2.2" / "binary-linux-amd64-workflow_dispatch.intoto.jsonl"
LEGACY_SHA256 = "3e74797065520c7d1129d91f5322917be3f0ab92e5b01c52b5cc2459fb73cb70"
SOURCE = "github.com/slsa-framework/example-package"


@pytest.fixture(scope="module")
def verifier() -> BundleVerifier:
    return BundleVerifier(default_roots())


def _load(path: Path) -> dict:
    return json.loads(path.read_text())


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        code = main(argv)
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_a_v02_bundle_with_an_intoto_entry_verifies_with_typed_identity(
    verifier: BundleVerifier,
) -> None:
    verified = verifier.verify(_load(MAVEN), "maven")
    identity = verified.identity
    assert identity.issuer == "https://token.actions.githubusercontent.com"
    assert identity.san is not None
    assert identity.san.endswith("delegator_lowperms-generic_slsa3.yml@refs/tags/v2.1.0")
    assert identity.source_repository_uri == "https://github.com/slsa-framework/example-package"
    assert identity.source_repository_ref == "refs/heads/main"
    assert identity.runner_environment == "github-hosted"
    assert identity.build_trigger == "workflow_dispatch"
    assert identity.build_signer_digest == "f7dd8c54c2067bafc12ca7a55595d5ee9b75204a"
    assert verified.log_proof is LogProof.INCLUSION_PROOF
    assert [t.source for t in verified.times] == [TimeSource.TRANSPARENCY_LOG]
    assert verified.payload_type == "application/vnd.in-toto+json"
    assert json.loads(verified.payload or b"")["predicateType"] == "https://slsa.dev/provenance/v1"


def test_a_v01_bundle_verifies(verifier: BundleVerifier) -> None:
    verified = verifier.verify(_load(CONTAINER_V01), "v0.1")
    assert verified.media_type.endswith("version=0.1")


def test_a_v03_npm_bundle_verifies(verifier: BundleVerifier) -> None:
    verified = verifier.verify(_load(GH / "sigstore-js-2.1.0-bundle.json"), "npm")
    assert verified.identity.source_repository_uri == "https://github.com/sigstore/sigstore-js"


def test_a_changed_payload_does_not_verify(verifier: BundleVerifier) -> None:
    document = _load(MAVEN)
    payload = json.loads(base64.b64decode(document["dsseEnvelope"]["payload"]))
    payload["subject"][0]["digest"]["sha256"] = "0" * 64
    document["dsseEnvelope"]["payload"] = base64.b64encode(json.dumps(payload).encode()).decode()
    with pytest.raises(VerificationError, match="did not verify"):
        verifier.verify(document, "tampered")


def test_an_intoto_entry_for_another_envelope_is_refused(verifier: BundleVerifier) -> None:
    document = _load(MAVEN)
    other = _load(CLI / "gha_maven" / "v2.1.0" / "binary-linux-amd64-push-v14.build.slsa")
    document["verificationMaterial"]["tlogEntries"] = other["verificationMaterial"]["tlogEntries"]
    with pytest.raises(VerificationError):
        verifier.verify(document, "swapped entry")


def test_a_root_without_the_ca_verifies_nothing() -> None:
    document = _load(MAVEN)
    root = default_roots()[0]
    data = json.loads(root.data)
    data["certificateAuthorities"] = data["certificateAuthorities"][:1]
    from assay.sigstore.roots import Root

    verifier = BundleVerifier([Root("old-ca-only", "test", json.dumps(data).encode())])
    with pytest.raises(VerificationError, match="old-ca-only"):
        verifier.verify(document, "maven")


def test_duplicate_keys_in_a_bundle_are_unusable_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = MAVEN.read_text()
    duplicated = text.replace('"mediaType":', '"mediaType": "x", "mediaType":', 1)
    path = tmp_path / "dup.build.slsa"
    path.write_text(duplicated)
    code, _, err = _run(
        [
            "verify-artifact",
            f"sha256:{MAVEN_SHA256}",
            "--provenance-path",
            str(path),
            "--source-uri",
            SOURCE,
        ],
        capsys,
    )
    assert code == 2
    assert "$.mediaType: duplicate key" in err


@settings(max_examples=25, deadline=None)
@given(depth=st.integers(min_value=65, max_value=5000))
def test_deep_nesting_is_a_clear_error(depth: int) -> None:
    from assay.sigstore import _json

    with pytest.raises(AttestationError, match="nesting"):
        _json.loads("[" * depth + "]" * depth, "deep.json")


def test_verify_artifact_prints_what_slsa_verifier_prints(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = _run(
        [
            "verify-artifact",
            f"sha256:{MAVEN_SHA256}",
            "--provenance-path",
            str(MAVEN),
            "--source-uri",
            SOURCE,
            "--print-provenance",
        ],
        capsys,
    )
    assert code == 0, err
    assert (
        'Verified build using builder "https://github.com/slsa-framework/slsa-github-generator/'
        in err
    )
    assert "at commit 4d329c75e7ec1725f7c9ce917a8799d408d06be3" in err
    assert err.rstrip().endswith("PASSED: SLSA verification passed")
    assert json.loads(out)["predicateType"] == "https://slsa.dev/provenance/v1"


def test_verify_artifact_json_report(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(
        [
            "verify-artifact",
            f"sha256:{MAVEN_SHA256}",
            "--provenance-path",
            str(MAVEN),
            "--source-uri",
            "github.com/slsa-framework/other",
            "--json",
        ],
        capsys,
    )
    report = json.loads(out)
    assert code == 1
    assert report["passed"] is False
    failed = [c["check"] for e in report["envelopes"] for c in e["checks"] if not c["passed"]]
    assert failed[0] == "certificate.sourceRepository"
    assert report["envelopes"][0]["signature"]["transparencyLog"]["checked"] is True


def test_a_legacy_envelope_needs_the_log_or_an_explicit_waiver(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = [
        "verify-artifact",
        f"sha256:{LEGACY_SHA256}",
        "--provenance-path",
        str(LEGACY),
        "--source-uri",
        SOURCE,
    ]
    code, _, err = _run(argv, capsys)
    assert code == 1
    assert "--insecure-ignore-tlog" in err
    code, out, err = _run([*argv, "--insecure-ignore-tlog", "--json"], capsys)
    assert code == 0, err
    report = json.loads(out)
    assert report["transparencyLogWaived"] is True
    signature = report["envelopes"][0]["signature"]
    assert signature["transparencyLog"] == {"proof": "waived", "checked": False, "logIndex": None}
    assert signature["verifiedTimes"][0]["source"] == "certificate-issuance"
    assert "no transparency-log entry was checked" in err


def test_a_legacy_envelope_signed_over_other_bytes_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    envelope = json.loads(LEGACY.read_text().splitlines()[0])
    envelope["payloadType"] = "application/vnd.in-toto.other+json"
    path = tmp_path / "changed.intoto.jsonl"
    path.write_text(json.dumps(envelope))
    code, _, err = _run(
        [
            "verify-artifact",
            f"sha256:{LEGACY_SHA256}",
            "--provenance-path",
            str(path),
            "--source-uri",
            SOURCE,
            "--insecure-ignore-tlog",
        ],
        capsys,
    )
    assert code == 1
    assert "signature does not verify" in err


@pytest.mark.parametrize(
    ("flag", "value"),
    [
        ("--source-uri", "gitlab.com/o/r"),
        ("--source-versioned-tag", "1.2"),
        ("--build-workflow-input", "novalue"),
    ],
)
def test_unusable_flags_exit_2(flag: str, value: str, capsys: pytest.CaptureFixture[str]) -> None:
    argv = [
        "verify-artifact",
        f"sha256:{MAVEN_SHA256}",
        "--provenance-path",
        str(MAVEN),
        "--source-uri",
        SOURCE,
    ]
    if flag == "--source-uri":
        argv[-1] = value
    else:
        argv += [flag, value]
    code, _, err = _run(argv, capsys)
    assert code == 2
    assert flag in err


def test_trust_update_from_a_file(tmp_path: Path) -> None:
    source = tmp_path / "root.json"
    source.write_bytes(default_roots()[0].data)
    target = update_root(source, "public-good", user_dir=tmp_path / "roots")
    assert target.read_bytes() == source.read_bytes()
    roots = {
        r.name: r.origin
        for r in __import__("assay.sigstore.roots", fromlist=["x"]).default_roots(
            tmp_path / "roots"
        )
    }
    assert roots == {"public-good": str(target), "github": "shipped"}
    bad = tmp_path / "bad.json"
    bad.write_text('{"mediaType": "something else"}')
    with pytest.raises(AttestationError, match="mediaType"):
        update_root(bad, "public-good", user_dir=tmp_path / "roots")
    with pytest.raises(AttestationError, match="mediaType"):
        read_root(bad)


def test_only_trusted_roots_replaces_the_shipped_ones(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = json.loads(default_roots()[0].data)
    data["certificateAuthorities"] = data["certificateAuthorities"][:1]
    root = tmp_path / "old.json"
    root.write_text(json.dumps(data))
    argv = [
        "verify-artifact",
        f"sha256:{MAVEN_SHA256}",
        "--provenance-path",
        str(MAVEN),
        "--source-uri",
        SOURCE,
        "--trusted-root",
        str(root),
    ]
    assert _run(argv, capsys)[0] == 0
    assert _run([*argv, "--only-trusted-roots"], capsys)[0] == 1


def test_verify_bundle_gh_flags(capsys: pytest.CaptureFixture[str]) -> None:
    artifact = GH / "custom-issuer-artifact"
    bundle = GH / "custom-issuer.sigstore.json"
    base = [
        "verify-bundle",
        str(artifact),
        "--bundle",
        str(bundle),
        "--owner",
        "too-legit",
        "--cert-oidc-issuer",
        "https://token.actions.githubusercontent.com/hammer-time",
    ]
    code, out, err = _run(base, capsys)
    assert code == 0, err
    assert "too-legit/attest" in out
    assert _run([*base, "--deny-self-hosted-runners"], capsys)[0] in (0, 1)
    assert _run([*base, "--source-ref", "refs/heads/nope"], capsys)[0] == 1
    assert _run([*base, "--predicate-type", "https://example.com/other"], capsys)[0] == 1
    assert _run([*base, "--cert-identity", "https://github.com/too-legit/other"], capsys)[0] == 1
    code, out, _ = _run([*base, "--json"], capsys)
    assert code == 0
    assert json.loads(out)["verified"] == 1


def _as_pep740(bundle: dict) -> dict:
    """The same certificate, log entries and envelope in PyPI's PEP 740 shape."""
    return {
        "version": 1,
        "verification_material": {
            "certificate": bundle["verificationMaterial"]["certificate"]["rawBytes"],
            "transparency_entries": bundle["verificationMaterial"]["tlogEntries"],
        },
        "envelope": {
            "statement": bundle["dsseEnvelope"]["payload"],
            "signature": bundle["dsseEnvelope"]["signatures"][0]["sig"],
        },
    }


SIGSTORE_JS_SHA512 = (
    "sha512:90f223f992e4c88dd068cd2a5fc57f9d2b30798343dd6e38f29c240e04ba090e"
    "f831f84490847c4e82b9232c78e8a258463b1e55c0f7469f730265008fa6633f"
)


@pytest.mark.parametrize("shape", ["attestation", "provenance", "npm"])
def test_pep740_and_npm_documents_are_read(
    shape: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bundle = _load(GH / "sigstore-js-2.1.0-bundle.json")
    document: dict
    if shape == "attestation":
        document = _as_pep740(bundle)
    elif shape == "provenance":
        document = {
            "version": 1,
            "attestation_bundles": [
                {"publisher": {"kind": "GitHub"}, "attestations": [_as_pep740(bundle)]}
            ],
        }
    else:
        document = {
            "attestations": [{"predicateType": "https://slsa.dev/provenance/v1", "bundle": bundle}]
        }
    path = tmp_path / "attestations.json"
    path.write_text(json.dumps(document))
    argv = ["verify-bundle", SIGSTORE_JS_SHA512, "--bundle", str(path), "--owner", "sigstore"]
    code, _, err = _run(argv, capsys)
    assert code == 0, err
    if shape != "npm":
        changed = json.loads(path.read_text())
        target = (
            changed
            if shape == "attestation"
            else changed["attestation_bundles"][0]["attestations"][0]
        )
        target["envelope"]["signature"] = base64.b64encode(
            b"\x30\x06\x02\x01\x01\x02\x01\x01"
        ).decode()
        path.write_text(json.dumps(changed))
        assert _run(argv, capsys)[0] == 1
