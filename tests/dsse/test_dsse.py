from __future__ import annotations

import base64
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assay import dsse
from assay.errors import AttestationError, VerificationError
from assay.keys import (
    KeyType,
    PrivateKey,
    ecdsa_der_to_raw,
    generate_private_key,
    load_public_key,
)

KEYS = {kind: generate_private_key(kind) for kind in KeyType}


def test_pae_matches_the_dsse_spec_vector() -> None:
    assert dsse.pae("http://example.com/HelloWorld", b"hello world") == (
        b"DSSEv1 29 http://example.com/HelloWorld 11 hello world"
    )


def test_pae_counts_bytes_not_characters() -> None:
    # "é" is one character and two UTF-8 bytes.
    assert dsse.pae("é", "ü".encode()) == b"DSSEv1 2 \xc3\xa9 2 \xc3\xbc"


@given(st.text(max_size=40), st.binary(max_size=200))
def test_pae_framing_is_unambiguous(payload_type: str, payload: bytes) -> None:
    encoded = dsse.pae(payload_type, payload)
    prefix, type_len, rest = encoded.split(b" ", 2)
    assert prefix == b"DSSEv1"
    type_bytes = payload_type.encode()
    assert int(type_len) == len(type_bytes)
    assert rest[: len(type_bytes)] == type_bytes
    body_len, body = rest[len(type_bytes) + 1 :].split(b" ", 1)
    assert int(body_len) == len(payload)
    assert body == payload


@settings(max_examples=25, deadline=None)
@given(
    st.sampled_from(list(KeyType)),
    st.binary(max_size=300),
    st.text(min_size=1, max_size=30),
)
def test_sign_then_verify_round_trip(kind: KeyType, payload: bytes, payload_type: str) -> None:
    key = KEYS[kind]
    envelope = dsse.sign(payload, payload_type, [key])
    parsed = dsse.Envelope.from_json(envelope.to_json())
    verified = dsse.verify(parsed, [key.public_key()])
    assert verified.payload == payload
    assert verified.payload_type == payload_type
    assert [k.keyid for k in verified.signed_by] == [key.keyid]


@pytest.mark.parametrize("kind", list(KeyType))
def test_a_changed_payload_fails(kind: KeyType) -> None:
    key = KEYS[kind]
    envelope = dsse.sign(b'{"a":1}', dsse.INTOTO_PAYLOAD_TYPE, [key])
    tampered = dsse.Envelope(b'{"a":2}', envelope.payload_type, envelope.signatures)
    with pytest.raises(VerificationError, match="found 0"):
        dsse.verify(tampered, [key.public_key()])
    retyped = dsse.Envelope(envelope.payload, "text/plain", envelope.signatures)
    assert not dsse.check_signatures(retyped, [key.public_key()])


def test_keyid_is_only_a_hint() -> None:
    key = KEYS[KeyType.ED25519]
    envelope = dsse.sign(b"x", "t", [key])
    wrong = dsse.Envelope(b"x", "t", (dsse.Signature(envelope.signatures[0].sig, "other"),))
    decoy = KEYS[KeyType.ECDSA_P256].public_key()
    verified = dsse.verify(wrong, [decoy, key.public_key()])
    assert verified.signed_by[0].keyid == key.keyid


def test_threshold_counts_distinct_keys() -> None:
    a, b = KEYS[KeyType.ED25519], KEYS[KeyType.ECDSA_P256]
    twice_a = dsse.sign(b"x", "t", [a, a])
    with pytest.raises(VerificationError, match="2 distinct"):
        dsse.verify(twice_a, [a.public_key(), b.public_key()], threshold=2)
    both = dsse.sign(b"x", "t", [a, b])
    verified = dsse.verify(both, [b.public_key(), a.public_key()], threshold=2)
    assert {k.keyid for k in verified.signed_by} == {a.keyid, b.keyid}
    check = dsse.check_signatures(twice_a, [a.public_key(), b.public_key()], 2)
    assert check.missing == 1


def test_threshold_above_key_count_is_refused() -> None:
    a = KEYS[KeyType.ED25519]
    with pytest.raises(VerificationError, match="cannot be met"):
        dsse.verify(dsse.sign(b"x", "t", [a]), [a.public_key()], threshold=2)


def test_payload_type_is_checked_when_asked() -> None:
    a = KEYS[KeyType.ED25519]
    envelope = dsse.sign(b"x", "text/plain", [a])
    with pytest.raises(VerificationError, match="payloadType"):
        dsse.verify(envelope, [a.public_key()], payload_type=dsse.INTOTO_PAYLOAD_TYPE)


