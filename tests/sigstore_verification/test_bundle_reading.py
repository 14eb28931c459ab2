"""How `BundleVerifier` reads a bundle: the parsed document feeds `sigstore`'s models, the
certificate's identity is read in one pass, the trusted root's keys are parsed once.

Each shortcut is held here to the slower reading it replaces. Where `sigstore` refuses a
bundle, assay refuses it too, in its own words (the JSON path and what was expected),
except the two bundles it reads on purpose: a v0.1 entry with only its promise, and a
bundle without log entries whose time comes from RFC 3161 timestamps.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sigstore._internal.trust import KeyringPurpose
from sigstore.models import Bundle

from assay.errors import AttestationError
from assay.sigstore import BundleVerifier, default_roots
from assay.sigstore.identity import CertificateIdentity, identity_of
from assay.sigstore.verifier import _sigstore_bundle

ASSETS = Path(__file__).resolve().parents[1] / "assets"
GH = ASSETS / "sigstore" / "github-cli"


def _within(value: Any) -> list[dict[str, Any]]:
    if isinstance(value, dict):
        if str(value.get("mediaType", "")).startswith("application/vnd.dev.sigstore.bundle"):
            return [value]
        return [found for child in value.values() for found in _within(child)]
    if isinstance(value, list):
        return [found for child in value for found in _within(child)]
    return []


def _bundles() -> list[tuple[str, dict[str, Any]]]:
    """Every Sigstore bundle among the test assets (in a document, JSON lines, or nested
    as in npm's attestations document)."""
    found: list[tuple[str, dict[str, Any]]] = []
    for path in sorted(ASSETS.rglob("*")):
        if not path.is_file() or path.stat().st_size > 2_000_000:
            continue
        text = path.read_text(errors="replace")
        if "application/vnd.dev.sigstore.bundle" not in text:
            continue
        try:
            documents = [json.loads(text)]
        except ValueError:
            documents = []
            for line in text.splitlines():
                try:
                    documents.append(json.loads(line))
                except ValueError:
                    continue
        for number, bundle in enumerate(b for d in documents for b in _within(d)):
            found.append((f"{path.relative_to(ASSETS)}#{number}", bundle))
    return found


BUNDLES = _bundles()


def _outcome(read: Any) -> tuple[str, Any]:
    try:
        bundle = read()
    except Exception as error:
        return "error", (type(error).__name__, str(error))
    return "bundle", bundle._inner


THIRD_PARTY_WORDS = ("validation error", "pydantic", "Field required", "Input should", "[type=")


def _read_by_assay(document: dict[str, Any]) -> tuple[str, Any]:
    try:
        bundle = _sigstore_bundle(document, "bundle.json")
    except AttestationError as error:
        return "error", str(error)
    return "bundle", bundle._inner


def _read_on_purpose(document: dict[str, Any]) -> bool:
    """A bundle `sigstore` refuses and assay reads: a v0.1 entry with its promise and no
    proof with a checkpoint, or no log entry and RFC 3161 timestamps (v0.2+)."""
    material = document.get("verificationMaterial") or {}
    entries = material.get("tlogEntries") or []
    if document.get("mediaType", "").endswith("version=0.1"):
        return len(entries) == 1 and "inclusionPromise" in entries[0]
    stamps = (material.get("timestampVerificationData") or {}).get("rfc3161Timestamps")
    return not entries and bool(stamps)


def _refused_on_purpose(document: dict[str, Any], got: tuple[str, Any]) -> bool:
    """A bundle `sigstore` reads and assay refuses, naming the path: a v0.1 bundle whose
    one log entry lacks the signed promise or its integrated time, the only evidence of
    inclusion a v0.1 bundle may carry (slsa-verifier verifies by it)."""
    return (
        got[0] == "error"
        and document.get("mediaType", "").endswith("version=0.1")
        and ".tlogEntries[0].inclusionPromise: expected the log's signed promise" in got[1]
    )


def _assert_read_alike(document: dict[str, Any]) -> None:
    expected = _outcome(lambda: Bundle.from_json(json.dumps(document)))
    got = _read_by_assay(document)
    if expected[0] == "bundle" and not _refused_on_purpose(document, got):
        assert got == expected
    elif got[0] == "bundle":
        assert _read_on_purpose(document), expected
    else:
        assert got[1].startswith("bundle.json: $"), got[1]
        assert "expected" in got[1]
        assert not any(word in got[1] for word in THIRD_PARTY_WORDS), got[1]


def test_the_assets_hold_bundles_of_every_kind() -> None:
    kinds = {document.get("mediaType") for _, document in BUNDLES}
    assert len(BUNDLES) >= 100
    assert len(kinds) >= 3


@pytest.mark.parametrize("algorithm", ["SHA2_256", "SHA2_512", "MD5", 3])
def test_a_message_signature_bundle_is_read_as_from_json_reads_it(algorithm: object) -> None:
    """No asset is a message signature; one is made from a DSSE bundle (it is read, not
    verified): its digest algorithm is an enum that only the JSON route accepts as text."""
    _, original = next(item for item in BUNDLES if "0.3" in item[1]["mediaType"])
    document = copy.deepcopy(original)
    envelope = document.pop("dsseEnvelope")
    document["messageSignature"] = {
        "messageDigest": {"algorithm": algorithm, "digest": envelope["payload"][:44]},
        "signature": envelope["signatures"][0]["sig"],
    }
    expected = _outcome(lambda: Bundle.from_json(json.dumps(document)))
    assert expected[0] == ("bundle" if algorithm in ("SHA2_256", "SHA2_512") else "error")
    _assert_read_alike(document)


@pytest.mark.parametrize(("name", "document"), BUNDLES, ids=[name for name, _ in BUNDLES])
def test_the_parsed_document_gives_the_bundle_sigstore_reads_from_json(
    name: str, document: dict[str, Any]
) -> None:
    _assert_read_alike(document)


_EDITS = st.sampled_from(["drop", "null", "number", "string", "list", "object", "extra"])


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [path] if path else []
    if isinstance(value, dict):
        for key, child in value.items():
            found.extend(_paths(child, (*path, key)))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            found.extend(_paths(child, (*path, index)))
    return found


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_an_altered_bundle_is_read_as_sigstore_reads_it_from_json(data: st.DataObject) -> None:
    """Whatever a bundle becomes (a field dropped, retyped, added), the parsed document
    gives `Bundle.from_json`'s bundle, or an error of assay's naming the JSON path."""
    _, original = data.draw(st.sampled_from(BUNDLES))
    document = copy.deepcopy(original)
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(_paths(document)))
        parent: Any = document
        for key in path[:-1]:
            parent = parent[key]
        last = path[-1]
        edit = data.draw(_EDITS)
        if edit == "drop":
            del parent[last]
        elif edit == "extra" and isinstance(parent[last], dict):
            parent[last]["unexpectedField"] = "x"
        else:
            parent[last] = {
                "null": None,
                "number": 7,
                "string": "SHA2_256",
                "list": [],
                "object": {},
                "extra": "AAAA",
            }[edit]
        if not _paths(document):
            break
    _assert_read_alike(document)


