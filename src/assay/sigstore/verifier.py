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
import contextlib
import enum
import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final, cast

from assay import protocol
from assay.errors import AttestationError, VerificationError
from assay.sigstore import validity
from assay.sigstore._json import schema_error
from assay.sigstore.identity import CertificateIdentity, identity_of
from assay.sigstore.roots import Root

if TYPE_CHECKING:
    from cryptography import x509
    from sigstore.models import Bundle

BUNDLE_MEDIA_TYPES: Final = protocol.BUNDLE_VERSIONS


INTOTO_VERSIONS: Final = ("0.0.1", "0.0.2")
"""Rekor `intoto` entries verified as slsa-verifier and cosign verify them."""


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
    NO_LOG = "no-log"
    """The bundle has no log entry and the trusted root that verified it keeps no
    transparency log (GitHub's own instance): RFC 3161 timestamps stand for the log."""


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
                "checked": self.log_proof not in (LogProof.WAIVED, LogProof.NO_LOG),
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
            keyring = self._parsed_once("ct", self._inner.ctlogs, purpose, super().ct_keyring)
            return cast(CTKeyring, keyring)

        def rekor_keyring(self, purpose: KeyringPurpose) -> RekorKeyring:
            keyring = self._parsed_once("rekor", self._inner.tlogs, purpose, super().rekor_keyring)
            return cast(RekorKeyring, keyring)

        def _parsed_once(
            self, kind: str, logs: Any, purpose: KeyringPurpose, parse: Callable[..., Any]
        ) -> Any:
            """The keyring of the keys selected now, parsed only the first time."""
            cache_key = (kind, purpose, self._selected(logs, purpose))
            keyring = self._keyrings.get(cache_key)
            if keyring is None:
                keyring = parse(purpose)
                self._keyrings[cache_key] = keyring
            return keyring

        def _selected(self, logs: Any, purpose: KeyringPurpose) -> tuple[int, ...]:
            return tuple(id(key) for key in self._get_tlog_keys(logs, purpose))

    class _Verifier(Verifier):
        """sigstore's Verifier, also accepting Rekor `intoto/0.0.2` entries; records times."""

        times: list[Any]

        def __init__(self, *, trusted_root: TrustedRoot) -> None:
            parsed = _ParsedKeyrings(trusted_root._inner)
            self.keeps_log = bool(parsed._inner.tlogs)
            if self.keeps_log:
                super().__init__(trusted_root=parsed)
            else:
                # An instance without a transparency log (GitHub's): `sigstore`'s
                # constructor wants a Rekor URL for online look-ups, never made here.
                self._fulcio_certificate_chain = parsed.get_fulcio_certs()
                self._trusted_root = parsed

        def _verify_chain_at_time(self, certificate: Any, timestamp_result: Any) -> list[Any]:
            chain: list[Any] = super()._verify_chain_at_time(certificate, timestamp_result)
            # sigstore allows expired CAs; the CA must have been valid at this verified time.
            validity.check_ca(self._trusted_root._inner, chain, timestamp_result.time)
            return chain

        def _establish_time(self, bundle: Bundle) -> list[Any]:
            if _logged(bundle) is None:
                self.times = (
                    self._verify_timestamp_authority(bundle)
                    if bundle.verification_material.timestamp_verification_data
                    else []
                )
                return self.times
            inner = bundle.log_entry._inner
            kind = inner.kind_version
            if kind.kind == "intoto" and kind.version in INTOTO_VERSIONS:
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

        def _verify_unlogged(self, bundle: Bundle, policy: Any) -> None:
            """Steps (0)-(3) and (6) of `sigstore`'s verification for a bundle without a
            log entry, which only a trusted root without transparency logs accepts."""
            from cryptography.x509 import ExtendedKeyUsage, KeyUsage
            from cryptography.x509.oid import ExtendedKeyUsageOID
            from sigstore._internal.sct import verify_sct
            from sigstore._internal.trust import KeyringPurpose

            if self.keeps_log:
                raise VerificationError(
                    "the bundle has no transparency-log entry, which this trusted root's"
                    " instance requires"
                )
            times = self._establish_time(bundle)
            if not times:
                raise VerificationError(
                    "no verified time: the bundle has no log entry and no timestamp of a"
                    " trusted timestamp authority"
                )
            certificate = bundle.signing_certificate
            chain: list[Any] = []
            for time in times:
                chain = self._verify_chain_at_time(certificate, time)
            if self._trusted_root._inner.ctlogs:
                verify_sct(certificate, chain, self._trusted_root.ct_keyring(KeyringPurpose.VERIFY))
            usage = certificate.extensions.get_extension_for_class(KeyUsage).value
            extended = certificate.extensions.get_extension_for_class(ExtendedKeyUsage).value
            if not usage.digital_signature or ExtendedKeyUsageOID.CODE_SIGNING not in extended:
                raise VerificationError("the signing certificate is not for code signing")
            policy.verify(certificate)
            for time in times:
                valid = certificate.not_valid_before_utc <= time.time
                if not (valid and time.time <= certificate.not_valid_after_utc):
                    raise VerificationError(
                        f"the signing certificate was not valid at {time.time.isoformat()}"
                    )

        def verify_artifact(self, input_: Any, bundle: Bundle, policy: Any) -> None:
            if _logged(bundle) is not None:
                super().verify_artifact(input_, bundle, policy)
                return
            from cryptography.exceptions import InvalidSignature
            from cryptography.hazmat.primitives.asymmetric import ec
            from cryptography.hazmat.primitives.asymmetric.utils import Prehashed
            from cryptography.hazmat.primitives.hashes import SHA256

            self._verify_unlogged(bundle, policy)
            signature = bundle._inner.message_signature
            if signature is None:
                raise VerificationError("the bundle holds no message signature")
            digest = input_.digest
            if signature.message_digest is not None and signature.message_digest.digest != digest:
                raise VerificationError("the bundle's message digest is not the artifact's")
            key = bundle.signing_certificate.public_key()
            if not isinstance(key, ec.EllipticCurvePublicKey):
                raise VerificationError("expected an ECDSA signing certificate")
            try:
                key.verify(signature.signature, digest, ec.ECDSA(Prehashed(SHA256())))
            except InvalidSignature:
                raise VerificationError("the signature does not verify for the artifact") from None

        def verify_dsse(self, bundle: Bundle, policy: Any) -> tuple[str, bytes]:
            if _logged(bundle) is None:
                self._verify_unlogged(bundle, policy)
                return _verify_envelope_signature(bundle)
            kind = bundle.log_entry._inner.kind_version
            if not (kind.kind == "intoto" and kind.version in INTOTO_VERSIONS):
                result: tuple[str, bytes] = super().verify_dsse(bundle, policy)
                return result
            self._verify_common_signing_cert(bundle, policy)
            verified = _verify_envelope_signature(bundle)
            _check_intoto_entry(bundle)
            return verified

    return _Verifier


