"""Legacy slsa-github-generator envelopes: DSSE with a Fulcio certificate, no log proof.

`.intoto.jsonl` files of slsa-github-generator before v2 carry the signing certificate
in the envelope's signature (`cert`) and nothing from the transparency log. Checked here,
offline: the certificate chains to a Fulcio CA of a trusted root (at its own issuance
time, since no verified time exists), its SCT, and the signature over the DSSE PAE.
Without a log entry nothing proves the signature was made while the certificate was
valid: the caller either finds the entry in Rekor (`assay.sigstore.rekor`) or accepts
the envelope with `--insecure-ignore-tlog`, which the result records.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Sequence
from typing import Any

from assay import protocol
from assay.errors import AttestationError, VerificationError
from assay.sigstore import validity
from assay.sigstore.identity import identity_of
from assay.sigstore.roots import Root, _first_line
from assay.sigstore.verifier import LogProof, TimeSource, VerifiedSignature, VerifiedTime


def is_legacy_envelope(document: object) -> bool:
    return (
        isinstance(document, dict)
        and "payloadType" in document
        and isinstance(document.get("signatures"), list)
    )


def _b64(value: object, where: str) -> bytes:
    if not isinstance(value, str):
        raise AttestationError(where, "expected a base64 string")
    try:
        return base64.b64decode(
            value + "=" * (-len(value) % 4),
            altchars=b"-_" if "-" in value or "_" in value else None,
            validate=True,
        )
    except ValueError:
        raise AttestationError(where, "expected standard or URL-safe base64") from None


def envelope_parts(document: dict[str, Any], where: str) -> tuple[str, bytes, bytes, bytes]:
    """(payloadType, payload, signature, certificate PEM) of a one-signature envelope."""
    payload_type = document.get("payloadType")
    if not isinstance(payload_type, str) or not payload_type:
        raise AttestationError(f"{where}: $.payloadType", "expected a non-empty string")
    payload = _b64(document.get("payload"), f"{where}: $.payload")
    signatures = document["signatures"]
    if len(signatures) != 1 or not isinstance(signatures[0], dict):
        raise AttestationError(
            f"{where}: $.signatures",
            f"expected one signature with a certificate, found {len(signatures)}",
        )
    signature = _b64(signatures[0].get("sig"), f"{where}: $.signatures[0].sig")
    cert = signatures[0].get("cert")
    if not isinstance(cert, str) or "BEGIN CERTIFICATE" not in cert:
        raise AttestationError(
            f"{where}: $.signatures[0].cert",
            "expected a PEM certificate (a Sigstore-signed envelope)",
        )
    return payload_type, payload, signature, cert.encode()


def verify_legacy(
    document: dict[str, Any],
    where: str,
    roots: Sequence[Root],
    *,
    log_proof: LogProof,
    log_time: Any = None,
    log_index: int | None = None,
) -> VerifiedSignature:
    """Chain, SCT and signature; `log_proof` says what stands for the log (a lookup or a waiver)."""
    from cryptography.hazmat.primitives.serialization import Encoding

    from assay.dsse import pae

    payload_type, payload, signature, pem = envelope_parts(document, where)
    certificate = _certificate(pem, where)
    when = log_time if log_time is not None else certificate.not_valid_before_utc
    if not certificate.not_valid_before_utc <= when <= certificate.not_valid_after_utc:
        raise VerificationError(f"{where}: the log time is outside the certificate's validity")
    root = _chaining_root(certificate, roots, when, where)
    _check_signature(certificate, signature, pae(payload_type, payload), where)
    source = (
        TimeSource.TRANSPARENCY_LOG if log_time is not None else TimeSource.CERTIFICATE_ISSUANCE
    )
    return VerifiedSignature(
        where=where,
        media_type=protocol.DSSE_ENVELOPE_MEDIA_TYPE,
        payload_type=payload_type,
        payload=payload,
        message_digest=None,
        identity=identity_of(certificate),
        certificate_sha256=hashlib.sha256(certificate.public_bytes(Encoding.DER)).hexdigest(),
        times=(VerifiedTime(source, when),),
        log_proof=log_proof,
        log_index=log_index,
        trusted_root=root.name,
        envelope=document,
    )


def _certificate(pem: bytes, where: str) -> Any:
    from cryptography import x509

    try:
        return x509.load_pem_x509_certificate(pem)
    except ValueError:
        raise AttestationError(
            f"{where}: $.signatures[0].cert", "expected a PEM certificate"
        ) from None


def _chaining_root(certificate: Any, roots: Sequence[Root], when: Any, where: str) -> Root:
    """The first trusted root whose Fulcio CA the certificate chains to at `when`."""
    errors = []
    for root in roots:
        trusted = root.load()
        try:
            _check_chain(trusted, certificate, when)
        except Exception as error:
            errors.append(f"{root.name}: {_first_line(error)}")
            continue
        return root
    raise VerificationError(
        f"{where}: the envelope's certificate does not chain to a trusted Fulcio CA ({'; '.join(errors)})"
    )


def _check_chain(trusted: Any, certificate: Any, when: Any) -> None:
    """The chain to one of the root's Fulcio CAs, the certificate's SCT, and both the CA
    and the CT key valid at their times."""
    from cryptography import x509
    from cryptography.x509.verification import (
        Criticality,
        ExtensionPolicy,
        PolicyBuilder,
        Store,
    )
    from sigstore._internal.sct import verify_sct
    from sigstore._internal.trust import KeyringPurpose

    ca_policy = ExtensionPolicy.webpki_defaults_ca().may_be_present(
        x509.ExtendedKeyUsage, Criticality.NON_CRITICAL, None
    )
    ee_policy = ExtensionPolicy.webpki_defaults_ee().may_be_present(
        x509.ExtendedKeyUsage, Criticality.NON_CRITICAL, None
    )
    verifier = (
        PolicyBuilder()
        .store(Store(trusted.get_fulcio_certs()))
        .time(when)
        .extension_policies(ca_policy=ca_policy, ee_policy=ee_policy)
        .build_client_verifier()
    )
    chain = verifier.verify(certificate, []).chain[1:]
    verify_sct(certificate, chain, trusted.ct_keyring(KeyringPurpose.VERIFY))
    # The CA at the signing time and the CT key at the SCT's (sigstore allows expired).
    validity.check_ca(trusted._inner, chain, when)
    validity.check_sct(trusted._inner, certificate)


def _check_signature(certificate: Any, signature: bytes, message: bytes, where: str) -> None:
    """The envelope's signature over the PAE, with the certificate's ECDSA key."""
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec

    key = certificate.public_key()
    if not isinstance(key, ec.EllipticCurvePublicKey):
        raise VerificationError(f"{where}: expected an ECDSA certificate key")
    try:
        key.verify(signature, message, ec.ECDSA(hashes.SHA256()))
    except InvalidSignature:
        raise VerificationError(f"{where}: the envelope signature does not verify") from None
