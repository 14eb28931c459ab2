"""Bundles `sigstore` refuses on reading and slsa-verifier / gh verify, verified here too.

- v0.1 bundles whose log entry carries only its signed promise (slsa-github-generator's
  container-based builder): verified by the promise, as slsa-verifier does.
- GitHub's own instance (private repositories): no log entry, RFC 3161 timestamps from
  GitHub's timestamp authority, a certificate from GitHub's Fulcio: verified with the
  shipped GitHub trusted root, as `gh attestation verify` does.
- No refusal of a malformed bundle speaks pydantic: each names the bundle, the JSON path
  and what was expected.
"""

from __future__ import annotations

import base64
import copy
import json
from pathlib import Path
from typing import Any

import pytest

from assay._cli import main
from assay.errors import AttestationError, VerificationError
from assay.sigstore import BundleVerifier, LogProof, TimeSource, default_roots
from assay.sigstore.roots import shipped_root

ASSETS = Path(__file__).resolve().parents[1] / "assets"
UNIT = ASSETS / "sigstore" / "slsa-verifier"
GH = ASSETS / "sigstore" / "github-cli"
GITHUB_BUNDLE = GH / "github_provenance_demo-0.0.12-py3-none-any-bundle.jsonl"
GITHUB_SHA256 = "ae57936def59bc4c75edd3a837d89bcefc6d3a5e31d55a6fa7a71624f92c3c3b"
CONTAINER_V01 = (
    ASSETS
    / "verify/slsa-verifier/cli/gha_container-based/v1.8.0"
    / "binary-linux-amd64-workflow_dispatch.intoto.build.slsa"
)
THIRD_PARTY_WORDS = ("validation error", "pydantic", "Field required", "Input should", "[type=")


@pytest.fixture(scope="module")
def verifier() -> BundleVerifier:
    return BundleVerifier(default_roots())


def _load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        code = main(argv)
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# v0.1: the promise alone


def test_a_real_promise_only_bundle_verifies_by_its_promise(verifier: BundleVerifier) -> None:
    document = _load(UNIT / "valid.intoto.sigstore")
    assert "inclusionProof" not in document["verificationMaterial"]["tlogEntries"][0]
    verified = verifier.verify(document, "valid.intoto.sigstore")
    assert verified.log_proof is LogProof.INCLUSION_PROMISE
    assert [t.source for t in verified.times] == [TimeSource.TRANSPARENCY_LOG]
    assert verified.identity.san is not None
    assert "builder_docker-based_slsa3.yml" in verified.identity.san
    assert verified.to_dict()["transparencyLog"]["proof"] == "inclusion-promise"


def test_a_promise_of_another_entry_is_refused(verifier: BundleVerifier) -> None:
    """slsa-verifier's `mismatch rekor entry` case (ErrorMismatchSignature)."""
    with pytest.raises(VerificationError, match="did not verify"):
        verifier.verify(_load(UNIT / "mismatch-tlog.intoto.sigstore"), "mismatch-tlog")


def test_an_altered_promise_is_refused(verifier: BundleVerifier) -> None:
    document = _load(UNIT / "valid.intoto.sigstore")
    promise = document["verificationMaterial"]["tlogEntries"][0]["inclusionPromise"]
    signature = bytearray(base64.b64decode(promise["signedEntryTimestamp"]))
    signature[-3] ^= 1
    promise["signedEntryTimestamp"] = base64.b64encode(bytes(signature)).decode()
    with pytest.raises(VerificationError, match="inclusion promise"):
        verifier.verify(document, "altered")


def test_an_altered_envelope_under_a_promise_is_refused(verifier: BundleVerifier) -> None:
    with pytest.raises(VerificationError, match="did not verify"):
        verifier.verify(_load(UNIT / "invalid-dsse-sig.intoto.sigstore"), "invalid-dsse-sig")


def test_a_v01_bundle_whose_proof_is_removed_verifies_by_its_promise(
    verifier: BundleVerifier,
) -> None:
    document = _load(CONTAINER_V01)
    del document["verificationMaterial"]["tlogEntries"][0]["inclusionProof"]
    verified = verifier.verify(document, "promise-only")
    assert verified.log_proof is LogProof.INCLUSION_PROMISE


def test_a_v01_bundle_without_its_promise_is_refused_with_the_path(
    verifier: BundleVerifier,
) -> None:
    document = _load(UNIT / "valid.intoto.sigstore")
    del document["verificationMaterial"]["tlogEntries"][0]["inclusionPromise"]
    with pytest.raises(AttestationError) as refused:
        verifier.verify(document, "no-promise.json")
    assert str(refused.value).startswith(
        "no-promise.json: $.verificationMaterial.tlogEntries[0].inclusionPromise: expected"
    )