def _logged(bundle: Bundle) -> Any:
    """The bundle's log entry, or None for a bundle of an instance without a log."""
    return getattr(bundle, "_log_entry", None)


def _verify_envelope_signature(bundle: Bundle) -> tuple[str, bytes]:
    """The DSSE signature over the PAE, with the signing certificate's key."""
    from cryptography.hazmat.primitives.asymmetric import ec
    from sigstore.dsse import _verify as verify_dsse_signature

    envelope = bundle._dsse_envelope
    if envelope is None:
        raise VerificationError("the bundle holds no DSSE envelope")
    key = bundle.signing_certificate.public_key()
    if not isinstance(key, ec.EllipticCurvePublicKey):
        raise VerificationError("expected an ECDSA signing certificate")
    verify_dsse_signature(key, envelope)
    return (envelope._inner.payload_type, envelope._inner.payload)


def _check_intoto_entry(bundle: Bundle) -> None:
    """The `intoto` entry must log this envelope: its payload hash, and its signatures
    (0.0.2) or its signer's certificate (0.0.1, cosign's)."""
    from cryptography.hazmat.primitives.serialization import Encoding

    envelope = bundle._dsse_envelope
    assert envelope is not None
    pem = bundle.signing_certificate.public_bytes(Encoding.PEM).strip()
    digest = hashlib.sha256(envelope._inner.payload).hexdigest()
    payload_hash, logged_key, logged = _intoto_content(bundle)
    if payload_hash != {"algorithm": "sha256", "value": digest}:
        raise VerificationError("the log entry's payload hash is not the envelope payload's")
    if logged_key is not None:
        if logged_key != pem:
            raise VerificationError("the log entry's certificate is not the signing certificate")
        return
    expected = [(base64.b64encode(s.sig).decode(), pem) for s in envelope._inner.signatures]
    if sorted(_intoto_signatures(logged)) != sorted(expected):
        raise VerificationError("the log entry's signatures are not the envelope's")