def _reference_identity(certificate: x509.Certificate) -> CertificateIdentity:
    """The certificate's identity read one extension at a time, by OID."""
    fulcio = "1.3.6.1.4.1.57264.1."
    raw = {"1": "issuer_v1", "2": "github_workflow_trigger", "3": "github_workflow_sha"}
    raw |= {"4": "github_workflow_name", "5": "github_workflow_repository"}
    raw |= {"6": "github_workflow_ref"}
    der = {
        "8": "issuer",
        "9": "build_signer_uri",
        "10": "build_signer_digest",
        "11": "runner_environment",
        "12": "source_repository_uri",
        "13": "source_repository_digest",
        "14": "source_repository_ref",
        "15": "source_repository_identifier",
        "16": "source_repository_owner_uri",
        "17": "source_repository_owner_identifier",
        "18": "build_config_uri",
        "19": "build_config_digest",
        "20": "build_trigger",
        "21": "run_invocation_uri",
        "22": "source_repository_visibility",
    }
    fields: dict[str, str] = {}
    for number, name in [*raw.items(), *der.items()]:
        try:
            value = certificate.extensions.get_extension_for_oid(
                x509.ObjectIdentifier(fulcio + number)
            ).value
        except x509.ExtensionNotFound:
            continue
        assert isinstance(value, x509.UnrecognizedExtension)
        data = value.value
        if number in der:
            assert data[0] == 0x0C
            length, offset = data[1], 2
            if length & 0x80:
                count = length & 0x7F
                length, offset = int.from_bytes(data[2 : 2 + count], "big"), 2 + count
            assert offset + length == len(data)
            data = data[offset:]
        fields[name] = data.decode()
    issuer_v1 = fields.pop("issuer_v1", None)
    issuer = fields.pop("issuer", issuer_v1)
    names = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    uris = names.get_values_for_type(x509.UniformResourceIdentifier)
    emails = names.get_values_for_type(x509.RFC822Name)
    san = uris[0] if uris else emails[0] if emails else None
    return CertificateIdentity(san=san, issuer=issuer, **fields)


