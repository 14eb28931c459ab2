"""Validation results: where, which rule, how bad, and what was expected vs found."""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass


class Severity(enum.StrEnum):
    """`error` breaks a MUST of the spec; `warning` breaks a SHOULD or is suspicious."""

    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem in one place of a document."""

    path: str
    """JSON path of the offending value, e.g. `$.predicate.runDetails.builder.id`."""
    code: str
    """Stable identifier of the rule (see `CODES`)."""
    severity: Severity
    message: str
    """Says what was expected and what was found."""

    def to_dict(self) -> dict[str, str]:
        return {
            "path": self.path,
            "code": self.code,
            "severity": self.severity.value,
            "message": self.message,
        }

    def __str__(self) -> str:
        return f"{self.severity.value}: {self.path}: {self.message} [{self.code}]"


def has_errors(findings: Iterable[Finding], *, strict: bool = False) -> bool:
    """True if any finding fails the document; with `strict`, warnings fail it too."""
    return any(strict or f.severity is Severity.ERROR for f in findings)


# Stable codes and what they mean; docs/attestations.md reproduces this table.
CODES: dict[str, str] = {
    "not-object": "the value must be a JSON object",
    "missing-field": "a required field is absent, null or empty",
    "wrong-type": "a field has the wrong JSON type",
    "unknown-field": "a field that is neither standard nor a well-formed extension",
    "field-of-other-version": "a provenance field of another SLSA version than predicateType's",
    "statement-type": "`_type` is not a known in-toto Statement type",
    "statement-type-legacy": "`_type` is Statement/v0.1 where Statement/v1 is expected",
    "predicate-type-inexact": "`predicateType` is a near miss of an exact SLSA identifier",
    "predicate-type-unchecked": "`predicateType` is not a format this validator checks",
    "subject-empty": "a statement needs at least one subject",
    "subject-name-duplicate": "subject names should be unique",
    "digest-empty": "a digest set must hold at least one digest",
    "digest-not-hex": "a digest of a known algorithm must be lowercase hex",
    "digest-length": "a digest of a known algorithm has the wrong length",
    "descriptor-empty": "a resource descriptor needs one of uri, digest or content",
    "content-not-base64": "`content` must be base64",
    "timestamp-format": "timestamps are <YYYY>-<MM>-<DD>T<hh>:<mm>:<ss>Z (UTC)",
    "not-a-uri": "a TypeURI or ResourceURI has no scheme",
    "extension-name": "a v1 extension field must be named <vendor>_<field>",
    "parameter-in-both": "a name appears in both externalParameters and internalParameters",
    "material-index": "recipe.definedInMaterial does not index materials",
    "result-value": "verificationResult must be PASSED or FAILED",
    "result-inconsistent": "verificationResult and a FAILED level disagree",
    "level-custom": "a level value outside the standard table",
    "level-reserved-prefix": "a custom level must not begin with SLSA_",
    "level-duplicate-track": "more than one level for the same track",
    "policy-uri-missing": "the policy must carry a uri",
    "policy-digest-missing": "the policy should carry a digest (VSA 1.1)",
    "input-attestation-digest": "each inputAttestations entry must carry a digest",
    "input-attestation-uri": "each inputAttestations entry should carry a uri",
    "dependency-count": "dependencyLevels counts must be non-negative integers",
    "version-format": "a version must be <MAJOR>.<MINOR>",
    "not-a-statement": "the document is a bare predicate, not an in-toto statement",
    "not-json": "a line of a JSON Lines bundle is not JSON",
    "predicate-type-mismatch": "the predicateType listed beside a bundle differs from its statement's",
    "payload-type": "the DSSE payloadType is not an in-toto type",
    "payload-encoding": "the DSSE payload is not valid base64 or JSON",
    "bundle-content": "a bundle or wrapper carries no usable DSSE envelope",
}
