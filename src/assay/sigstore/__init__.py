"""Sigstore: bundle verification offline, shipped trusted roots, certificate identities.

    from assay.sigstore import BundleVerifier, select_roots

    verifier = BundleVerifier(select_roots())
    verified = verifier.verify(bundle_json_object, "provenance.sigstore.json")
    verified.payload, verified.identity.source_repository_uri, verified.log_proof

`load_json(data, where)` reads a signed document's JSON as the verifier does (bounded,
duplicate keys refused). `BundleVerifier.verify` raises `VerificationError` when the bundle does not verify and
`AttestationError` when it is not a usable bundle. Importing this package does not import
`sigstore`; verifying does.
"""

from assay.sigstore._json import loads as load_json
from assay.sigstore.identity import CertificateIdentity
from assay.sigstore.roots import Root, default_roots, select_roots
from assay.sigstore.verifier import (
    BundleVerifier,
    LogProof,
    TimeSource,
    VerifiedSignature,
    VerifiedTime,
)

__all__ = [
    "BundleVerifier",
    "CertificateIdentity",
    "LogProof",
    "Root",
    "TimeSource",
    "VerifiedSignature",
    "VerifiedTime",
    "default_roots",
    "load_json",
    "select_roots",
]