def _intoto_content(bundle: Bundle) -> tuple[Any, bytes | None, Any]:
    """The `intoto` entry's payload hash, and the certificate (0.0.1) or the signatures
    (0.0.2) it logs."""
    import json

    try:
        body = json.loads(bundle.log_entry._inner.canonicalized_body)
        content = body["spec"]["content"]
        if body.get("apiVersion") == "0.0.1":
            # cosign's intoto/0.0.1: the payload hash and the one signer's certificate.
            key = base64.b64decode(body["spec"]["publicKey"]).strip()
            return content["payloadHash"], key, None
        return content["payloadHash"], None, content["envelope"]["signatures"]
    except (ValueError, KeyError, TypeError):
        raise VerificationError("the intoto log entry has no payload hash or signatures") from None


def _intoto_signatures(logged: Any) -> list[tuple[str, bytes]]:
    """The (signature, certificate) pairs an `intoto` 0.0.2 entry logs."""
    found = []
    for item in logged if isinstance(logged, list) else []:
        try:
            sig = base64.b64decode(item["sig"]).decode()
            key = base64.b64decode(item["publicKey"]).strip()
        except (KeyError, TypeError, ValueError):
            raise VerificationError("the log entry's signatures are malformed") from None
        found.append((sig, key))
    return found


class BundleShapeError(AttestationError):
    """A bundle that is no well-formed Sigstore bundle: names the JSON path."""


def _sigstore_bundle(document: dict[str, Any], where: str) -> Bundle:
    """The bundle as `sigstore`'s models read it, fed the already parsed JSON.

    The document was read by the strict reader (duplicate keys, depth); the models
    validate it as it is instead of parsing it a second time. Strict validation of
    Python values accepts no JSON value that strict JSON validation refuses, and builds
    the same model from it; it refuses an enum given as a string (a message signature's
    digest algorithm), so those bundles, and anything refused, take the JSON route. A
    refusal names the JSON path and what was expected (`_schema_error`), in assay's words.
    """
    import json

    from pydantic import ValidationError
    from sigstore_models.bundle.v1 import Bundle as BundleModel

    cls = _bundle_class()
    document, unproven = _fill_optional(document)
    inner = None
    if "messageSignature" not in document:
        with contextlib.suppress(ValueError):
            inner = BundleModel.model_validate(document)
    if inner is None:
        try:
            inner = BundleModel.model_validate_json(json.dumps(document))
        except ValidationError as error:
            raise BundleShapeError(*schema_error(error, where)) from None
    for index in unproven:
        entry: Any = inner.verification_material.tlog_entries[index]
        entry.inclusion_proof = None
    try:
        return cast("Bundle", cls(inner))
    except _Invalid as error:
        raise BundleShapeError(f"{where}: {error.path}", f"expected {error.expected}") from None


_NO_PROOF: Final = {"logIndex": "0", "rootHash": "", "treeSize": "1", "hashes": []}


def _fill_optional(document: dict[str, Any]) -> tuple[dict[str, Any], list[int]]:
    """The document with what the models require and the bundle format does not.

    Protobuf JSON leaves an empty repeated field out (`tlogEntries` of a bundle from an
    instance without a log), and a v0.1 entry may carry only its promise: such an entry
    is validated with a stand-in proof that is removed again (the indices returned), so
    the bundle's reader (`_bundle_class`) sees the entry as it came.
    """
    material = document.get("verificationMaterial")
    if not isinstance(material, dict):
        return document, []
    entries = material.get("tlogEntries", [])
    unproven = _unproven_entries(entries)
    if "tlogEntries" in material and not unproven:
        return document, []
    filled = list(entries)  # a list here: other values have no unproven entries
    for index in unproven:
        filled[index] = {**filled[index], "inclusionProof": _NO_PROOF}
    return {**document, "verificationMaterial": {**material, "tlogEntries": filled}}, unproven


def _unproven_entries(entries: object) -> list[int]:
    """The indices of the log entries that carry no inclusion proof."""
    return [
        i
        for i, entry in enumerate(entries if isinstance(entries, list) else [])
        if isinstance(entry, dict) and entry.get("inclusionProof") is None
    ]


_BUNDLE_CLASS: list[type[Any]] = []


