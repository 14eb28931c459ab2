"""One reader for every VEX file: plain, or signed, in whatever wrapping.

    trust = VexTrust(signers=(TrustedSigner("vendor", keys=(public_key,)),))
    document = read_vex(data, "vendor.vex.json", trust)
    document.format, document.signature, document.statements

Accepted: an OpenVEX, CycloneDX or CSAF `csaf_vex` document as JSON (CycloneDX as XML
too, `assay.vex.cyclonedx_xml`); the same as the
predicate of an in-toto statement; such a statement (or the document itself) as the
payload of a DSSE envelope or of a Sigstore bundle. A signed file counts only once its
signature verifies against a trusted signer (keys for an envelope, a certificate
identity for a bundle) and is refused otherwise, naming why; the payload is parsed only
after it verified. An unsigned file is read, and its `signature` is `None`: whether it
counts is the caller's decision (on the command line it does; a policy can require
signers). Duplicate keys, nesting deeper than `MAX_DEPTH` and files larger than
`MAX_VEX_BYTES` are refused; so are YAML and anything that is not VEX.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from assay import protocol
from assay._json_strict import parse_checked, problem_reason, type_name
from assay.vex.csaf import is_csaf, read_csaf
from assay.vex.cyclonedx import is_cyclonedx, read_cyclonedx
from assay.vex.model import Signature, VexDocument, VexError, VexStatement
from assay.vex.openvex import is_openvex, read_openvex

if TYPE_CHECKING:
    from assay.dsse import Envelope, Verifier
    from assay.sigstore.identity import CertificateIdentity
    from assay.sigstore.verifier import BundleVerifier

__all__ = ["MAX_DEPTH", "MAX_VEX_BYTES", "TrustedSigner", "VexTrust", "read_vex"]

MAX_VEX_BYTES: Final = 32 * 1024 * 1024
"""A VEX file larger than this is refused (Red Hat's largest CSAF VEX files are ~10 MB)."""
MAX_DEPTH: Final = 64
"""Containers nested deeper than this are refused."""

_BUNDLE_PREFIX: Final = protocol.BUNDLE_PREFIX
_STATEMENT_PREFIX: Final = protocol.STATEMENT_PREFIX


@dataclass(frozen=True, slots=True)
class TrustedSigner:
    """Who may sign VEX: public keys (DSSE) and/or a certificate identity (Sigstore)."""

    name: str
    keys: tuple[Verifier, ...] = ()
    identity: Callable[[CertificateIdentity], bool] | None = None
    """Whether a verified certificate's identity is this signer's."""
    describe: str = ""


@dataclass(frozen=True, slots=True)
class VexTrust:
    """The signers a signed VEX file may verify against, and the Sigstore roots."""

    signers: tuple[TrustedSigner, ...] = ()
    bundles: BundleVerifier | None = field(default=None, compare=False)


def _parse(data: bytes | str, where: str) -> Any:
    try:
        value, problem = parse_checked(data, MAX_DEPTH - 1)
    except UnicodeDecodeError as error:
        raise VexError(where, f"expected UTF-8 JSON: {error}") from None
    except json.JSONDecodeError as error:
        raise VexError(
            where,
            f"expected a JSON VEX document (OpenVEX, CycloneDX, CSAF), found invalid JSON "
            f"(line {error.lineno} column {error.colno}: {error.msg})",
        ) from None
    except RecursionError:
        raise VexError(where, f"expected nesting at most {MAX_DEPTH} deep") from None
    if problem is not None:
        path, kind = problem
        raise VexError(f"{where}: {path}", problem_reason(kind, MAX_DEPTH))
    return value


def read_vex(data: bytes, name: str, trust: VexTrust | None = None, first: int = 0) -> VexDocument:
    """The VEX document of a file's bytes (see the module docstring); statements are
    numbered from `first` (their order among all statements read)."""
    if len(data) > MAX_VEX_BYTES:
        raise VexError(name, f"expected at most {MAX_VEX_BYTES} bytes, found {len(data)}")
    digest = hashlib.sha256(data).hexdigest()
    if not data.strip():
        raise VexError(name, "expected a JSON VEX document, found an empty file")
    plain = _plain_document(data, name)
    if plain is not None:
        return _document(plain, name, digest=digest, signature=None, notes=(), first=first)
    document, signature, notes = _wrapped_document(data, name, trust or VexTrust())
    return _document(document, name, digest=digest, signature=signature, notes=notes, first=first)


def _plain_document(data: bytes, name: str) -> dict[str, Any] | None:
    """The VEX document a file holds as it is, or None when the file wraps it (a DSSE
    envelope, a Sigstore bundle, an in-toto statement, or JSON Lines of them)."""
    from assay.vex.cyclonedx_xml import cyclonedx_xml_document, is_cyclonedx_xml

    if is_cyclonedx_xml(data):
        return cyclonedx_xml_document(data, name)
    try:
        value = _parse(data, name)
    except VexError:
        if not _json_lines(data):
            raise
        return None  # JSON Lines: attestations, one a line
    if not isinstance(value, dict):
        raise VexError(f"{name}: $", f"expected a JSON object, found {type_name(value)}")
    return None if _wrapped(value) else value


def _wrapped_document(
    data: bytes, name: str, trust: VexTrust
) -> tuple[dict[str, Any], Signature | None, tuple[str, ...]]:
    """The VEX document inside a file's one attestation, the signature that verified it
    and notes on how it was read."""
    record = _one_record(data, name)
    verify = _SIGNED_KINDS.get(record.kind)
    if verify is None:
        document = _unwrap_statement(record.document, record.label)
        return document, None, ("an unsigned in-toto statement",)
    payload, signature = verify(record.document, record.label, trust)
    document = _unwrap_statement(_payload_document(payload, record.label), record.label)
    return document, signature, ()


def _json_lines(data: bytes) -> bool:
    lines = [line for line in data.splitlines() if line.strip()]
    return len(lines) > 1 and lines[0].lstrip().startswith(b"{")


def _wrapped(value: Mapping[str, Any]) -> bool:
    """A DSSE envelope, a Sigstore bundle or an in-toto statement (not a VEX itself)."""
    media_type = value.get("mediaType")
    return (
        (isinstance(media_type, str) and media_type.startswith(_BUNDLE_PREFIX))
        or ("payloadType" in value and "payload" in value)
        or _is_statement(value)
    )


def _one_record(data: bytes, name: str) -> Any:
    """The one attestation of a wrapped file, read by the reader of attestation files."""
    from assay.attestation.files import parse_file
    from assay.errors import AttestationError

    try:
        records = [r for r in parse_file(data, name) if r.kind != "unknown"]
    except AttestationError as error:
        raise VexError(error.where, error.reason) from None
    if len(records) != 1:
        raise VexError(name, f"expected one VEX attestation, found {len(records)}")
    return records[0]


def _is_statement(value: Mapping[str, Any]) -> bool:
    kind = value.get("_type")
    return isinstance(kind, str) and kind.startswith(_STATEMENT_PREFIX)


def _unwrap_statement(value: Mapping[str, Any], name: str) -> dict[str, Any]:
    if not _is_statement(value):
        return dict(value)
    predicate = value.get("predicate")
    if not isinstance(predicate, dict):
        raise VexError(
            f"{name}: $.predicate", f"expected a VEX document, found {type_name(predicate)}"
        )
    return predicate


def _payload_document(payload: bytes, name: str) -> dict[str, Any]:
    value = _parse(payload, f"{name}: payload")
    if not isinstance(value, dict):
        raise VexError(f"{name}: payload", f"expected a JSON object, found {type_name(value)}")
    return value


def _unverifiable(wrapper: str, trusted: str) -> str:
    return (
        f"the {wrapper} is signed, and no trusted {trusted} was given to verify it: "
        "a signed VEX document counts only once its signature verifies"
    )


def _key_signature(envelope: Envelope, keyed: list[TrustedSigner]) -> Signature | None:
    """The first trusted signer whose keys verify the envelope, as a signature."""
    from assay.dsse import check_signatures, key_fingerprint

    for signer in keyed:
        check = check_signatures(envelope, list(signer.keys))
        if check.verified:
            return Signature(signer.name, "key", key_fingerprint(check.signed_by[0]))
    return None


def _envelope(value: dict[str, Any], name: str) -> Envelope:
    """The DSSE envelope, its problems told as the VEX file's."""
    from assay.dsse import Envelope
    from assay.errors import AttestationError

    try:
        return Envelope.from_dict(value, where=f"{name}: $")
    except AttestationError as error:
        raise VexError(error.where, error.reason) from None


def _from_envelope(value: dict[str, Any], name: str, trust: VexTrust) -> tuple[bytes, Signature]:
    envelope = _envelope(value, name)
    keyed = [s for s in trust.signers if s.keys]
    if not keyed:
        raise VexError(name, _unverifiable("DSSE envelope", "key"))
    signature = _key_signature(envelope, keyed)
    if signature is not None:
        return envelope.payload, signature
    names = ", ".join(s.name for s in keyed)
    raise VexError(
        name,
        f"the DSSE envelope's {len(envelope.signatures)} signature(s) do not verify with "
        f"any trusted key ({names})",
    )


def _verified_bundle(
    bundles: BundleVerifier, value: Mapping[str, Any], name: str
) -> tuple[bytes, CertificateIdentity]:
    """The payload of a bundle verified against the Sigstore roots (it must sign a DSSE
    envelope) and the identity of its certificate."""
    from assay.errors import AttestationError, VerificationError

    try:
        verified = bundles.verify(dict(value), name)
    except AttestationError as error:
        raise VexError(error.where, error.reason) from None
    except VerificationError as error:
        raise VexError(name, str(error)) from None
    if verified.payload is None:
        raise VexError(name, "expected a bundle with a DSSE envelope, found a message signature")
    return verified.payload, verified.identity


def _signer_of(
    identity: CertificateIdentity, identities: list[TrustedSigner]
) -> TrustedSigner | None:
    """The first trusted signer whose identity rule the certificate's identity meets."""
    for signer in identities:
        if signer.identity is not None and signer.identity(identity):
            return signer
    return None


def _from_bundle(value: Mapping[str, Any], name: str, trust: VexTrust) -> tuple[bytes, Signature]:
    identities = [s for s in trust.signers if s.identity is not None]
    if trust.bundles is None or not identities:
        raise VexError(name, _unverifiable("Sigstore bundle", "identity"))
    payload, identity = _verified_bundle(trust.bundles, value, name)
    signer = _signer_of(identity, identities)
    if signer is not None:
        detail = f"{identity.san} ({identity.issuer})"
        return payload, Signature(signer.name, "sigstore", detail)
    raise _untrusted_identity(name, identity, identities)


def _untrusted_identity(
    name: str, identity: CertificateIdentity, identities: list[TrustedSigner]
) -> VexError:
    trusted = ", ".join(s.describe or s.name for s in identities)
    return VexError(
        name,
        f"the Sigstore bundle verified, but its certificate identity {identity.san!r} "
        f"(issuer {identity.issuer!r}) is none of the trusted identities ({trusted})",
    )


_SIGNED_KINDS: Final[
    dict[str, Callable[[dict[str, Any], str, VexTrust], tuple[bytes, Signature]]]
] = {"sigstore-bundle": _from_bundle, "dsse": _from_envelope}
"""How each signed kind of attestation file is verified."""


def _document(
    value: dict[str, Any],
    name: str,
    *,
    digest: str,
    signature: Signature | None,
    notes: tuple[str, ...],
    first: int,
) -> VexDocument:
    kind, read = _format(value, name)
    facts, statements = read(value, name, first)
    return VexDocument(
        name,
        kind,
        str(facts["specVersion"]),
        str(facts["id"]),
        facts["author"],
        facts["timestamp"],
        statements,
        digest,
        signature,
        notes,
        value,
    )


_Read = Callable[[Mapping[str, Any], str, int], tuple[dict[str, Any], tuple[VexStatement, ...]]]
_FORMATS: Final[tuple[tuple[str, Callable[[Mapping[str, Any]], bool], _Read], ...]] = (
    ("openvex", is_openvex, read_openvex),
    ("cyclonedx", is_cyclonedx, read_cyclonedx),
    ("csaf", is_csaf, read_csaf),
)


def _format(value: Mapping[str, Any], name: str) -> tuple[str, _Read]:
    """The format a document is in, and its reader."""
    for kind, recognises, read in _FORMATS:
        if recognises(value):
            return kind, read
    raise VexError(
        f"{name}: $",
        "expected an OpenVEX document (@context https://openvex.dev/ns/...), a CycloneDX "
        "BOM (bomFormat) or a CSAF document (document.csaf_version), found none of them",
    )


def read_vex_files(
    files: Sequence[tuple[str, bytes]], trust: VexTrust | None = None
) -> list[VexDocument]:
    """Several files, their statements numbered in command-line order."""
    documents: list[VexDocument] = []
    first = 0
    for name, data in files:
        document = read_vex(data, name, trust, first)
        first += len(document.statements)
        documents.append(document)
    return documents
