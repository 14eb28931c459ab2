"""Sigstore bundles signed with a key: npm's publish attestation, through `assay verify`.

The registry's attestations document of `sigstore@2.3.1` holds two bundles: npm's publish
attestation, signed with the registry's key (verification material `publicKey`), and the
provenance, signed through Fulcio. A policy signer given by the registry's key vouches
for the first only when its DSSE signature verifies with that key AND its
transparency-log entry verifies offline (inclusion proof, signed checkpoint and signed
entry timestamp with a Rekor key of a trusted root) and logs that signature by that key.
"""

from __future__ import annotations

import base64
import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from assay.keys import KeyType, generate_private_key, load_public_key
from assay.policy import load_policy
from assay.verify import Artifact, Verifier, read_attestations

ROOT = Path(__file__).resolve().parents[2]
ASSETS = ROOT / "tests" / "assets"
NPM_DOCUMENT = ASSETS / "verify" / "npm" / "provenance-npm-test-cli-v1-prega.tgz.json"
NPM_INVALID_PUBLISH = (
    ASSETS
    / "slsa"
    / "slsa-verifier"
    / "cli"
    / "npm"
    / "gha"
    / "provenance-npm-test-cli-v1-prega-invalidsigpub.tgz.json"
)
NPM_KEYS = ASSETS / "verify" / "slsa-verifier" / "keys" / "npm" / "registry.npmjs.org-keys.json"
TARBALL = (
    "sha512:f06fbf5c353cc0db093904b9cac0d53b412d83dff6b80e6047d9786708a38e5c3"
    "105cad4e913dfc22dbe8c999b3fe029d47969fe75406843b8163db6fd22f681"
)
PUBLISH = f"{NPM_DOCUMENT}#1"
PROVENANCE = f"{NPM_DOCUMENT}#2"


def _registry_pem() -> bytes:
    """npm's attestation key, from the registry's keys document (DER SPKI in base64)."""
    keys = json.loads(NPM_KEYS.read_text())["keys"]
    (entry,) = [k for k in keys if k["keyUsage"] == "npm:attestations"]
    der = base64.b64encode(base64.b64decode(entry["publicKey"]["rawBytes"])).decode()
    lines = [der[i : i + 64] for i in range(0, len(der), 64)]
    return (
        "-----BEGIN PUBLIC KEY-----\n" + "\n".join(lines) + "\n-----END PUBLIC KEY-----\n"
    ).encode()


REGISTRY_FINGERPRINT = load_public_key(_registry_pem()).fingerprint()


def _policy(tmp_path: Path, keys: list[bytes], *, threshold: int = 1) -> Path:
    """The shipped npm provenance policy, plus a signer given by `keys`."""
    data = yaml.safe_load((ROOT / "policies" / "npm-provenance.yaml").read_text())
    paths = []
    for index, pem in enumerate(keys):
        path = tmp_path / f"key{index}.pub"
        path.write_bytes(pem)
        paths.append(path.name)
    data["signers"].append(
        {
            "name": "npm-registry",
            "publicKeys": paths,
            "threshold": threshold,
            "builders": [{"id": "https://github.com/actions/runner/github-hosted", "pin": "none"}],
        }
    )
    policy = tmp_path / "policy.yaml"
    policy.write_text(yaml.safe_dump(data))
    return policy


def _verify(
    cli: Callable[..., int],
    capsys: pytest.CaptureFixture[str],
    policy: Path,
    attestation: Path = NPM_DOCUMENT,
) -> tuple[int, dict[str, dict[str, Any]]]:
    capsys.readouterr()
    code = cli(
        "verify", TARBALL, "--attestation", str(attestation), "--policy", str(policy), "--json"
    )
    report = json.loads(capsys.readouterr().out)
    return code, {a["attestation"]: a for a in report["attestations"]}


def _check(report: dict[str, Any], name: str) -> dict[str, Any]:
    (check,) = [c for c in report["checks"] if c["check"] == name]
    return check


