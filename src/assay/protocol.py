"""Protocol constants: the exact strings and sizes of the formats assay reads and writes.

Each is defined here once and imported wherever it is compared or written
(tests/test_protocol_constants.py fails on a second definition). This module imports
nothing of assay, so every package, the `sigstore/` and `dsse/` leaves included, can
import it without pulling in another package or closing an import circle.
"""

from __future__ import annotations

from typing import Final

# -- in-toto statements (v0.1 is legacy but still what many generators emit) --------------
STATEMENT_PREFIX: Final = "https://in-toto.io/Statement/"
STATEMENT_V1: Final = "https://in-toto.io/Statement/v1"
STATEMENT_V01: Final = "https://in-toto.io/Statement/v0.1"
STATEMENT_TYPES: Final = (STATEMENT_V1, STATEMENT_V01)
"""Statement `_type`s a verifier accepts, newest first."""

# -- DSSE payload types for in-toto statements (spec/v1/envelope.md) -----------------------
PAYLOAD_TYPE_INTOTO: Final = "application/vnd.in-toto+json"
PAYLOAD_TYPE_PREFIX: Final = "application/vnd.in-toto."
PAYLOAD_TYPE_SUFFIX: Final = "+json"

# -- predicate types: the specs require these exact strings (no "v1.0", no "?draft") -------
PROVENANCE_V1: Final = "https://slsa.dev/provenance/v1"
PROVENANCE_V02: Final = "https://slsa.dev/provenance/v0.2"
PROVENANCE_V01: Final = "https://slsa.dev/provenance/v0.1"
PROVENANCE_TYPES: Final = (PROVENANCE_V1, PROVENANCE_V02, PROVENANCE_V01)
VSA_V1: Final = "https://slsa.dev/verification_summary/v1"
VSA_V02: Final = "https://slsa.dev/verification_summary/v0.2"
VSA_V01: Final = "https://slsa.dev/verification_summary/v0.1"
VULNS_V02: Final = "https://in-toto.io/attestation/vulns/v0.2"
VULNS_V01: Final = "https://in-toto.io/attestation/vulns/v0.1"
COSIGN_VULN_V1: Final = "https://cosign.sigstore.dev/attestation/vuln/v1"

# -- Sigstore bundle media types, v0.1 to v0.3 (both spellings of v0.3 occur) --------------
BUNDLE_PREFIX: Final = "application/vnd.dev.sigstore.bundle"
BUNDLE_V01: Final = "application/vnd.dev.sigstore.bundle+json;version=0.1"
BUNDLE_V02: Final = "application/vnd.dev.sigstore.bundle+json;version=0.2"
BUNDLE_V03: Final = "application/vnd.dev.sigstore.bundle+json;version=0.3"
BUNDLE_V03_ALT: Final = "application/vnd.dev.sigstore.bundle.v0.3+json"
BUNDLE_VERSIONS: Final = {
    BUNDLE_V01: "0.1",
    BUNDLE_V02: "0.2",
    BUNDLE_V03: "0.3",
    BUNDLE_V03_ALT: "0.3",
}
"""Bundle media type -> the bundle format version it names."""

# -- OCI layer media types of signed documents (cosign, referrers, assay's snapshots) -------
DSSE_ENVELOPE_MEDIA_TYPE: Final = "application/vnd.dsse.envelope.v1+json"

# -- identities -----------------------------------------------------------------------------
GITHUB_ACTIONS_ISSUER: Final = "https://token.actions.githubusercontent.com"
"""The OIDC issuer of GitHub Actions' workflow identities (Fulcio certificates)."""

# -- digests --------------------------------------------------------------------------------
DIGEST_HEX_LENGTHS: Final = {
    "md5": 32,
    "sha1": 40,
    "sha256": 64,
    "sha384": 96,
    "sha512": 128,
    "sha3-256": 64,
    "sha3_256": 64,
    "sha3-384": 96,
    "sha3_384": 96,
    "sha3-512": 128,
    "sha3_512": 128,
}
"""Lowercase-hex length of each digest algorithm assay compares (both sha3 spellings occur)."""
STRONG_DIGESTS: Final = frozenset(
    name for name, length in DIGEST_HEX_LENGTHS.items() if length >= 64
)
"""Algorithms of at least 256 bits: the only ones a subject may be matched by."""
ARTIFACT_DIGESTS: Final = ("sha256", "sha384", "sha512")
"""Algorithms an artifact may be named by on input (`ALG:HEX`), by every command and page."""
