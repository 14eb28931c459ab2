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
from typing import Any

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
        try:
            verified = verifier.verify(document, label)
        except VerificationError as error:
            return None, [Check("signature", False, "a verified Sigstore bundle", None, str(error))]
        proof = [
            Check("signature", True, "a verified Sigstore bundle", verified.media_type),
            Check(
                "transparencyLog", True, "an inclusion proof or promise", verified.log_proof.value
            ),
        ]
        return verified, proof
    time = index = None
    proof_kind = LogProof.WAIVED
    tlog_check: Check
    if rekor is not None and not insecure_ignore_tlog:
        try:
            time, index = rekor(document, label)
        except VerificationError as error:
            return None, [
                Check("transparencyLog", False, "the envelope's Rekor entry", None, str(error))
            ]
        proof_kind = LogProof.REKOR_LOOKUP
        tlog_check = Check(
            "transparencyLog", True, "the envelope's Rekor entry", f"log index {index}"
        )
    elif insecure_ignore_tlog:
        tlog_check = Check(
            "transparencyLog",
            True,
            "the envelope's Rekor entry",
            None,
            "not checked: --insecure-ignore-tlog (the signing time is unproven)",
        )
    else:
        return None, [
            Check(
                "transparencyLog",
                False,
                "the envelope's Rekor entry",
                None,
                "a legacy envelope carries no log proof: look it up in Rekor (--rekor-url URL) "
                "or accept it without one (--insecure-ignore-tlog)",
            )
        ]
    try:
        verified = verify_legacy(
            document, label, verifier.roots, log_proof=proof_kind, log_time=time, log_index=index
        )
    except VerificationError as error:
        return None, [
            Check("signature", False, "a Fulcio-certified DSSE signature", None, str(error))
        ]
    return verified, [
        Check("signature", True, "a Fulcio-certified DSSE signature", verified.media_type),
        tlog_check,
    ]
