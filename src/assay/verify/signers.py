"""Which of a policy's trusted signers signed an attestation: the one place that decides.

A signer vouches for an attestation either with keys (DSSE signatures over the PAE,
counted by key fingerprint up to its threshold; old Cloud Build keys over the bare
payload when the policy opts in; for a Sigstore bundle signed with a key, only the
signatures its verified transparency-log entry records as made by that key) or with a
certificate identity (a Sigstore signer).
`signer_signed` is the single function that matches a `Signer` against an
`Attestation`; an identity signer matches through `identity_matches` (the policy's
`IdentityRule`), which sees only identities the `Verifier` set after verifying the
attestation's Sigstore material (certificate chain, SCT, log proof, signature).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from assay import dsse
from assay.policy.model import Signer
from assay.verify.model import Attestation, CertificateIdentity

if TYPE_CHECKING:
    from assay.policy.identity import IdentityRule
    from assay.sigstore.keyed import LoggedSignatures


def signer_signed(signer: Signer, attestation: Attestation) -> bool:
    """True when `signer` vouches for `attestation` (keys to threshold, or identity)."""
    if signer.keys and _keys_signed(signer, attestation):
        return True
    if signer.identity is not None and attestation.identity is not None:
        return identity_matches(signer.identity, attestation.identity)
    return False


def _keys_signed(signer: Signer, attestation: Attestation) -> bool:
    """The signer's keys signed to its threshold: through the verified log entry for a
    key-signed bundle, else over the PAE (or the bare payload, for signers that opt in)."""
    envelope = attestation.envelope
    if attestation.key_signed_bundle:
        logged = attestation.logged
        return logged is not None and _logged_signed(envelope, signer, logged)
    if dsse.check_signatures(envelope, signer.keys, signer.threshold):
        return True
    return signer.legacy_raw_payload and _legacy_raw_signed(envelope, signer)


def signers_that_signed(attestation: Attestation, signers: Sequence[Signer]) -> list[Signer]:
    """The policy signers that vouch for `attestation`, in policy order."""
    return [signer for signer in signers if signer_signed(signer, attestation)]


def key_signers(signers: Sequence[Signer]) -> list[Signer]:
    """The signers that vouch with keys."""
    return [signer for signer in signers if signer.keys]


def identity_signers(signers: Sequence[Signer]) -> list[Signer]:
    """The signers that vouch with a certificate identity (Sigstore signers)."""
    return [signer for signer in signers if signer.identity is not None]


def identity_matches(rule: IdentityRule, identity: CertificateIdentity) -> bool:
    """A policy identity rule (issuer, subject or subjectPattern, extension pins) against
    a verified certificate identity. Patterns match the whole SAN (`fullmatch`)."""
    return rule.matches(identity)


def _legacy_raw_signed(envelope: dsse.Envelope, signer: Signer) -> bool:
    # Old GCB regional keys sign the bare payload, not PAE; only signers that opt in
    # (`legacyRawPayload: true`) are tried this way. Outside DSSE the keyid is not a
    # mere hint: as in Google's scheme, it must name the key exactly. Keys count once
    # per fingerprint.
    signed: set[str] = set()
    for signature in envelope.signatures:
        for key in signer.keys:
            fingerprint = key.fingerprint()
            if fingerprint in signed or signature.keyid != key.keyid:
                continue
            if key.verify(signature.sig, envelope.payload):
                signed.add(fingerprint)
                break
    return len(signed) >= signer.threshold


def _logged_signed(envelope: dsse.Envelope, signer: Signer, logged: LoggedSignatures) -> bool:
    # A bundle signed with a key: a key counts when the verified log entry records one
    # of the envelope's signatures as made by that key (same fingerprint) and the
    # signature verifies with it over the PAE. Keys count once per fingerprint.
    message = envelope.pae()
    signed: set[str] = set()
    for key in signer.keys:
        fingerprint = dsse.key_fingerprint(key)
        if fingerprint in signed:
            continue
        for signature, logged_key in logged.signatures:
            if logged_key == fingerprint and key.verify(signature, message):
                signed.add(fingerprint)
                break
    return len(signed) >= signer.threshold