def test_the_publish_attestation_is_signed_by_the_registry_key_with_its_log_entry(
    cli: Callable[..., int], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, reports = _verify(cli, capsys, _policy(tmp_path, [_registry_pem()]))
    assert code == 0  # the provenance passes the policy; the publish attestation is no provenance
    publish = reports[PUBLISH]
    assert publish["signedBy"] == ["npm-registry"]
    assert _check(publish, "signature")["passed"]
    log = _check(publish, "transparencyLog")
    assert log["passed"]
    assert log["found"] == "inclusion-proof, log index 94408157, public-good"
    assert publish["keySignedBundle"]["loggedKeys"] == [REGISTRY_FINGERPRINT]
    assert publish["keySignedBundle"]["transparencyLog"]["integratedTime"] == "2024-05-16T17:12:06Z"
    assert _check(publish, "predicateType")["found"] == (
        "https://github.com/npm/attestation/tree/main/specs/publish/v0.1"
    )
    assert reports[PROVENANCE]["signedBy"] == ["github-actions-oidc"]
    assert reports[PROVENANCE]["passed"]


def test_another_key_does_not_sign_the_publish_attestation(
    cli: Callable[..., int], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    other = generate_private_key(KeyType.ECDSA_P256).public_key().to_pem()
    _, reports = _verify(cli, capsys, _policy(tmp_path, [other]))
    publish = reports[PUBLISH]
    assert publish["signedBy"] == []
    signature = _check(publish, "signature")
    assert not signature["passed"]
    assert f"it records key(s) {REGISTRY_FINGERPRINT}" in signature["detail"]
    assert publish["keySignedBundle"]["loggedKeys"] == [REGISTRY_FINGERPRINT]


def test_a_key_only_policy_refuses_the_document(
    cli: Callable[..., int], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Without the identity signer nothing is provenance signed by a trusted signer."""
    policy = _policy(tmp_path, [_registry_pem()])
    data = yaml.safe_load(policy.read_text())
    data["signers"] = data["signers"][1:]
    policy.write_text(yaml.safe_dump(data))
    code, reports = _verify(cli, capsys, policy)
    assert code == 1
    assert reports[PUBLISH]["signedBy"] == ["npm-registry"]
    assert reports[PROVENANCE]["signedBy"] == []


def test_a_publish_attestation_altered_upstream_is_refused(
    cli: Callable[..., int], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    _, reports = _verify(
        cli, capsys, _policy(tmp_path, [_registry_pem()]), attestation=NPM_INVALID_PUBLISH
    )
    publish = reports[f"{NPM_INVALID_PUBLISH}#1"]
    assert publish["signedBy"] == []
    detail = _check(publish, "signature")["detail"]
    assert "transparency-log entry did not verify" in detail
    assert "logs another payload" in detail
    assert publish["keySignedBundle"]["verified"] is False


def _altered(tmp_path: Path, alter: Callable[[dict[str, Any]], None]) -> Path:
    document = json.loads(NPM_DOCUMENT.read_text())
    alter(document["attestations"][0]["bundle"])
    path = tmp_path / "altered.json"
    path.write_text(json.dumps(document))
    return path


def _entry(bundle: dict[str, Any]) -> dict[str, Any]:
    entry: dict[str, Any] = bundle["verificationMaterial"]["tlogEntries"][0]
    return entry


def _flip(text: str) -> str:
    raw = bytearray(base64.b64decode(text))
    raw[len(raw) // 2] ^= 1
    return base64.b64encode(bytes(raw)).decode()


def _other_entry(bundle: dict[str, Any]) -> None:
    provenance = json.loads(NPM_DOCUMENT.read_text())["attestations"][1]["bundle"]
    bundle["verificationMaterial"]["tlogEntries"] = provenance["verificationMaterial"][
        "tlogEntries"
    ]


ALTERATIONS: dict[str, tuple[Callable[[dict[str, Any]], None], str]] = {
    "inclusion-proof-hash": (
        lambda b: _entry(b)["inclusionProof"]["hashes"].__setitem__(
            0, _flip(_entry(b)["inclusionProof"]["hashes"][0])
        ),
        "did not verify",
    ),
    "checkpoint-root": (
        lambda b: _entry(b)["inclusionProof"].__setitem__(
            "rootHash", _flip(_entry(b)["inclusionProof"]["rootHash"])
        ),
        "did not verify",
    ),
    "signed-entry-timestamp": (
        lambda b: _entry(b)["inclusionPromise"].__setitem__(
            "signedEntryTimestamp", _flip(_entry(b)["inclusionPromise"]["signedEntryTimestamp"])
        ),
        "did not verify",
    ),
    "integrated-time": (
        lambda b: _entry(b).__setitem__(
            "integratedTime", str(int(_entry(b)["integratedTime"]) + 1)
        ),
        "did not verify",
    ),
    "the-provenance-entry": (_other_entry, "logs another payload"),
    "no-inclusion-proof": (
        lambda b: _entry(b).pop("inclusionProof"),
        "inclusion",
    ),
}


@pytest.mark.parametrize("alteration", sorted(ALTERATIONS))
def test_a_signature_that_verifies_is_refused_when_its_log_entry_does_not(
    cli: Callable[..., int], capsys: pytest.CaptureFixture[str], tmp_path: Path, alteration: str
) -> None:
    alter, reason = ALTERATIONS[alteration]
    path = _altered(tmp_path, alter)
    _, reports = _verify(cli, capsys, _policy(tmp_path, [_registry_pem()]), attestation=path)
    publish = reports[f"{path}#1"]
    assert publish["signedBy"] == []
    detail = _check(publish, "signature")["detail"]
    assert "transparency-log entry did not verify" in detail
    assert reason in detail


def test_the_same_key_twice_counts_once(
    cli: Callable[..., int], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Threshold 2 with the registry key given twice (PEM, and the same key re-encoded):
    one fingerprint, one signer key: not signed."""
    pem = _registry_pem()
    again = load_public_key(pem).to_pem()
    _, reports = _verify(cli, capsys, _policy(tmp_path, [pem, again], threshold=2))
    assert reports[PUBLISH]["signedBy"] == []
    _, reports = _verify(cli, capsys, _policy(tmp_path, [pem], threshold=1))
    assert reports[PUBLISH]["signedBy"] == ["npm-registry"]


def test_a_logged_record_set_by_a_caller_is_replaced(tmp_path: Path) -> None:
    """The library: `Attestation.logged` comes from the Verifier, never from its caller.
    Here the entry does not verify (a proof hash altered), and a caller claims it did."""
    from dataclasses import replace

    from assay.sigstore import LogProof
    from assay.sigstore.keyed import LoggedSignatures

    alter, _ = ALTERATIONS["inclusion-proof-hash"]
    path = _altered(tmp_path, alter)
    policy = load_policy(_policy(tmp_path, [_registry_pem()]))
    publish = read_attestations(path.read_bytes(), "npm.json")[0]
    forged = LoggedSignatures(
        where="forged",
        media_type="forged",
        payload_sha256="0" * 64,
        signatures=frozenset((s.sig, REGISTRY_FINGERPRINT) for s in publish.envelope.signatures),
        log_proof=LogProof.INCLUSION_PROOF,
        log_index=1,
        integrated_time=None,
        trusted_root="forged",
    )
    artifact = Artifact(TARBALL, {"sha512": TARBALL.split(":")[1]})
    verifier = Verifier(policy=policy)
    (result,) = verifier.verify([artifact], [replace(publish, logged=forged)]).attestations
    assert result.signed_by == []
    assert result.log is not None
    assert not result.log.verified
    intact = read_attestations(NPM_DOCUMENT.read_bytes(), "npm.json")[0]
    (result,) = verifier.verify([artifact], [intact]).attestations
    assert result.signed_by == ["npm-registry"]


def test_the_registry_key_does_not_sign_an_envelope_copied_out_of_its_bundle(
    cli: Callable[..., int], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The bare envelope is an ordinary DSSE envelope: the key's signature is checked as
    for any key signer (there is no log entry to check)."""
    bundle = json.loads(NPM_DOCUMENT.read_text())["attestations"][0]["bundle"]
    envelope = tmp_path / "publish.dsse.json"
    envelope.write_text(json.dumps(copy.deepcopy(bundle["dsseEnvelope"])))
    _, reports = _verify(cli, capsys, _policy(tmp_path, [_registry_pem()]), attestation=envelope)
    assert reports[str(envelope)]["signedBy"] == ["npm-registry"]
    assert "keySignedBundle" not in reports[str(envelope)]
