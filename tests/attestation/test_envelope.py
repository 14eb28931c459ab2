"""Payload extraction from DSSE envelopes and Sigstore bundles, and the document reader."""

from __future__ import annotations

import base64
from typing import Any

import orjson
import pytest

from assay.attestation import EnvelopePayload, extract_payload, is_intoto_payload_type
from assay.attestation.documents import read_documents
from assay.attestation.findings import Severity
from assay.errors import AttestationError

from .samples import SLSA_ASSETS, provenance_v1, vsa_v1


def envelope(statement: Any, payload_type: str = "application/vnd.in-toto+json") -> dict[str, Any]:
    payload = base64.b64encode(orjson.dumps(statement)).decode()
    return {"payloadType": payload_type, "payload": payload, "signatures": [{"sig": "AA=="}]}


def bundle(statement: Any, media_type: str) -> dict[str, Any]:
    return {
        "mediaType": media_type,
        "verificationMaterial": {},
        "dsseEnvelope": envelope(statement),
    }


def test_extract_from_dsse() -> None:
    raw = provenance_v1()
    found = extract_payload(orjson.dumps(envelope(raw)))
    assert isinstance(found, EnvelopePayload)
    assert orjson.loads(found.payload) == raw
    assert found.payload_type == "application/vnd.in-toto+json"
    assert found.container == "dsse"
    assert found.signatures_checked is False
    assert found.envelope["signatures"] == [{"sig": "AA=="}]


@pytest.mark.parametrize(
    "media_type",
    [
        "application/vnd.dev.sigstore.bundle+json;version=0.1",
        "application/vnd.dev.sigstore.bundle+json;version=0.2",
        "application/vnd.dev.sigstore.bundle+json;version=0.3",
        "application/vnd.dev.sigstore.bundle.v0.3+json",
    ],
)
def test_extract_from_sigstore_bundles(media_type: str) -> None:
    found = extract_payload(bundle(vsa_v1(), media_type))
    assert found.container == "sigstore-bundle"
    assert found.bundle_media_type == media_type
    assert orjson.loads(found.payload) == vsa_v1()


def test_extract_from_real_bundle() -> None:
    data = (SLSA_ASSETS / "github-cli/sigstore-js-2.1.0-bundle.json").read_bytes()
    found = extract_payload(data)
    assert orjson.loads(found.payload)["predicateType"] == "https://slsa.dev/provenance/v1"


def test_url_safe_and_unpadded_base64_are_accepted() -> None:
    payload = b'{"a":"\xff\xfe?>"}'
    text = base64.urlsafe_b64encode(payload).decode().rstrip("=")
    assert "-" in text or "_" in text
    found = extract_payload({"payloadType": "application/vnd.in-toto+json", "payload": text})
    assert found.payload == payload


def test_bundle_with_message_signature_is_refused() -> None:
    data = {"mediaType": "application/vnd.dev.sigstore.bundle.v0.3+json", "messageSignature": {}}
    with pytest.raises(AttestationError, match="found a message signature") as raised:
        extract_payload(data)
    assert raised.value.where == "$.dsseEnvelope"


@pytest.mark.parametrize(
    ("document", "where"),
    [
        ({"payloadType": 1, "payload": ""}, "$.payloadType"),
        ({"payloadType": "x", "payload": None}, "$.payload"),
        ({"payloadType": "x", "payload": "@@@"}, "$.payload"),
        ({"hello": 1}, "$"),
    ],
)
def test_malformed_containers(document: dict[str, Any], where: str) -> None:
    with pytest.raises(AttestationError) as raised:
        extract_payload(document)
    assert raised.value.where == where
    assert "expected" in str(raised.value)


def test_payload_types() -> None:
    assert is_intoto_payload_type("application/vnd.in-toto+json")
    assert is_intoto_payload_type("application/vnd.in-toto.provenance+json")
    assert not is_intoto_payload_type("application/json")
    assert not is_intoto_payload_type("application/vnd.in-toto+json; charset=utf-8")


def test_oversized_payload_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    from assay.attestation import envelope as module

    monkeypatch.setattr(module, "MAX_PAYLOAD_BYTES", 30)
    with pytest.raises(AttestationError, match="at most 30 decoded bytes"):
        extract_payload(envelope(provenance_v1()))


def test_documents_from_json_lines_of_mixed_forms() -> None:
    lines = [
        orjson.dumps(envelope(provenance_v1())),
        orjson.dumps(bundle(vsa_v1(), "application/vnd.dev.sigstore.bundle.v0.3+json")),
        orjson.dumps(provenance_v1()),
        b"",
        orjson.dumps({"note": "not an attestation"}),
    ]
    documents = read_documents(b"\n".join(lines))
    assert [d.kind for d in documents] == ["dsse", "sigstore-bundle", "statement", "statement"]
    assert [d.location for d in documents] == ["line 1", "line 2", "line 3", "line 5"]
    assert [d.findings for d in documents[:3]] == [[], [], []]
    (ignored,) = documents[3].findings
    assert (ignored.code, ignored.severity) == ("unknown-field", Severity.WARNING)


def test_documents_report_a_wrong_payload_type() -> None:
    (document,) = read_documents(orjson.dumps(envelope(provenance_v1(), "text/plain")))
    (finding,) = document.findings
    assert (finding.path, finding.code) == ("$.payloadType", "payload-type")
    assert document.statement is None


def test_documents_report_a_payload_that_is_not_json() -> None:
    bad = {
        "payloadType": "application/vnd.in-toto+json",
        "payload": base64.b64encode(b"{").decode(),
    }
    (document,) = read_documents(orjson.dumps(bad))
    assert [f.code for f in document.findings] == ["payload-encoding"]


def test_a_bad_line_among_good_ones_makes_the_file_unusable() -> None:
    # Every command reads files alike (assay.attestation.files): a JSON Lines file with a
    # line that is not JSON is refused as a whole, naming the line.
    data = orjson.dumps(provenance_v1()) + b"\nnot json\n"
    with pytest.raises(AttestationError, match="line 2"):
        read_documents(data)


@pytest.mark.parametrize("data", [b"", b"{", b"-----BEGIN KEY-----\nabc\n-----END KEY-----\n"])
def test_unreadable_inputs_raise(data: bytes) -> None:
    with pytest.raises(AttestationError):
        read_documents(data)


def test_file_size_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    from assay.attestation import files as module

    monkeypatch.setattr(module, "MAX_FILE_BYTES", 100)
    with pytest.raises(AttestationError, match="at most 100 bytes"):
        read_documents(orjson.dumps(provenance_v1()))