def test_a_v03_bundle_still_needs_its_inclusion_proof(verifier: BundleVerifier) -> None:
    document = _load(GH / "sigstore-js-2.1.0-bundle.json")
    del document["verificationMaterial"]["tlogEntries"][0]["inclusionProof"]
    with pytest.raises(AttestationError) as refused:
        verifier.verify(document, "v03.json")
    assert "v03.json: $.verificationMaterial.tlogEntries[0].inclusionProof.checkpoint" in str(
        refused.value
    )


def test_verify_artifact_accepts_a_promise_only_bundle(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Through the command line, as slsa-verifier's container-based cases run."""
    document = _load(CONTAINER_V01)
    del document["verificationMaterial"]["tlogEntries"][0]["inclusionProof"]
    provenance = tmp_path / "promise-only.build.slsa"
    provenance.write_text(json.dumps(document))
    statement = json.loads(base64.b64decode(document["dsseEnvelope"]["payload"]))
    digest = statement["subject"][0]["digest"]["sha256"]
    code, _, err = _run(
        [
            "verify-artifact",
            f"sha256:{digest}",
            "--provenance-path",
            str(provenance),
            "--source-uri",
            "github.com/slsa-framework/example-package",
            "--json",
        ],
        capsys,
    )
    assert code == 0, err


# GitHub's own instance


def test_the_shipped_github_root_is_githubs_instance() -> None:
    root = json.loads(shipped_root("github").data)
    assert {ca["uri"] for ca in root["certificateAuthorities"]} == {"fulcio.githubapp.com"}
    assert {tsa["uri"] for tsa in root["timestampAuthorities"]} == {"timestamp.githubapp.com"}
    assert "tlogs" not in root


def test_a_github_instance_bundle_verifies_with_the_github_root(verifier: BundleVerifier) -> None:
    verified = verifier.verify(_load(GITHUB_BUNDLE), "demo")
    assert verified.trusted_root == "github"
    assert verified.log_proof is LogProof.NO_LOG
    assert [t.source for t in verified.times] == [TimeSource.TIMESTAMP_AUTHORITY]
    assert verified.identity.source_repository_uri == "https://github.com/actions/attest-demo"
    assert verified.tlog_checked  # nothing was waived
    assert verified.to_dict()["transparencyLog"] == {
        "proof": "no-log",
        "checked": False,
        "logIndex": None,
    }


def test_a_github_instance_bundle_does_not_verify_with_the_public_good_root() -> None:
    public_good = BundleVerifier([r for r in default_roots() if r.name == "public-good"])
    with pytest.raises(VerificationError) as refused:
        public_good.verify(_load(GITHUB_BUNDLE), "demo")
    assert "no transparency-log entry" in str(refused.value)


def test_a_public_good_bundle_stripped_of_its_entry_is_refused(verifier: BundleVerifier) -> None:
    """A log-keeping instance's bundle never passes without its entry, even with the
    timestamps of another bundle."""
    document = _load(GH / "sigstore-js-2.1.0-bundle.json")
    github = _load(GITHUB_BUNDLE)
    material = document["verificationMaterial"]
    material["tlogEntries"] = []
    material["timestampVerificationData"] = github["verificationMaterial"][
        "timestampVerificationData"
    ]
    with pytest.raises(VerificationError) as refused:
        verifier.verify(document, "stripped")
    assert "public-good: the bundle has no transparency-log entry" in str(refused.value)


def test_a_github_bundle_without_timestamps_is_refused_with_the_path(
    verifier: BundleVerifier,
) -> None:
    document = _load(GITHUB_BUNDLE)
    del document["verificationMaterial"]["timestampVerificationData"]
    with pytest.raises(AttestationError) as refused:
        verifier.verify(document, "demo.json")
    assert "demo.json: $.verificationMaterial.tlogEntries: expected exactly one" in str(
        refused.value
    )


def test_a_github_bundle_with_an_altered_timestamp_is_refused(verifier: BundleVerifier) -> None:
    document = _load(GITHUB_BUNDLE)
    stamp = document["verificationMaterial"]["timestampVerificationData"]["rfc3161Timestamps"][0]
    raw = bytearray(base64.b64decode(stamp["signedTimestamp"]))
    raw[-5] ^= 1
    stamp["signedTimestamp"] = base64.b64encode(bytes(raw)).decode()
    with pytest.raises((VerificationError, AttestationError)):
        verifier.verify(document, "altered")


def test_verify_bundle_passes_a_github_instance_attestation(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = _run(
        [
            "verify-bundle",
            f"sha256:{GITHUB_SHA256}",
            "--bundle",
            str(GITHUB_BUNDLE),
            "--repo",
            "actions/attest-demo",
        ],
        capsys,
    )
    assert code == 0, err
    assert "https://github.com/actions/attest-demo" in out


# --signer-workflow with its host, as gh accepts it


@pytest.mark.parametrize(
    "workflow",
    [
        "actions/attest-demo/.github/workflows/build-python.yml",
        "github.com/actions/attest-demo/.github/workflows/build-python.yml",
        "https://github.com/actions/attest-demo/.github/workflows/build-python.yml",
    ],
)
def test_signer_workflow_with_or_without_its_host(
    workflow: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["verify-bundle", f"sha256:{GITHUB_SHA256}", "--bundle", str(GITHUB_BUNDLE)]
    code, _, err = _run([*argv, "--owner", "actions", "--signer-workflow", workflow], capsys)
    assert code == 0, err


def test_signer_workflow_of_another_repository_fails(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["verify-bundle", f"sha256:{GITHUB_SHA256}", "--bundle", str(GITHUB_BUNDLE)]
    workflow = "github.com/actions/other/.github/workflows/build-python.yml"
    code, _, err = _run([*argv, "--owner", "actions", "--signer-workflow", workflow], capsys)
    assert code == 1
    assert "certificate.san" in err


# Malformed bundles: assay's words, the JSON path


def _mutations() -> list[tuple[str, Any]]:
    base = _load(GH / "sigstore-js-2.1.0-bundle.json")

    def edit(change: Any) -> dict[str, Any]:
        document = copy.deepcopy(base)
        change(document)
        return document

    return [
        (
            "$.verificationMaterial",
            edit(lambda d: d.pop("verificationMaterial")),
        ),
        (
            "$.verificationMaterial",  # the models' rule: a certificate, chain or key
            edit(lambda d: d["verificationMaterial"].pop("certificate")),
        ),
        (
            "$.verificationMaterial.tlogEntries[0].logIndex",
            edit(lambda d: d["verificationMaterial"]["tlogEntries"][0].update(logIndex=[])),
        ),
        (
            "$.dsseEnvelope.signatures[0].sig",
            edit(lambda d: d["dsseEnvelope"]["signatures"][0].update(sig=7)),
        ),
        (
            "$.verificationMaterial.certificate.rawBytes",
            edit(lambda d: d["verificationMaterial"]["certificate"].update(rawBytes="AAAA")),
        ),
    ]


@pytest.mark.parametrize(("path", "document"), _mutations())
def test_a_malformed_bundle_is_named_by_its_json_path(
    path: str, document: dict[str, Any], verifier: BundleVerifier
) -> None:
    with pytest.raises(AttestationError) as refused:
        verifier.verify(document, "b.json")
    message = str(refused.value)
    assert message.startswith(f"b.json: {path}: expected"), message
    assert not any(word in message for word in THIRD_PARTY_WORDS), message


@pytest.mark.parametrize(
    "name",
    [
        "github_provenance_demo-0.0.12-py3-none-any-bundle-missing-cert.jsonl",
        "github_provenance_demo-0.0.12-py3-none-any-bundle-missing-verification-material.jsonl",
    ],
)
def test_gh_malformed_bundles_exit_2_in_assays_words(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["verify-bundle", f"sha256:{GITHUB_SHA256}", "--bundle", str(GH / name)]
    code, _, err = _run([*argv, "--owner", "actions"], capsys)
    assert code == 2
    assert f"{GH / name}: $.verificationMaterial" in err
    assert not any(word in err for word in THIRD_PARTY_WORDS), err


def test_a_malformed_trusted_root_is_named_by_its_json_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = json.loads(shipped_root("public-good").data)
    root["tlogs"][0]["publicKey"]["rawBytes"] = 5
    path = tmp_path / "root.json"
    path.write_text(json.dumps(root))
    code, _, err = _run(["trust", "update", "--from", str(path)], capsys)
    assert code == 2
    assert f"{path}: $.tlogs[0].publicKey.rawBytes: expected base64 data, found 5" in err
    assert not any(word in err for word in THIRD_PARTY_WORDS), err


RELEASE = ASSETS / "sigstore" / "github-release" / "checksums-gh-download.jsonl"


def test_githubs_2026_release_attestation_verifies_with_the_newest_generation(
    verifier: BundleVerifier,
) -> None:
    """cli/cli v2.96.0's release attestation (July 2026): the shipped root's last CA and
    TSA generations, the time from GitHub's timestamp authority."""
    verified = verifier.verify(json.loads(RELEASE.read_text()), "release")
    assert verified.trusted_root == "github"
    assert verified.log_proof is LogProof.NO_LOG
    assert verified.identity.san == "https://dotcom.releases.github.com"
    assert [t.time.isoformat() for t in verified.times] == ["2026-07-02T21:31:05+00:00"]
    statement = json.loads(verified.payload or b"")
    assert statement["predicateType"] == "https://in-toto.io/attestation/release/v0.2"


def test_an_altered_release_statement_does_not_verify(verifier: BundleVerifier) -> None:
    document = json.loads(RELEASE.read_text())
    statement = json.loads(base64.b64decode(document["dsseEnvelope"]["payload"]))
    statement["predicate"]["tag"] = "v2.96.1"
    document["dsseEnvelope"]["payload"] = base64.b64encode(json.dumps(statement).encode()).decode()
    with pytest.raises(VerificationError):
        verifier.verify(document, "release")
