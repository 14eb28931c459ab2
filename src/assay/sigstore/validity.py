"""Trusted-root validity windows, checked at the verified signing time (as sigstore-go does).

A trusted root gives each Fulcio CA, Rekor key and CT log key a `validFor` window.
`sigstore` (Python) checks those windows against the present and allows expired ones for
verification, so a CA or log key retired long ago would still verify a signature made
today. Here each must have been valid when it was used:

- the Fulcio CA that issued the signing certificate, at every verified time (Rekor's
  integrated time, a timestamp authority's time) at which the chain was verified;
- the CT log key that signed the certificate's SCT, at the SCT's time;
- the Rekor key that signed the log entry, at the entry's integrated time.

The inclusion proof's `treeSize` must also be the size its signed checkpoint states:
the proof is checked against the checkpoint's root hash, and a size not bound to the
signature could describe another tree.

Each function raises `VerificationError` naming what was out of its window. Offline.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from assay.errors import VerificationError


def _contains(valid_for: Any, when: datetime) -> bool:
    """`start <= when <= end`; no window, or no end, is open (sigstore-go's rule)."""
    if valid_for is None:
        return True
    start, end = valid_for.start, valid_for.end
    if start is not None and when < start:
        return False
    return end is None or when <= end


def _window(valid_for: Any) -> str:
    if valid_for is None:
        return "always"
    start = valid_for.start.isoformat() if valid_for.start is not None else "any time"
    end = valid_for.end.isoformat() if valid_for.end is not None else "open"
    return f"{start} to {end}"


def check_ca(root: Any, chain: Iterable[Any], when: datetime) -> None:
    """The root's CA whose certificates hold the leaf's issuer must be valid at `when`.

    `root` is a `sigstore_models` trusted root; `chain` the verified chain without the
    leaf (issuer first), as `cryptography` certificates.
    """
    from cryptography.hazmat.primitives.serialization import Encoding

    certificates = list(chain)
    if not certificates:
        return
    authorities = _issuing_authorities(root, certificates[0].public_bytes(Encoding.DER))
    if authorities and not any(_contains(ca.valid_for, when) for ca in authorities):
        ca = authorities[0]
        name = getattr(ca.subject, "common_name", None) or "the Fulcio CA"
        raise VerificationError(
            f"the Fulcio CA {name!r} that issued the certificate was not valid at the "
            f"signing time {when.isoformat()} (validFor {_window(ca.valid_for)})"
        )


def _issuing_authorities(root: Any, issuer: bytes) -> list[Any]:
    """The root's CAs whose certificate chains hold the issuer (DER)."""
    return [
        ca
        for ca in root.certificate_authorities
        if any(bytes(c.raw_bytes) == issuer for c in ca.cert_chain.certificates)
    ]


def check_sct(root: Any, certificate: Any) -> None:
    """Each SCT from a CT log of the root was signed while that log's key was valid."""
    from cryptography import x509

    try:
        extension = certificate.extensions.get_extension_for_class(
            x509.PrecertificateSignedCertificateTimestamps
        )
    except x509.ExtensionNotFound:
        return  # sigstore refuses a certificate without an SCT
    logs = {bytes(log.log_id.key_id): log for log in root.ctlogs}
    for sct in extension.value:
        log = logs.get(bytes(sct.log_id))
        if log is None:
            continue
        when = sct.timestamp.replace(tzinfo=UTC)
        if not _contains(log.public_key.valid_for, when):
            raise VerificationError(
                f"the CT log key {bytes(sct.log_id).hex()[:16]}… was not valid when it "
                f"signed the certificate's SCT at {when.isoformat()} "
                f"(validFor {_window(log.public_key.valid_for)})"
            )


def check_log_entry(root: Any, entry: Any) -> None:
    """The Rekor key of `entry` (a `sigstore_models` log entry) was valid at its integrated
    time, and its inclusion proof's `treeSize` is its checkpoint's size."""
    check_checkpoint_size(entry)
    if not entry.integrated_time:
        return  # no integrated time (Rekor v2): the timestamps are the verified times
    when = datetime.fromtimestamp(int(entry.integrated_time), tz=UTC)
    key_id = bytes(entry.log_id.key_id)
    logs = [log for log in root.tlogs if bytes(log.log_id.key_id) == key_id]
    if logs and not any(_contains(log.public_key.valid_for, when) for log in logs):
        raise VerificationError(
            f"the Rekor key {key_id.hex()[:16]}… was not valid at the entry's integrated "
            f"time {when.isoformat()} (validFor {_window(logs[0].public_key.valid_for)})"
        )


def check_checkpoint_size(entry: Any) -> None:
    """The signed checkpoint's tree size must be the inclusion proof's `treeSize`."""
    proof = entry.inclusion_proof
    if proof is None or proof.checkpoint is None:
        return
    lines = str(proof.checkpoint.envelope).split("\n")
    try:
        size = int(lines[1])
    except (IndexError, ValueError):
        raise VerificationError("the inclusion proof's checkpoint states no tree size") from None
    if size != int(proof.tree_size):
        raise VerificationError(
            f"the inclusion proof's treeSize {int(proof.tree_size)} is not its signed "
            f"checkpoint's size {size}"
        )
