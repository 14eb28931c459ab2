"""Verify Sigstore bundles (v0.1, v0.2, v0.3; DSSE or message signature) offline.

The cryptography is `sigstore`'s: the certificate chain to a Fulcio CA of a trusted root
at a verified time, the SCT, the transparency-log inclusion proof and/or promise, RFC 3161
timestamps, the signature over the DSSE pre-authentication encoding or the artifact
digest, and the signing time inside the certificate's validity; and, which `sigstore`
leaves out, the trusted root's CA, CT and Rekor keys valid at the verified signing time
(`assay.sigstore.validity`). What the certificate
says about the signer is returned as a typed `CertificateIdentity`; whether that signer
is trusted for anything is for a policy to decide.

One addition: bundles written by slsa-github-generator log their envelope as a Rekor
`intoto/0.0.2` entry, which `sigstore` 4 refuses ("integrated time only supported for
dsse/hashedrekord"). slsa-verifier accepts them, and so does assay: the same checks run,
the integrated time counts only with its signed promise, and the entry's payload hash
and signatures must be the envelope's (docs/verification.md, "Sigstore").
"""

from __future__ import annotations

import base64
import enum
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final, cast

from assay.errors import AttestationError, VerificationError
from assay.sigstore import validity
from assay.sigstore.identity import CertificateIdentity, identity_of
from assay.sigstore.roots import Root

if TYPE_CHECKING:
    from cryptography import x509
    from sigstore.models import Bundle

BUNDLE_MEDIA_TYPES: Final = {
    "application/vnd.dev.sigstore.bundle+json;version=0.1": "0.1",
    "application/vnd.dev.sigstore.bundle+json;version=0.2": "0.2",
    "application/vnd.dev.sigstore.bundle+json;version=0.3": "0.3",
    "application/vnd.dev.sigstore.bundle.v0.3+json": "0.3",
}


class TimeSource(enum.Enum):
    TRANSPARENCY_LOG = "transparency-log"
    """Rekor's integrated time, bound by its signed inclusion promise."""
    TIMESTAMP_AUTHORITY = "timestamp-authority"
    """An RFC 3161 timestamp from a trusted timestamp authority."""
    CERTIFICATE_ISSUANCE = "certificate-issuance"
    """No verified time: the chain was checked when the certificate was issued (only
    for a legacy envelope accepted with `--insecure-ignore-tlog`)."""


class LogProof(enum.Enum):
    INCLUSION_PROOF = "inclusion-proof"
    """A Merkle inclusion proof to a signed checkpoint (and the promise when present)."""
    INCLUSION_PROMISE = "inclusion-promise"
    """Only the log's signed entry timestamp (v0.1 bundles)."""
    REKOR_LOOKUP = "rekor-lookup"
    """The entry was found online in Rekor and its promise verified."""
    WAIVED = "waived"
    """No transparency-log evidence was checked: `--insecure-ignore-tlog`."""


@dataclass(frozen=True, slots=True)
class VerifiedTime:
    source: TimeSource
    time: datetime


@dataclass(frozen=True, slots=True)
class VerifiedSignature:
    """What a verified bundle (or legacy envelope) establishes."""

    where: str
    media_type: str
    payload_type: str | None
    """The DSSE payload type; None for a message-signature bundle."""
    payload: bytes | None
    """The verified DSSE payload bytes; None for a message-signature bundle."""
    message_digest: tuple[str, str] | None
    """(algorithm, hex) of the artifact a message signature covers."""
    identity: CertificateIdentity
    certificate_sha256: str
    times: tuple[VerifiedTime, ...]
    log_proof: LogProof
    log_index: int | None
    trusted_root: str
    envelope: dict[str, Any] | None = field(default=None, compare=False)

    @property
    def tlog_checked(self) -> bool:
        return self.log_proof is not LogProof.WAIVED

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.where,
            "mediaType": self.media_type,
            "payloadType": self.payload_type,
            "identity": self.identity.to_dict(),
            "certificateSha256": self.certificate_sha256,
            "verifiedTimes": [
                {"source": t.source.value, "time": t.time.isoformat().replace("+00:00", "Z")}
                for t in self.times
            ],
            "transparencyLog": {
                "proof": self.log_proof.value,
                "checked": self.tlog_checked,
                "logIndex": self.log_index,
            },
            "trustedRoot": self.trusted_root,
        }


