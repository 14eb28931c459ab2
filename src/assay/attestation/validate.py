"""`validate()`: check a statement against the formats' rules, returning findings.

Every MUST of the spec is an `error`, every SHOULD a `warning`. Unknown fields are
never errors: consumers must ignore them, so they are only reported as warnings.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from assay.attestation import _checks as c
from assay.attestation import _validate_provenance, _validate_vsa, _validate_vulns
from assay.attestation._fast import clean_provenance_v1
from assay.attestation._json import child, type_name
from assay.attestation.constants import (
    COSIGN_VULN_V1,
    PROVENANCE_V01,
    PROVENANCE_V02,
    PROVENANCE_V1,
    STATEMENT_TYPES,
    STATEMENT_V01,
    STATEMENT_V1,
    VSA_V01,
    VSA_V02,
    VSA_V1,
    VULNS_V01,
    VULNS_V02,
)
from assay.attestation.findings import Finding, Severity
from assay.attestation.statement import JSONView
from assay.errors import AttestationError

_PREDICATE_CHECKS: Final[dict[str, Callable[[list[Finding], dict[str, Any]], None]]] = {
    PROVENANCE_V1: _validate_provenance.check_v1,
    PROVENANCE_V02: _validate_provenance.check_v02,
    PROVENANCE_V01: _validate_provenance.check_v01,
    VSA_V1: _validate_vsa.check_v1,
    VULNS_V02: _validate_vulns.check_vulns_v02,
    VULNS_V01: _validate_vulns.check_vulns_v01,
    COSIGN_VULN_V1: _validate_vulns.check_cosign_vuln_v1,
}
# predicateType families whose near misses ("v1.0", "v1?draft") are errors.
_FAMILIES: Final = {
    "https://slsa.dev/provenance/": PROVENANCE_V1,
    "https://slsa.dev/verification_summary/": VSA_V1,
    "https://in-toto.io/attestation/vulns/": VULNS_V02,
}
_V1_FORMATS: Final = frozenset({PROVENANCE_V1, VSA_V1})
_STATEMENT_FIELDS: Final = frozenset({"_type", "subject", "predicateType", "predicate"})


def validate(statement: JSONView | Mapping[str, Any]) -> list[Finding]:
    """Check a parsed statement (a `Statement` or its JSON object) against the spec.

    Returns every finding, in document order within each part; an empty list means
    the statement is valid. Never raises for bad content.
    """
    raw: Any = statement._raw if isinstance(statement, JSONView) else statement
    if isinstance(raw, Mapping) and not isinstance(raw, dict):
        raw = dict(raw)
    if isinstance(raw, dict) and clean_provenance_v1(raw):
        return []
    return validate_in_detail(raw)


def validate_in_detail(raw: Any) -> list[Finding]:
    """`validate()` without the fast path: every rule, run one by one."""
    out: list[Finding] = []
    if not isinstance(raw, dict):
        c.add(
            out,
            "$",
            "not-object",
            Severity.ERROR,
            f"expected a statement object, found {type_name(raw)}",
        )
        return out
    predicate_type = raw.get("predicateType")
    _statement_type(out, raw.get("_type"), predicate_type)
    _subjects(out, raw.get("subject"))
    c.extensions(out, raw, _STATEMENT_FIELDS, "$", "uri", where="a statement")
    _predicate(out, predicate_type, raw.get("predicate"))
    return out


def _predicate(out: list[Finding], predicate_type: Any, predicate: Any) -> None:
    """The predicate, by the rules of its type (a type assay has no rules for is noted)."""
    if not isinstance(predicate_type, str) or not predicate_type:
        c.not_a_string(out, "$.predicateType", predicate_type, "a predicate type URI")
        return
    check = _PREDICATE_CHECKS.get(predicate_type)
    if check is None:
        _unchecked_predicate_type(out, predicate_type)
        return
    what = f"the {predicate_type} predicate"
    if c.present(out, predicate, dict, "$.predicate", expected="an object", what=what):
        check(out, predicate)


def require_valid(statement: JSONView | Mapping[str, Any], *, strict: bool = False) -> None:
    """Raise `InvalidAttestation` on the first error (or warning, with `strict`)."""
    findings = validate(statement)
    failing = [f for f in findings if strict or f.severity is Severity.ERROR]
    if failing:
        raise InvalidAttestation(failing)


class InvalidAttestation(AttestationError):
    """A statement broke at least one rule; `findings` lists them all."""

    def __init__(self, findings: list[Finding]) -> None:
        first = findings[0]
        more = f" (and {len(findings) - 1} more)" if len(findings) > 1 else ""
        super().__init__(first.path, f"{first.message} [{first.code}]{more}")
        self.findings = findings


def _statement_type(out: list[Finding], value: Any, predicate_type: Any) -> None:
    if not isinstance(value, str) or not value:
        c.not_a_string(out, "$._type", value, f"{STATEMENT_V1!r}")
    elif value not in STATEMENT_TYPES:
        c.add(
            out,
            "$._type",
            "statement-type",
            Severity.ERROR,
            f"expected {STATEMENT_V1!r} or {STATEMENT_V01!r}, found {value!r}",
        )
    elif value == STATEMENT_V01 and predicate_type in _V1_FORMATS:
        c.add(
            out,
            "$._type",
            "statement-type-legacy",
            Severity.WARNING,
            f"expected {STATEMENT_V1!r} for {predicate_type}, found {value!r}",
        )


def _subjects(out: list[Finding], subjects: Any) -> None:
    if subjects is None:
        c.missing(out, "$.subject", "an array of subjects")
        return
    if not isinstance(subjects, list):
        c.wrong_type(out, "$.subject", "an array of subjects", subjects)
        return
    if not subjects:
        c.add(
            out,
            "$.subject",
            "subject-empty",
            Severity.ERROR,
            "expected at least one subject, found none",
        )
        return
    _each_subject(out, subjects)


def _each_subject(out: list[Finding], subjects: list[Any]) -> None:
    """Each subject is a descriptor with a digest, and no two share a name."""
    names: set[str] = set()
    for index, subject in enumerate(subjects):
        path = f"$.subject[{index}]"
        if c.descriptor(out, subject, path, "uri", require_digest="missing-field"):
            _unique_name(out, subject.get("name"), path, names)


def _unique_name(out: list[Finding], name: Any, path: str, names: set[str]) -> None:
    """Subject names are unique: a name seen before (in `names`) is reported."""
    if not isinstance(name, str) or not name:
        return
    if name in names:
        c.add(
            out,
            child(path, "name"),
            "subject-name-duplicate",
            Severity.WARNING,
            f"expected unique subject names, found {name!r} again",
        )
    names.add(name)


def _unchecked_predicate_type(out: list[Finding], predicate_type: str) -> None:
    for prefix, exact in _FAMILIES.items():
        if predicate_type.startswith(prefix) and predicate_type not in (VSA_V01, VSA_V02):
            c.add(
                out,
                "$.predicateType",
                "predicate-type-inexact",
                Severity.ERROR,
                f"expected an exact predicate type such as {exact!r}, found {predicate_type!r}",
            )
            return
    c.add(
        out,
        "$.predicateType",
        "predicate-type-unchecked",
        Severity.WARNING,
        f"expected one of {', '.join(sorted(_PREDICATE_CHECKS))}; "
        f"the predicate of {predicate_type!r} was not checked",
    )