def _bundle_class() -> type[Any]:
    """`sigstore`'s Bundle with assay's reading of the bundle's invariants.

    The same invariants as `sigstore`'s (`Bundle._verify`), each refusal naming its JSON
    path, and two bundles `sigstore` refuses on reading, accepted here as slsa-verifier
    and gh accept them, and verified by `BundleVerifier`:

    - a v0.1 bundle whose log entry has its signed promise but no inclusion proof
      (slsa-github-generator's container-based builder): verified by the promise;
    - a v0.2+ bundle without log entries whose time comes from RFC 3161 timestamps
      (GitHub's own instance): verified only with a trusted root that keeps no log.
    """
    if _BUNDLE_CLASS:
        return _BUNDLE_CLASS[0]
    from cryptography.x509 import load_der_x509_certificate
    from sigstore._utils import cert_is_leaf
    from sigstore.models import Bundle as SigstoreBundle
    from sigstore.models import TransparencyLogEntry

    _PromisedEntry = promised_entry_class()

    class _Bundle(SigstoreBundle):
        def _verify(self) -> None:
            inner = self._inner
            material = inner.verification_material
            version = BUNDLE_MEDIA_TYPES.get(inner.media_type)
            if version is None:
                raise _Invalid("$.mediaType", "a Sigstore bundle media type (v0.1, v0.2, v0.3)")
            base = "$.verificationMaterial"
            if version == "0.3":
                if material.certificate is None:
                    raise _Invalid(f"{base}.certificate", "the signing certificate")
                der, path = material.certificate.raw_bytes, f"{base}.certificate.rawBytes"
            else:
                chain = material.x509_certificate_chain
                path = f"{base}.x509CertificateChain.certificates"
                if chain is None or not chain.certificates:
                    raise _Invalid(path, "the signing certificate first")
                der, path = chain.certificates[0].raw_bytes, f"{path}[0].rawBytes"
            try:
                leaf = load_der_x509_certificate(bytes(der))
                is_leaf = cert_is_leaf(leaf)
            except Exception:
                raise _Invalid(path, "a DER X.509 certificate") from None
            if not is_leaf:
                raise _Invalid(path, "a signing (leaf) certificate, found a CA certificate")
            self._signing_certificate = leaf
            entries = material.tlog_entries or []
            stamps = material.timestamp_verification_data
            if not entries and version != "0.1" and stamps and stamps.rfc3161_timestamps:
                _check_timestamps(stamps.rfc3161_timestamps, base)
                self._log_entry = cast(Any, None)
                return
            if len(entries) != 1:
                raise _Invalid(
                    f"{base}.tlogEntries",
                    f"exactly one transparency-log entry (or, without one, RFC 3161"
                    f" timestamps in a v0.2+ bundle), found {len(entries)}",
                )
            entry = entries[0]
            at = f"{base}.tlogEntries[0]"
            if entry.kind_version.version not in ("0.0.1", "0.0.2"):
                raise _Invalid(
                    f"{at}.kindVersion.version",
                    f"0.0.1 or 0.0.2, found {entry.kind_version.version!r}",
                )
            proof = entry.inclusion_proof
            has_proof = proof is not None and bool(proof.checkpoint and proof.checkpoint.envelope)
            if version == "0.1":
                if entry.inclusion_promise is None or not entry.integrated_time:
                    raise _Invalid(
                        f"{at}.inclusionPromise", "the log's signed promise (a v0.1 bundle)"
                    )
                self._log_entry = (
                    TransparencyLogEntry(entry) if has_proof else _PromisedEntry(entry)
                )
                return
            if not has_proof:
                raise _Invalid(
                    f"{at}.inclusionProof.checkpoint", "an inclusion proof with its checkpoint"
                )
            if entry.inclusion_promise is None and not (stamps and stamps.rfc3161_timestamps):
                raise _Invalid(
                    f"{at}.inclusionPromise", "the log's signed promise or RFC 3161 timestamps"
                )
            if entry.inclusion_promise is None and stamps is not None:
                # Without a promise the time comes from the timestamps: `sigstore` decodes
                # them on reading, so an unreadable one is refused here too.
                _check_timestamps(stamps.rfc3161_timestamps, base)
            self._log_entry = TransparencyLogEntry(entry)

    _BUNDLE_CLASS.append(_Bundle)
    return _Bundle


def _check_timestamps(timestamps: Any, base: str) -> None:
    """Each RFC 3161 timestamp of the bundle decodes as a timestamp response."""
    from rfc3161_client import decode_timestamp_response  # (with sigstore: read lazily)

    for index, stamp in enumerate(timestamps):
        try:
            decode_timestamp_response(stamp.signed_timestamp)
        except ValueError:
            raise _Invalid(
                f"{base}.timestampVerificationData.rfc3161Timestamps[{index}].signedTimestamp",
                "an RFC 3161 timestamp response",
            ) from None