class _AnyIdentity:
    """The certificate identity is returned typed and matched by the caller's policy."""

    def verify(self, cert: x509.Certificate) -> None:
        return None


def _short(error: BaseException) -> str:
    """The first lines of an error from sigstore or pydantic (the field path included)."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    lines = [line for line in lines if not line.startswith("For further information")]
    return "; ".join(lines[:3])[:400] if lines else type(error).__name__


def _sigstore_verifier_class() -> type[Any]:
    from sigstore._internal.timestamp import TimestampSource, TimestampVerificationResult
    from sigstore._internal.trust import CTKeyring, KeyringPurpose, RekorKeyring
    from sigstore.dsse import _verify as verify_dsse_signature
    from sigstore.models import TrustedRoot
    from sigstore.verify import Verifier

    class _ParsedKeyrings(TrustedRoot):
        """A trusted root whose CT and Rekor keyrings are parsed once for each set of keys.

        `sigstore`'s Verifier asks its trusted root for these keyrings for every bundle,
        and the root parses each public key again. Which keys a keyring holds is still
        decided at each request, by the root's own rule (a key not yet valid now is left
        out); only the parsing of the same keys is not repeated.
        """

        def __init__(self, inner: Any) -> None:
            super().__init__(inner)
            self._keyrings: dict[tuple[str, Any, tuple[int, ...]], Any] = {}

        def ct_keyring(self, purpose: KeyringPurpose) -> CTKeyring:
            selected = self._selected(self._inner.ctlogs, purpose)
            keyring = self._keyrings.get(("ct", purpose, selected))
            if keyring is None:
                keyring = super().ct_keyring(purpose)
                self._keyrings[("ct", purpose, selected)] = keyring
            return cast(CTKeyring, keyring)

        def rekor_keyring(self, purpose: KeyringPurpose) -> RekorKeyring:
            selected = self._selected(self._inner.tlogs, purpose)
            keyring = self._keyrings.get(("rekor", purpose, selected))
            if keyring is None:
                keyring = super().rekor_keyring(purpose)
                self._keyrings[("rekor", purpose, selected)] = keyring
            return cast(RekorKeyring, keyring)

        def _selected(self, logs: Any, purpose: KeyringPurpose) -> tuple[int, ...]:
            return tuple(id(key) for key in self._get_tlog_keys(logs, purpose))

    class _Verifier(Verifier):
        """sigstore's Verifier, also accepting Rekor `intoto/0.0.2` entries; records times."""

        times: list[Any]

        def __init__(self, *, trusted_root: TrustedRoot) -> None:
            super().__init__(trusted_root=_ParsedKeyrings(trusted_root._inner))

        def _verify_chain_at_time(self, certificate: Any, timestamp_result: Any) -> list[Any]:
            chain: list[Any] = super()._verify_chain_at_time(certificate, timestamp_result)
            # sigstore allows expired CAs; the CA must have been valid at this verified time.
            validity.check_ca(self._trusted_root._inner, chain, timestamp_result.time)
            return chain

        def _establish_time(self, bundle: Bundle) -> list[Any]:
            inner = bundle.log_entry._inner
            kind = inner.kind_version
            if kind.kind == "intoto" and kind.version == "0.0.2":
                times: list[Any] = []
                if bundle.verification_material.timestamp_verification_data:
                    times.extend(self._verify_timestamp_authority(bundle))
                if inner.integrated_time and inner.inclusion_promise:
                    times.append(
                        TimestampVerificationResult(
                            source=TimestampSource.TRANSPARENCY_SERVICE,
                            time=datetime.fromtimestamp(inner.integrated_time, tz=UTC),
                        )
                    )
            else:
                times = super()._establish_time(bundle)
            self.times = times
            return times

        def verify_dsse(self, bundle: Bundle, policy: Any) -> tuple[str, bytes]:
            kind = bundle.log_entry._inner.kind_version
            if not (kind.kind == "intoto" and kind.version == "0.0.2"):
                result: tuple[str, bytes] = super().verify_dsse(bundle, policy)
                return result
            self._verify_common_signing_cert(bundle, policy)
            envelope = bundle._dsse_envelope
            if envelope is None:
                raise VerificationError("the bundle holds no DSSE envelope")
            from cryptography.hazmat.primitives.asymmetric import ec

            key = bundle.signing_certificate.public_key()
            if not isinstance(key, ec.EllipticCurvePublicKey):
                raise VerificationError("expected an ECDSA signing certificate")
            verify_dsse_signature(key, envelope)
            _check_intoto_entry(bundle)
            return (envelope._inner.payload_type, envelope._inner.payload)

    return _Verifier


