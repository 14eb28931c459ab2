"""Other containers of Sigstore-signed DSSE envelopes, read as bundles.

- PyPI's PEP 740 attestation objects (`{"version": 1, "verification_material":
  {"certificate", "transparency_entries"}, "envelope": {"statement", "signature"}}`) and
  PyPI's provenance files (`{"version": 1, "attestation_bundles": [{"publisher",
  "attestations": [...]}]}`) become v0.3 bundles with the same certificate, log entries
  and envelope (nothing is re-signed: a changed byte fails verification as before);
- npm's attestations document (`{"attestations": [{"predicateType", "bundle"}]}`, the
  shape `npm audit signatures` reads) gives its bundles.
"""

from __future__ import annotations

from typing import Any, Final

from assay.errors import AttestationError

BUNDLE_V03: Final = "application/vnd.dev.sigstore.bundle.v0.3+json"
INTOTO: Final = "application/vnd.in-toto+json"
MAX_ITEMS: Final = 256


def is_pep740_attestation(document: object) -> bool:
    return (
        isinstance(document, dict)
        and document.get("version") == 1
        and isinstance(document.get("verification_material"), dict)
        and isinstance(document.get("envelope"), dict)
    )


def pep740_to_bundle(document: dict[str, Any], where: str) -> dict[str, Any]:
    material = document["verification_material"]
    envelope = document["envelope"]
    certificate = material.get("certificate")
    entries = material.get("transparency_entries")
    statement = envelope.get("statement")
    signature = envelope.get("signature")
    for name, value, kind in (
        ("verification_material.certificate", certificate, str),
        ("verification_material.transparency_entries", entries, list),
        ("envelope.statement", statement, str),
        ("envelope.signature", signature, str),
    ):
        if not isinstance(value, kind):
            raise AttestationError(f"{where}: $.{name}", f"expected a {kind.__name__}")
    return {
        "mediaType": BUNDLE_V03,
        "verificationMaterial": {"certificate": {"rawBytes": certificate}, "tlogEntries": entries},
        "dsseEnvelope": {
            "payload": statement,
            "payloadType": INTOTO,
            "signatures": [{"sig": signature}],
        },
    }


def expand(document: Any, where: str) -> list[tuple[str, Any]]:
    """The bundles (or other documents, unchanged) one parsed document holds."""
    if not isinstance(document, dict):
        return [(where, document)]
    if is_pep740_attestation(document):
        return [(where, pep740_to_bundle(document, where))]
    if isinstance(document.get("attestation_bundles"), list):
        result = []
        for i, group in enumerate(document["attestation_bundles"][:MAX_ITEMS]):
            items = group.get("attestations") if isinstance(group, dict) else None
            if not isinstance(items, list):
                raise AttestationError(
                    f"{where}: $.attestation_bundles[{i}].attestations", "expected an array"
                )
            for j, item in enumerate(items[:MAX_ITEMS]):
                label = f"{where} $.attestation_bundles[{i}].attestations[{j}]"
                if not is_pep740_attestation(item):
                    raise AttestationError(label, "expected a PEP 740 attestation object")
                result.append((label, pep740_to_bundle(item, label)))
        return result
    if isinstance(document.get("attestations"), list):
        result = []
        for index, item in enumerate(document["attestations"][:MAX_ITEMS]):
            bundle = item.get("bundle") if isinstance(item, dict) else None
            if not isinstance(bundle, dict):
                raise AttestationError(
                    f"{where}: $.attestations[{index}].bundle", "expected a Sigstore bundle"
                )
            result.append((f"{where} $.attestations[{index}]", bundle))
        return result
    return [(where, document)]
