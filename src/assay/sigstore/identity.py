"""The signer identity a Fulcio certificate states, as typed fields.

Fulcio writes the OIDC issuer and, for CI tokens, the build's facts (source repository,
ref, digest, workflow, trigger, runner environment…) into X.509 extensions under
1.3.6.1.4.1.57264.1. This module reads them; it decides nothing.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Final

from cryptography import x509

_FULCIO: Final = "1.3.6.1.4.1.57264.1."

# Extensions 1-6 hold raw UTF-8; 8 and later a DER UTF8String.
_RAW: Final = {
    "1": "issuer_v1",
    "2": "github_workflow_trigger",
    "3": "github_workflow_sha",
    "4": "github_workflow_name",
    "5": "github_workflow_repository",
    "6": "github_workflow_ref",
}
_DER: Final = {
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


@dataclass(frozen=True, slots=True)
class CertificateIdentity:
    """Who signed: the certificate's SAN and issuer, and Fulcio's CI extensions."""

    san: str | None
    issuer: str | None
    build_signer_uri: str | None = None
    build_signer_digest: str | None = None
    runner_environment: str | None = None
    source_repository_uri: str | None = None
    source_repository_digest: str | None = None
    source_repository_ref: str | None = None
    source_repository_identifier: str | None = None
    source_repository_owner_uri: str | None = None
    source_repository_owner_identifier: str | None = None
    build_config_uri: str | None = None
    build_config_digest: str | None = None
    build_trigger: str | None = None
    run_invocation_uri: str | None = None
    source_repository_visibility: str | None = None
    github_workflow_trigger: str | None = None
    github_workflow_sha: str | None = None
    github_workflow_name: str | None = None
    github_workflow_repository: str | None = None
    github_workflow_ref: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """Camel-case keys, unset fields left out."""
        return {_camel(k): v for k, v in asdict(self).items() if v is not None}


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)


def _der_utf8(value: bytes) -> str | None:
    """The text of a DER UTF8String (tag 12), or None when it is not one."""
    header = _der_header(value) if value[:1] == b"\x0c" else None
    if header is None or sum(header) != len(value):
        return None
    try:
        return value[header[0] :].decode("utf-8")
    except UnicodeDecodeError:
        return None


def _der_header(value: bytes) -> tuple[int, int] | None:
    """(where the content starts, its length) from a DER value's length octets (short or
    long form, at most 4 octets of length); None when they are cut short or malformed."""
    if len(value) < 2:
        return None
    length = value[1]
    if not length & 0x80:
        return 2, length
    count = length & 0x7F
    if count == 0 or count > 4 or len(value) < 2 + count:
        return None
    return 2 + count, int.from_bytes(value[2 : 2 + count], "big")


def _san(names: x509.SubjectAlternativeName) -> str | None:
    for kind in (x509.UniformResourceIdentifier, x509.RFC822Name, x509.DNSName):
        values = names.get_values_for_type(kind)
        if values:
            return str(values[0])
    others = names.get_values_for_type(x509.OtherName)
    if others:
        return _der_utf8(others[0].value)
    return None


_SAN_OID: Final = x509.oid.ExtensionOID.SUBJECT_ALTERNATIVE_NAME
_FIELDS: Final = {
    **{x509.ObjectIdentifier(_FULCIO + n): (name, False) for n, name in _RAW.items()},
    **{x509.ObjectIdentifier(_FULCIO + n): (name, True) for n, name in _DER.items()},
}
"""The Fulcio extensions read: OID -> (field, whether the value is a DER UTF8String)."""


def identity_of(certificate: x509.Certificate) -> CertificateIdentity:
    """Read the SAN, the issuer and every Fulcio extension present (one pass)."""
    fields: dict[str, str] = {}
    san: str | None = None
    for extension in certificate.extensions:
        if extension.oid == _SAN_OID:
            san = _san(extension.value)
        elif extension.oid in _FIELDS:
            name, der = _FIELDS[extension.oid]
            text = _extension_text(extension.value, der=der)
            if text is not None:
                fields[name] = text
    issuer_v1 = fields.pop("issuer_v1", None)
    issuer = fields.pop("issuer", issuer_v1)  # the v2 extension wins over the v1 one
    return CertificateIdentity(san=san, issuer=issuer, **fields)


def _extension_text(value: x509.ExtensionType, *, der: bool) -> str | None:
    """A Fulcio extension's text: raw UTF-8 or a DER UTF8String; None when unreadable."""
    if not isinstance(value, x509.UnrecognizedExtension):
        return None
    if der:
        return _der_utf8(value.value)
    try:
        return value.value.decode("utf-8")
    except UnicodeDecodeError:
        return None