def _check_intoto_entry(bundle: Bundle) -> None:
    """The `intoto/0.0.2` entry must log this envelope: its payload hash and signatures."""
    import json

    from cryptography.hazmat.primitives.serialization import Encoding

    envelope = bundle._dsse_envelope
    assert envelope is not None
    try:
        body = json.loads(bundle.log_entry._inner.canonicalized_body)
        content = body["spec"]["content"]
        payload_hash = content["payloadHash"]
        logged = content["envelope"]["signatures"]
    except (ValueError, KeyError, TypeError):
        raise VerificationError("the intoto log entry has no payload hash or signatures") from None
    digest = hashlib.sha256(envelope._inner.payload).hexdigest()
    if payload_hash != {"algorithm": "sha256", "value": digest}:
        raise VerificationError("the log entry's payload hash is not the envelope payload's")
    pem = bundle.signing_certificate.public_bytes(Encoding.PEM)
    expected = [(base64.b64encode(s.sig).decode(), pem.strip()) for s in envelope._inner.signatures]
    found = []
    for item in logged if isinstance(logged, list) else []:
        try:
            sig = base64.b64decode(item["sig"]).decode()
            key = base64.b64decode(item["publicKey"]).strip()
        except (KeyError, TypeError, ValueError):
            raise VerificationError("the log entry's signatures are malformed") from None
        found.append((sig, key))
    if sorted(found) != sorted(expected):
        raise VerificationError("the log entry's signatures are not the envelope's")


def _sigstore_bundle(document: dict[str, Any]) -> Bundle:
    """`Bundle.from_json` of the document, fed the already parsed JSON.

    The document was read by the strict reader (duplicate keys, depth); `sigstore`'s
    models validate it as it is instead of parsing it a second time. Strict validation of
    Python values accepts no JSON value that strict JSON validation refuses, and builds
    the same model from it; it refuses an enum given as a string (a message signature's
    digest algorithm), so those bundles, and anything refused, take the JSON route and
    get `sigstore`'s own result or error.
    """
    from sigstore.models import Bundle
    from sigstore_models.bundle.v1 import Bundle as BundleModel

    if "messageSignature" not in document:
        try:
            inner = BundleModel.model_validate(document)
        except ValueError:
            pass
        else:
            return Bundle(inner)  # what `Bundle.from_json` does after parsing
    import json

    return Bundle.from_json(json.dumps(document))


def _leaf_der(bundle: Bundle) -> bytes:
    """The DER of the signing certificate, as the bundle carries it (what `sigstore`
    loaded `bundle.signing_certificate` from: v0.3's certificate, or the chain's first)."""
    material = bundle.verification_material._inner
    if material.certificate is not None:
        return bytes(material.certificate.raw_bytes)
    assert material.x509_certificate_chain is not None  # Bundle() checked it
    return bytes(material.x509_certificate_chain.certificates[0].raw_bytes)