_PROMISED_CLASS: list[type[Any]] = []


def promised_entry_class() -> type[Any]:
    """`sigstore`'s log entry for an entry with its signed promise and no inclusion proof
    (v0.1 bundles): verified by the promise alone, as slsa-verifier verifies it. The
    caller has checked that the promise and the integrated time are there."""
    if _PROMISED_CLASS:
        return _PROMISED_CLASS[0]
    from sigstore.models import TransparencyLogEntry

    class _PromisedEntry(TransparencyLogEntry):
        def _validate(self) -> None:
            return None

        def _verify(self, keyring: Any) -> None:
            self._verify_set(keyring)

    _PROMISED_CLASS.append(_PromisedEntry)
    return _PromisedEntry


def proofless_entry_model(entry: dict[str, Any]) -> Any:
    """The models' log entry for a v0.1 entry whose inclusion proof is missing or has no
    checkpoint (the proof is dropped: only the promise counts)."""
    from sigstore_models.rekor.v1 import TransparencyLogEntry as EntryModel

    model: Any = EntryModel.model_validate_json(json.dumps({**entry, "inclusionProof": _NO_PROOF}))
    model.inclusion_proof = None
    return model


class _Invalid(Exception):
    """A broken invariant of the bundle: the JSON path and what was expected there."""

    def __init__(self, path: str, expected: str) -> None:
        super().__init__(path, expected)
        self.path = path
        self.expected = expected


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
            return _sigstore_bundle(document, where)
        except AttestationError:
            raise
        except Exception as error:  # a timestamp or key the models could not decode
            raise BundleShapeError(
                f"{where}: $.verificationMaterial",
                f"expected decodable verification material ({type(error).__name__})",
            ) from None

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
        logged = _logged(bundle)
        if logged is not None:
            # The Rekor key at the integrated time, and the proof's size bound to its checkpoint.
            validity.check_log_entry(root, logged._inner)
        envelope = document.get("dsseEnvelope")
        if isinstance(envelope, dict):
            payload_type, payload = verifier.verify_dsse(bundle, _AnyIdentity())
            message = None
        else:
            payload_type = payload = None
            message = _verify_message(verifier, bundle, artifact_sha256)
        certificate = bundle.signing_certificate
        validity.check_sct(root, certificate)  # the CT log key at the SCT's time
        inner = logged._inner if logged is not None else None
        return VerifiedSignature(
            where=where,
            media_type=str(document["mediaType"]),
            payload_type=payload_type,
            payload=payload,
            message_digest=message,
            identity=identity_of(certificate),
            certificate_sha256=hashlib.sha256(_leaf_der(bundle)).hexdigest(),
            times=_verified_times(verifier),
            log_proof=_log_proof(inner),
            log_index=int(inner.log_index) if inner and inner.log_index is not None else None,
            trusted_root=self.roots[index].name,
            envelope=envelope if isinstance(envelope, dict) else None,
        )


def _verify_message(
    verifier: Any, bundle: Bundle, artifact_sha256: bytes | None
) -> tuple[str, str]:
    """Verify a message-signature bundle over the artifact's sha256; the digest signed."""
    if artifact_sha256 is None:
        raise VerificationError("a message-signature bundle needs the artifact's sha256")
    from sigstore.hashes import Hashed
    from sigstore_models.common.v1 import HashAlgorithm

    verifier.verify_artifact(
        Hashed(algorithm=HashAlgorithm.SHA2_256, digest=artifact_sha256),
        bundle,
        _AnyIdentity(),
    )
    return ("sha256", artifact_sha256.hex())


def _log_proof(inner: Any) -> LogProof:
    """What proves the (verified) log entry's inclusion, if there is one."""
    if inner is None:
        return LogProof.NO_LOG
    if inner.inclusion_proof is not None and inner.inclusion_proof.checkpoint:
        return LogProof.INCLUSION_PROOF
    return LogProof.INCLUSION_PROMISE


def _verified_times(verifier: Any) -> tuple[VerifiedTime, ...]:
    """The times the verifier established, each with what vouched for it."""
    return tuple(
        VerifiedTime(_TIME_SOURCES.get(t.source.name, TimeSource.TRANSPARENCY_LOG), t.time)
        for t in getattr(verifier, "times", [])
    )


_TIME_SOURCES = {"TIMESTAMP_AUTHORITY": TimeSource.TIMESTAMP_AUTHORITY}