def _certified() -> list[tuple[str, bytes]]:
    """(name, DER) of each bundle's signing certificate."""
    found = []
    for name, document in BUNDLES:
        material = document.get("verificationMaterial", {})
        if "certificate" in material:
            found.append((name, base64.b64decode(material["certificate"]["rawBytes"])))
        elif "x509CertificateChain" in material:
            chain = material["x509CertificateChain"]["certificates"]
            found.append((name, base64.b64decode(chain[0]["rawBytes"])))
    return found


CERTIFIED = _certified()


def test_most_asset_bundles_carry_a_certificate() -> None:
    assert len(CERTIFIED) >= 150  # the others are signed with a key (npm) or malformed


@pytest.mark.parametrize(("name", "der"), CERTIFIED, ids=[name for name, _ in CERTIFIED])
def test_the_identity_is_every_fulcio_extension_of_the_certificate(name: str, der: bytes) -> None:
    certificate = x509.load_der_x509_certificate(der)
    assert identity_of(certificate) == _reference_identity(certificate)


def test_the_certificate_digest_is_that_of_the_signing_certificate() -> None:
    verifier = BundleVerifier(default_roots())
    document = json.loads((GH / "custom-issuer.sigstore.json").read_text())
    verified = verifier.verify(document, "custom-issuer")
    certificate = Bundle.from_json(json.dumps(document)).signing_certificate
    der = certificate.public_bytes(Encoding.DER)
    assert verified.certificate_sha256 == hashlib.sha256(der).hexdigest()


def test_the_trusted_roots_keys_are_parsed_once_and_are_the_roots_own() -> None:
    root = default_roots()[0].load()
    verifier = BundleVerifier(default_roots()[:1])._verifier(0)
    for purpose in (KeyringPurpose.VERIFY, KeyringPurpose.SIGN):
        for kind in ("ct_keyring", "rekor_keyring"):
            try:
                expected = getattr(root, kind)(purpose)
            except Exception as error:
                with pytest.raises(type(error)):
                    getattr(verifier._trusted_root, kind)(purpose)
                continue
            first = getattr(verifier._trusted_root, kind)(purpose)
            assert first is getattr(verifier._trusted_root, kind)(purpose)
            assert set(first._keyring) == set(expected._keyring)


def test_an_unreadable_timestamp_is_refused_where_sigstore_refuses_it() -> None:
    """A bundle whose log entry has no promise takes its time from its RFC 3161
    timestamps, which `sigstore` decodes on reading: a broken one is refused by both,
    assay naming its path (found by the property above)."""
    name, original = next(
        (name, document)
        for name, document in BUNDLES
        if "staging-rekor-v2" in name
        and document["verificationMaterial"].get("timestampVerificationData")
    )
    document = copy.deepcopy(original)
    stamps = document["verificationMaterial"]["timestampVerificationData"]
    stamps["rfc3161Timestamps"][0]["signedTimestamp"] = "AAAA"  # base64, not DER
    assert _outcome(lambda: Bundle.from_json(json.dumps(document)))[0] == "error", name
    got = _read_by_assay(document)
    assert got[0] == "error"
    assert ".rfc3161Timestamps[0].signedTimestamp: expected an RFC 3161" in got[1], got[1]
    _assert_read_alike(document)
    assert _read_by_assay(original)[0] == "bundle"