@pytest.mark.parametrize("kind", [KeyType.ECDSA_P256, KeyType.ECDSA_P384, KeyType.ECDSA_P521])
def test_ecdsa_raw_r_s_signatures_verify(kind: KeyType) -> None:
    key = KEYS[kind]
    envelope = dsse.sign(b"payload", "t", [key])
    bits = int(kind.value.removeprefix("ecdsa-p"))
    raw = ecdsa_der_to_raw(envelope.signatures[0].sig, bits)
    assert len(raw) == 2 * ((bits + 7) // 8)
    as_raw = dsse.Envelope(b"payload", "t", (dsse.Signature(raw),))
    assert dsse.verify(as_raw, [key.public_key()]).payload == b"payload"
    truncated = dsse.Envelope(b"payload", "t", (dsse.Signature(raw[:-1]),))
    assert not dsse.check_signatures(truncated, [key.public_key()])


def test_url_safe_and_unpadded_base64_are_accepted() -> None:
    key = KEYS[KeyType.ED25519]
    payload = b"\xfb\xff\xfe subjects?"
    envelope = dsse.sign(payload, "t", [key])
    doc = {
        "payloadType": "t",
        "payload": base64.urlsafe_b64encode(payload).decode().rstrip("="),
        "signatures": [{"sig": base64.urlsafe_b64encode(envelope.signatures[0].sig).decode()}],
    }
    parsed = dsse.Envelope.from_dict(doc)
    assert dsse.verify(parsed, [key.public_key()]).payload == payload


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ([], "expected a DSSE envelope object"),
        ({"payload": "", "signatures": [{"sig": "AA=="}]}, r"\$\.payloadType"),
        ({"payloadType": "t", "payload": 3, "signatures": [{"sig": "AA=="}]}, r"\$\.payload"),
        ({"payloadType": "t", "payload": "a+b-", "signatures": [{"sig": "AA"}]}, "mix"),
        ({"payloadType": "t", "payload": "", "signatures": []}, "non-empty array"),
        ({"payloadType": "t", "payload": "", "signatures": [{"sig": ""}]}, r"signatures\[0\]\.sig"),
        ({"payloadType": "t", "payload": "", "signatures": [{"sig": "A!"}]}, "alphabet"),
        ({"payloadType": "t", "payload": "", "signatures": [{"sig": "AA", "keyid": 1}]}, "keyid"),
        (
            {"payloadType": "t", "payload": "", "signatures": [{"sig": "AA"}] * 65},
            "at most 64",
        ),
    ],
    ids=[
        "not-object",
        "no-type",
        "payload-int",
        "mixed-b64",
        "no-sigs",
        "empty-sig",
        "bad-b64",
        "keyid-int",
        "too-many",
    ],
)
def test_malformed_envelopes_name_the_path(document: object, message: str) -> None:
    with pytest.raises(AttestationError, match=message):
        dsse.Envelope.from_dict(document)


def test_oversized_envelope_is_refused_before_parsing() -> None:
    with pytest.raises(AttestationError, match="at most"):
        dsse.Envelope.from_json(b" " * (dsse.MAX_ENVELOPE_BYTES + 1))


def test_json_lines_are_read_one_envelope_per_line() -> None:
    key = KEYS[KeyType.ED25519]
    lines = b"\n".join(dsse.sign(p, "t", [key]).to_json() for p in (b"1", b"2"))
    assert [e.payload for e in dsse.read_envelopes(lines)] == [b"1", b"2"]


def test_real_vsa_with_raw_ecdsa_signature(asset: Callable[[str], Path]) -> None:
    # slsa-verifier's VSA vector: P-256, raw r||s, a keyid that is not our fingerprint.
    key = load_public_key(
        asset("slsa-verifier/cli/vsa/gce/v1/vsa_signing_public_key.pem").read_bytes()
    )
    (envelope,) = dsse.read_envelopes(
        asset("slsa-verifier/cli/vsa/gce/v1/gke-gce-pre.bcid-vsa.jsonl").read_bytes()
    )
    assert len(envelope.signatures[0].sig) == 64
    verified = dsse.verify(envelope, [key], payload_type=dsse.INTOTO_PAYLOAD_TYPE)
    assert json.loads(verified.payload)["predicate"]["verificationResult"] == "PASSED"


def test_real_in_toto_envelope_with_json_key(asset: Callable[[str], Path]) -> None:
    key = load_public_key(asset("attestation-verifier/key.pub").read_bytes())
    (envelope,) = dsse.read_envelopes(
        asset("attestation-verifier/build.fe1c6281.json").read_bytes()
    )
    verified = dsse.verify(envelope, [key])
    assert verified.payload.startswith(b'{"_type":"https://in-toto.io/Statement/v1"')


def test_private_key_round_trip_with_passphrase() -> None:
    from assay.keys import load_private_key

    key = KEYS[KeyType.ECDSA_P256]
    pem = key.to_pem(b"secret")
    assert b"ENCRYPTED PRIVATE KEY" in pem
    loaded: PrivateKey = load_private_key(pem, passphrase=b"secret")
    assert loaded.keyid == key.keyid
    with pytest.raises(Exception, match="passphrase"):
        load_private_key(pem)
    with pytest.raises(Exception, match="wrong passphrase"):
        load_private_key(pem, passphrase=b"nope")


