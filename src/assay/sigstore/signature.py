"""The signature of one Sigstore-signed document: a bundle, or a legacy envelope.

    verified, checks = verify_signed_document("prov.intoto.jsonl", document, verifier)

A bundle is verified offline by `BundleVerifier`. A legacy slsa-github-generator
envelope carries its certificate but no log proof: it verifies only when its Rekor entry
is found (`rekor`, online) or when the caller waives the log (`insecure_ignore_tlog`),
which the result records (`LogProof.WAIVED`). The checks say what was verified; None
means the signature did not verify and the checks say why.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from assay.errors import VerificationError
from assay.results import Check
from assay.sigstore.legacy import is_legacy_envelope, verify_legacy
from assay.sigstore.verifier import BundleVerifier, LogProof, VerifiedSignature

RekorLookup = Callable[[dict[str, Any], str], tuple[Any, int]]
"""Finds a legacy envelope's Rekor entry: returns (integrated time, log index) or raises."""


def verify_signed_document(
    label: str,
    document: dict[str, Any],
    verifier: BundleVerifier,
    *,
    insecure_ignore_tlog: bool = False,
    rekor: RekorLookup | None = None,
) -> tuple[VerifiedSignature | None, list[Check]]:
    if not is_legacy_envelope(document):
        return _verify_bundle(label, document, verifier)
    log = _legacy_log(label, document, insecure_ignore_tlog, rekor)
    if log.proof is None:
        return None, [log.check]
    try:
        verified = verify_legacy(
            document,
            label,
            verifier.roots,
            log_proof=log.proof,
            log_time=log.time,
            log_index=log.index,
        )
    except VerificationError as error:
        return None, [
            Check("signature", False, "a Fulcio-certified DSSE signature", None, str(error))
        ]
    return verified, [
        Check("signature", True, "a Fulcio-certified DSSE signature", verified.media_type),
        log.check,
    ]


def _verify_bundle(
    label: str, document: dict[str, Any], verifier: BundleVerifier
) -> tuple[VerifiedSignature | None, list[Check]]:
    try:
        verified = verifier.verify(document, label)
    except VerificationError as error:
        return None, [Check("signature", False, "a verified Sigstore bundle", None, str(error))]
    return verified, [
        Check("signature", True, "a verified Sigstore bundle", verified.media_type),
        Check("transparencyLog", True, "an inclusion proof or promise", verified.log_proof.value),
    ]


@dataclass(frozen=True, slots=True)
class _LegacyLog:
    """What stands for a legacy envelope's log proof: its Rekor entry, or the waiver.
    `proof` is None when neither is available (`check` says why)."""

    proof: LogProof | None
    check: Check
    time: Any = None
    index: int | None = None


_REKOR_ENTRY: Final = "the envelope's Rekor entry"


def _legacy_log(
    label: str, document: dict[str, Any], insecure_ignore_tlog: bool, rekor: RekorLookup | None
) -> _LegacyLog:
    if insecure_ignore_tlog:
        waived = "not checked: --insecure-ignore-tlog (the signing time is unproven)"
        return _LegacyLog(
            LogProof.WAIVED, Check("transparencyLog", True, _REKOR_ENTRY, None, waived)
        )
    if rekor is None:
        missing = (
            "a legacy envelope carries no log proof: look it up in Rekor (--rekor-url URL) "
            "or accept it without one (--insecure-ignore-tlog)"
        )
        return _LegacyLog(None, Check("transparencyLog", False, _REKOR_ENTRY, None, missing))
    try:
        time, index = rekor(document, label)
    except VerificationError as error:
        return _LegacyLog(None, Check("transparencyLog", False, _REKOR_ENTRY, None, str(error)))
    found = Check("transparencyLog", True, _REKOR_ENTRY, f"log index {index}")
    return _LegacyLog(LogProof.REKOR_LOOKUP, found, time, index)