class BundleVerifier:
    """Verifies bundles against a list of trusted roots (the first that verifies wins)."""

    def __init__(self, roots: Sequence[Root]) -> None:
        if not roots:
            raise AttestationError("--trusted-root", "expected at least one trusted root")
        self.roots = list(roots)
        self._verifiers: dict[int, Any] = {}

    def _verifier(self, index: int) -> Any:
        verifier = self._verifiers.get(index)
        if verifier is None:
            cls = _sigstore_verifier_class()
            try:
                verifier = cls(trusted_root=self.roots[index].load())
            except AttestationError:
                raise
            except Exception as error:
                raise AttestationError(
                    self.roots[index].origin, f"unusable trusted root: {_short(error)}"
                ) from None
            self._verifiers[index] = verifier
        return verifier

    def load(self, document: dict[str, Any], where: str) -> Bundle:
        """The bundle as `sigstore` reads it; a malformed bundle is unusable input."""
        media_type = document.get("mediaType")
        if media_type not in BUNDLE_MEDIA_TYPES:
            raise AttestationError(
                f"{where}: $.mediaType",
                f"expected a Sigstore bundle media type (v0.1, v0.2, v0.3), found {media_type!r}",
            )
        try:
            return _sigstore_bundle(document)
        except Exception as error:
            raise AttestationError(where, f"unusable Sigstore bundle: {_short(error)}") from None

    def verify(
        self,
        document: dict[str, Any],
        where: str,
        *,
        artifact_sha256: bytes | None = None,
    ) -> VerifiedSignature:
        """Verify one bundle; raises VerificationError when no trusted root verifies it."""
        bundle = self.load(document, where)
        errors = []
        for index in range(len(self.roots)):
            verifier = self._verifier(index)
            try:
                return self._verify_with(
                    verifier, bundle, document, where, index=index, artifact_sha256=artifact_sha256
                )
            except VerificationError as error:
                errors.append(f"{self.roots[index].name}: {_short(error)}")
            except Exception as error:  # sigstore's own VerificationError and friends
                errors.append(f"{self.roots[index].name}: {_short(error)}")
        raise VerificationError(
            f"{where}: the Sigstore bundle did not verify ({'; '.join(errors)})"
        )

    def _verify_with(
        self,
        verifier: Any,
        bundle: Bundle,
        document: dict[str, Any],
        where: str,
        *,
        index: int,
        artifact_sha256: bytes | None,
    ) -> VerifiedSignature:
        root = verifier._trusted_root._inner
        # The Rekor key at the integrated time, and the proof's size bound to its checkpoint.
        validity.check_log_entry(root, bundle.log_entry._inner)
        envelope = document.get("dsseEnvelope")
        payload_type = payload = message = None
        if isinstance(envelope, dict):
            payload_type, payload = verifier.verify_dsse(bundle, _AnyIdentity())
        else:
            if artifact_sha256 is None:
                raise VerificationError("a message-signature bundle needs the artifact's sha256")
            from sigstore.hashes import Hashed
            from sigstore_models.common.v1 import HashAlgorithm

            verifier.verify_artifact(
                Hashed(algorithm=HashAlgorithm.SHA2_256, digest=artifact_sha256),
                bundle,
                _AnyIdentity(),
            )
            message = ("sha256", artifact_sha256.hex())
        certificate = bundle.signing_certificate
        validity.check_sct(root, certificate)  # the CT log key at the SCT's time
        inner = bundle.log_entry._inner
        proof = (
            LogProof.INCLUSION_PROOF
            if inner.inclusion_proof is not None and inner.inclusion_proof.checkpoint
            else LogProof.INCLUSION_PROMISE
        )
        times = tuple(
            VerifiedTime(
                TimeSource.TIMESTAMP_AUTHORITY
                if t.source.name == "TIMESTAMP_AUTHORITY"
                else TimeSource.TRANSPARENCY_LOG,
                t.time,
            )
            for t in getattr(verifier, "times", [])
        )
        return VerifiedSignature(
            where=where,
            media_type=str(document["mediaType"]),
            payload_type=payload_type,
            payload=payload,
            message_digest=message,
            identity=identity_of(certificate),
            certificate_sha256=hashlib.sha256(_leaf_der(bundle)).hexdigest(),
            times=times,
            log_proof=proof,
            log_index=int(inner.log_index) if inner.log_index is not None else None,
            trusted_root=self.roots[index].name,
            envelope=envelope if isinstance(envelope, dict) else None,
        )