def test_rsa_pkcs1v15_and_pss_are_both_accepted() -> None:
    from assay.keys import PrivateKey, PublicKey, RsaScheme

    key = KEYS[KeyType.RSA_3072]
    pkcs1 = PrivateKey(key.key, rsa_scheme=RsaScheme.PKCS1V15)
    envelope = dsse.sign(b"x", "t", [pkcs1])
    assert dsse.verify(envelope, [key.public_key()]).payload == b"x"
    pss_only = PublicKey(key.key.public_key(), rsa_scheme=RsaScheme.PSS)
    assert not dsse.check_signatures(envelope, [pss_only])
    assert dsse.check_signatures(dsse.sign(b"x", "t", [key]), [pss_only])


_ENVELOPE = (
    '{"payloadType": "application/vnd.in-toto+json", "payload": "e30=",'
    ' "signatures": [{"keyid": "k", "sig": "AA=="}]}'
)


@pytest.mark.parametrize(
    ("text", "where"),
    [
        (_ENVELOPE.replace('"payload":', '"payload": "", "payload":'), "envelope: $.payload"),
        (_ENVELOPE.replace('"sig":', '"sig": "AA==", "sig":'), "envelope: $.signatures[0].sig"),
        (_ENVELOPE[:-1] + ', "x": {"a": 1, "a": 1}}', "envelope: $.x.a"),
        (
            _ENVELOPE.replace('"keyid": "k"', '"keyid": "k", "KEYID": "k", "keyid": "j"'),
            "envelope: $.signatures[0].keyid",
        ),
    ],
    ids=["payload", "signature", "unknown-member", "keyid"],
)
def test_a_repeated_key_is_refused_with_its_path(text: str, where: str) -> None:
    with pytest.raises(AttestationError, match="once") as raised:
        dsse.Envelope.from_json(text.encode())
    assert raised.value.where == where
    with pytest.raises(AttestationError, match="once"):
        dsse.read_envelopes(text.encode())


def test_a_repeated_key_in_a_json_line_names_the_line_and_the_path() -> None:
    good = _ENVELOPE.encode()
    bad = _ENVELOPE.replace('"payloadType":', '"payloadType": "x", "payloadType":').encode()
    with pytest.raises(AttestationError) as raised:
        dsse.read_envelopes(good + b"\n" + bad + b"\n")
    assert raised.value.where == "envelope line 2: $.payloadType"


def test_a_pretty_printed_envelope_with_a_repeated_key_is_one_document() -> None:
    text = json.dumps(json.loads(_ENVELOPE), indent=2).replace(
        '"payload":', '"payload": "e30=",\n  "payload":', 1
    )
    with pytest.raises(AttestationError) as raised:
        dsse.read_envelopes(text.encode(), where="p.json")
    assert raised.value.where == "p.json: $.payload"


@pytest.mark.parametrize("depth", [64, 65, 1000, 100_000])
def test_nesting_past_the_limit_is_refused_without_recursion_error(depth: int) -> None:
    text = _ENVELOPE[:-1] + ', "x": ' + "[" * depth + "]" * depth + "}"
    with pytest.raises(AttestationError, match="nesting at most 64"):
        dsse.Envelope.from_json(text.encode())
    with pytest.raises(AttestationError, match="nesting at most 64"):
        dsse.read_envelopes(text.encode())


def test_the_deepest_allowed_envelope_is_read() -> None:
    depth = dsse.MAX_DEPTH - 1  # levels 0 (the envelope) to 63 (the innermost array)
    text = _ENVELOPE[:-1] + ', "x": ' + "[" * depth + "]" * depth + "}"
    assert dsse.Envelope.from_json(text.encode()).payload == b"{}"
    deeper = _ENVELOPE[:-1] + ', "x": ' + "[" * (depth + 1) + "]" * (depth + 1) + "}"
    with pytest.raises(AttestationError, match=r"envelope: \$\.x(\[0\])+: expected nesting"):
        dsse.Envelope.from_json(deeper.encode())


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_any_key_given_twice_is_refused(data: st.DataObject) -> None:
    """Repeat one member of any object of a signed envelope: the envelope is refused,
    whatever the repeated value, and the error names that member."""
    key = KEYS[KeyType.ED25519]
    envelope = dsse.sign(data.draw(st.binary(max_size=20)), "t", [key]).to_dict()
    envelope["signatures"][0]["keyid"] = data.draw(st.text(max_size=5))
    members = [("$", k) for k in envelope] + [("$.signatures[0]", k) for k in ("keyid", "sig")]
    parent, member = data.draw(st.sampled_from(members))
    text = json.dumps(envelope)
    target = envelope if parent == "$" else envelope["signatures"][0]
    original = f"{json.dumps(member)}: {json.dumps(target[member])}"
    repeated = json.dumps(data.draw(st.text(max_size=5) | st.integers() | st.none()))
    assert original in text
    text = text.replace(original, f"{json.dumps(member)}: {repeated}, {original}", 1)
    with pytest.raises(AttestationError, match="once") as raised:
        dsse.Envelope.from_json(text.encode())
    assert raised.value.where == f"envelope: {parent}.{member}"
