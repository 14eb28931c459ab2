"""Identifiers and limits of the attestation formats (exact strings, named sizes)."""

from __future__ import annotations

from typing import Final

from assay.protocol import BUNDLE_VERSIONS as _BUNDLE_VERSIONS

# The protocol strings are defined once in `assay.protocol` (a leaf every package may
# import); here they keep the names the attestation package has always exported.
from assay.protocol import (
    COSIGN_VULN_V1,
    PAYLOAD_TYPE_INTOTO,
    PAYLOAD_TYPE_PREFIX,
    PAYLOAD_TYPE_SUFFIX,
    PROVENANCE_V01,
    PROVENANCE_V02,
    PROVENANCE_V1,
    STATEMENT_V01,
    STATEMENT_V1,
    VSA_V01,
    VSA_V02,
    VSA_V1,
    VULNS_V01,
    VULNS_V02,
)

__all__ = [  # noqa: RUF022 - the re-exported protocol names, then this module's own
    "COSIGN_VULN_V1",
    "PAYLOAD_TYPE_INTOTO",
    "PAYLOAD_TYPE_PREFIX",
    "PAYLOAD_TYPE_SUFFIX",
    "PROVENANCE_V01",
    "PROVENANCE_V02",
    "PROVENANCE_V1",
    "STATEMENT_V01",
    "STATEMENT_V1",
    "VSA_V01",
    "VSA_V02",
    "VSA_V1",
    "VULNS_V01",
    "VULNS_V02",
    "STATEMENT_TYPES",
    "PREDICATE_TYPES",
    "SIGSTORE_BUNDLE_MEDIA_TYPES",
    "RESULT_PASSED",
    "RESULT_FAILED",
    "LEVEL_FAILED",
    "RESERVED_LEVEL_PREFIX",
    "STANDARD_LEVELS",
    "VERIFIED_PROPERTIES",
    "MAX_FILE_BYTES",
    "MAX_DOCUMENT_BYTES",
    "MAX_PAYLOAD_BYTES",
    "MAX_BUNDLE_LINES",
]

STATEMENT_TYPES: Final = frozenset({STATEMENT_V1, STATEMENT_V01})
PREDICATE_TYPES: Final = frozenset({PROVENANCE_V1, PROVENANCE_V02, PROVENANCE_V01, VSA_V1})
SIGSTORE_BUNDLE_MEDIA_TYPES: Final = frozenset(_BUNDLE_VERSIONS)

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
