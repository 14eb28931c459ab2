"""Trusted-root CAs, Rekor and CT keys verify only signatures made inside their `validFor`.

Each test edits the `validFor` window of one entry of the shipped public-good trusted
root around the verified signing time of slsa-verifier's real bundles and legacy
envelopes (tests/assets/verify/slsa-verifier): inside the window the bundle verifies;
a window that ended before (or began after) the signing time refuses it, as sigstore-go
refuses it.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509

from assay._cli import main
from assay.errors import VerificationError
from assay.sigstore import BundleVerifier
from assay.sigstore.legacy import verify_legacy
from assay.sigstore.roots import Root, shipped_root
from assay.sigstore.verifier import LogProof

CLI = Path(__file__).resolve().parents[1] / "assets" / "verify" / "slsa-verifier" / "cli"
MAVEN = CLI / "gha_maven" / "v2.1.0" / "binary-linux-amd64-workflow_dispatch.build.slsa"
MAVEN_SHA256 = "4e313a4cd3a7ffa7ef270dd8f65a98cce9c6286c25f5898998feaed73f3ffe92"
LEGACY = CLI / "gha_go" / "v1.2.2" / "binary-linux-amd64-workflow_dispatch.intoto.jsonl"
SOURCE = "github.com/slsa-framework/example-package"
DAY = timedelta(days=1)


def _bundle() -> dict[str, Any]:
    return json.loads(MAVEN.read_text())


def _leaf(document: dict[str, Any]) -> x509.Certificate:
    material = document["verificationMaterial"]
    chain = material.get("x509CertificateChain", {}).get("certificates") or [
        material["certificate"]
    ]
    return x509.load_der_x509_certificate(base64.b64decode(chain[0]["rawBytes"]))


def _signed_at(document: dict[str, Any]) -> datetime:
    return datetime.fromtimestamp(
        int(document["verificationMaterial"]["tlogEntries"][0]["integratedTime"]), tz=UTC
    )


def _stamp(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _root(edit: Callable[[dict[str, Any]], None]) -> Root:
    data = json.loads(shipped_root("public-good").data)
    edit(data)
    return Root("edited", "test", json.dumps(data).encode())


def _issuing_ca(data: dict[str, Any], leaf: x509.Certificate) -> dict[str, Any]:
    for ca in data["certificateAuthorities"]:
        first = x509.load_der_x509_certificate(
            base64.b64decode(ca["certChain"]["certificates"][0]["rawBytes"])
        )
        if first.subject == leaf.issuer:
            return ca  # type: ignore[no-any-return]
    raise AssertionError("no CA of the root issued the leaf")


def _ct_log(data: dict[str, Any], leaf: x509.Certificate) -> dict[str, Any]:
    scts = leaf.extensions.get_extension_for_class(
        x509.PrecertificateSignedCertificateTimestamps
    ).value
    ids = {base64.b64encode(s.log_id).decode() for s in scts}
    for log in data["ctlogs"]:
        if log["logId"]["keyId"] in ids:
            return log  # type: ignore[no-any-return]
    raise AssertionError("no CT log of the root signed the SCT")


def _rekor(data: dict[str, Any], document: dict[str, Any]) -> dict[str, Any]:
    key_id = document["verificationMaterial"]["tlogEntries"][0]["logId"]["keyId"]
    for log in data["tlogs"]:
        if log["logId"]["keyId"] == key_id:
            return log  # type: ignore[no-any-return]
    raise AssertionError("no Rekor key of the root signed the entry")


def _window(entry: dict[str, Any], start: datetime | None, end: datetime | None) -> None:
    target = entry.get("publicKey", entry)
    target["validFor"] = {
        **({"start": _stamp(start)} if start else {"start": "2021-01-01T00:00:00Z"}),
        **({"end": _stamp(end)} if end else {}),
    }


CASES = {
    "ca": _issuing_ca,
    "ct-log": _ct_log,
    "rekor": None,  # the Rekor key is found from the bundle's entry
}


def _entry_of(kind: str, data: dict[str, Any], document: dict[str, Any]) -> dict[str, Any]:
    if kind == "rekor":
        return _rekor(data, document)
    return CASES[kind](data, _leaf(document))  # type: ignore[misc]


def _when(kind: str, document: dict[str, Any]) -> datetime:
    if kind == "ct-log":
        leaf = _leaf(document)
        sct = leaf.extensions.get_extension_for_class(
            x509.PrecertificateSignedCertificateTimestamps
        ).value[0]
        return sct.timestamp.replace(tzinfo=UTC)
    return _signed_at(document)


@pytest.mark.parametrize("kind", sorted(CASES))
def test_a_window_around_the_signing_time_verifies(kind: str) -> None:
    document = _bundle()
    when = _when(kind, document)
    root = _root(lambda d: _window(_entry_of(kind, d, document), when - DAY, when + DAY))
    verified = BundleVerifier([root]).verify(document, "maven")
    assert verified.trusted_root == "edited"


@pytest.mark.parametrize("kind", sorted(CASES))
@pytest.mark.parametrize("side", ["ended-before", "began-after"])
def test_a_window_that_misses_the_signing_time_refuses(kind: str, side: str) -> None:
    document = _bundle()
    when = _when(kind, document)
    start, end = (when - 2 * DAY, when - DAY) if side == "ended-before" else (when + DAY, None)
    root = _root(lambda d: _window(_entry_of(kind, d, document), start, end))
    with pytest.raises(VerificationError, match="was not valid") as caught:
        BundleVerifier([root]).verify(document, "maven")
    assert {"ca": "Fulcio CA", "ct-log": "CT log key", "rekor": "Rekor key"}[kind] in str(
        caught.value
    )


def test_verify_artifact_refuses_a_bundle_signed_after_its_ca_expired(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    document = _bundle()
    when = _signed_at(document)
    root = _root(lambda d: _window(_issuing_ca(d, _leaf(document)), when - 9 * DAY, when - DAY))
    path = tmp_path / "trusted_root.json"
    path.write_bytes(root.data)
    argv = [
        "verify-artifact",
        f"sha256:{MAVEN_SHA256}",
        "--provenance-path",
        str(MAVEN),
        "--source-uri",
        SOURCE,
        "--trusted-root",
        str(path),
        "--only-trusted-roots",
    ]
    try:
        code = main(argv)
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    err = capsys.readouterr().err
    assert code == 1, err
    assert "was not valid at the signing time" in err


def test_a_legacy_envelope_needs_its_ca_valid_when_the_certificate_was_issued() -> None:
    document = json.loads(LEGACY.read_text().splitlines()[0])
    pem = document["signatures"][0]["cert"].encode()
    leaf = x509.load_pem_x509_certificate(pem)
    issued = leaf.not_valid_before_utc
    good = _root(lambda d: _window(_issuing_ca(d, leaf), issued - DAY, issued + DAY))
    verify_legacy(document, "legacy", [good], log_proof=LogProof.WAIVED)
    expired = _root(lambda d: _window(_issuing_ca(d, leaf), issued - 9 * DAY, issued - DAY))
    with pytest.raises(VerificationError, match="was not valid at the signing time"):
        verify_legacy(document, "legacy", [expired], log_proof=LogProof.WAIVED)
    ct_expired = _root(lambda d: _window(_ct_log(d, leaf), issued - 9 * DAY, issued - DAY))
    with pytest.raises(VerificationError, match="CT log key"):
        verify_legacy(document, "legacy", [ct_expired], log_proof=LogProof.WAIVED)


def test_an_inclusion_proof_tree_size_must_be_its_checkpoints() -> None:
    document = _bundle()
    proof = document["verificationMaterial"]["tlogEntries"][0]["inclusionProof"]
    proof["treeSize"] = str(int(proof["treeSize"]) + 1)
    root = shipped_root("public-good")
    with pytest.raises(VerificationError, match="treeSize 52399914 is not its signed checkpoint"):
        BundleVerifier([root]).verify(document, "maven")


NPM_DOCUMENT = (
    Path(__file__).resolve().parents[1]
    / "assets"
    / "verify"
    / "npm"
    / "provenance-npm-test-cli-v1-prega.tgz.json"
)


def test_a_key_signed_bundle_needs_its_rekor_key_valid_at_the_integrated_time() -> None:
    from assay.sigstore.keyed import verify_logged_envelope

    bundle = json.loads(NPM_DOCUMENT.read_text())["attestations"][0]["bundle"]
    when = _signed_at(bundle)
    good = _root(lambda d: _window(_rekor(d, bundle), when - DAY, when + DAY))
    assert verify_logged_envelope(bundle, "npm", BundleVerifier([good])).trusted_root == "edited"
    expired = _root(lambda d: _window(_rekor(d, bundle), when - 9 * DAY, when - DAY))
    with pytest.raises(VerificationError, match=r"Rekor key .* was not valid"):
        verify_logged_envelope(bundle, "npm", BundleVerifier([expired]))
