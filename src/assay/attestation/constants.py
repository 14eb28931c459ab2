"""Identifiers and limits of the attestation formats (exact strings, named sizes)."""

from __future__ import annotations

from typing import Final

# Statement layer (in-toto). v0.1 is legacy but still what many generators emit.
STATEMENT_V1: Final = "https://in-toto.io/Statement/v1"
STATEMENT_V01: Final = "https://in-toto.io/Statement/v0.1"
STATEMENT_TYPES: Final = frozenset({STATEMENT_V1, STATEMENT_V01})

# Predicate types: the spec requires these exact strings (no "v1.0", no "?draft").
PROVENANCE_V1: Final = "https://slsa.dev/provenance/v1"
PROVENANCE_V02: Final = "https://slsa.dev/provenance/v0.2"
PROVENANCE_V01: Final = "https://slsa.dev/provenance/v0.1"
VSA_V1: Final = "https://slsa.dev/verification_summary/v1"
PREDICATE_TYPES: Final = frozenset({PROVENANCE_V1, PROVENANCE_V02, PROVENANCE_V01, VSA_V1})

# Vulnerability scan predicates (in-toto vulns v0.1/v0.2, cosign's vuln v1).
VULNS_V02: Final = "https://in-toto.io/attestation/vulns/v0.2"
VULNS_V01: Final = "https://in-toto.io/attestation/vulns/v0.1"
COSIGN_VULN_V1: Final = "https://cosign.sigstore.dev/attestation/vuln/v1"

# Older summary formats that exist upstream but that this module does not check.
VSA_V01: Final = "https://slsa.dev/verification_summary/v0.1"
VSA_V02: Final = "https://slsa.dev/verification_summary/v0.2"

# DSSE payload types for in-toto statements (spec/v1/envelope.md).
PAYLOAD_TYPE_INTOTO: Final = "application/vnd.in-toto+json"
PAYLOAD_TYPE_PREFIX: Final = "application/vnd.in-toto."
PAYLOAD_TYPE_SUFFIX: Final = "+json"

# Sigstore bundle media types, v0.1 to v0.3 (both spellings of v0.3 occur in the wild).
SIGSTORE_BUNDLE_MEDIA_TYPES: Final = frozenset(
    {
        "application/vnd.dev.sigstore.bundle+json;version=0.1",
        "application/vnd.dev.sigstore.bundle+json;version=0.2",
        "application/vnd.dev.sigstore.bundle+json;version=0.3",
        "application/vnd.dev.sigstore.bundle.v0.3+json",
    }
)

# Verification summary values.
RESULT_PASSED: Final = "PASSED"
RESULT_FAILED: Final = "FAILED"
LEVEL_FAILED: Final = "FAILED"
RESERVED_LEVEL_PREFIX: Final = "SLSA_"
STANDARD_LEVELS: Final = frozenset(
    {
        "SLSA_BUILD_LEVEL_0",
        "SLSA_BUILD_LEVEL_1",
        "SLSA_BUILD_LEVEL_2",
        "SLSA_BUILD_LEVEL_3",
        LEVEL_FAILED,
    }
)
# Verified properties added by VSA 1.2 (spec/verified-properties.md).
VERIFIED_PROPERTIES: Final = frozenset({"SLSA_BUILD_REPRODUCED", "SLSA_SOURCE_TWO_PARTY_REVIEWED"})

# Size limits: every input is bounded before it is parsed.
MAX_FILE_BYTES: Final = 16 * 1024 * 1024
"""Largest file `assay attest` reads (a JSON Lines bundle can hold many envelopes)."""
MAX_DOCUMENT_BYTES: Final = 4 * 1024 * 1024
"""Largest single statement, envelope or bundle (one JSON document or one JSONL line)."""
MAX_PAYLOAD_BYTES: Final = 4 * 1024 * 1024
"""Largest decoded DSSE payload."""
MAX_BUNDLE_LINES: Final = 10_000
"""Most documents read from one JSON Lines bundle."""
