"""Table-driven rules: each invalid case yields its finding at its path, and only there."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from assay.attestation import (
    CODES,
    InvalidAttestation,
    Severity,
    Statement,
    has_errors,
    require_valid,
    validate,
)

from .cases import CASES, Case
from .samples import BASES


@pytest.mark.parametrize("name", sorted(BASES))
def test_bases_are_valid(name: str) -> None:
    assert validate(BASES[name]()) == []


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_rule(case: Case) -> None:
    document: Any = None if case.edits[0][0] == () else case.document()
    findings = validate(document)
    matching = [f for f in findings if f.path == case.path and f.code == case.code]
    assert matching, [str(f) for f in findings]
    assert matching[0].severity.value == case.severity
    assert "expected" in matching[0].message
    assert case.code in CODES
    # A warning-only case must not make the document invalid; an error case must.
    assert has_errors(findings) is (case.severity == "error")
    assert has_errors(findings, strict=True)


def test_every_code_is_exercised_or_container_level() -> None:
    exercised = {c.code for c in CASES}
    container_level = {
        "payload-type",
        "payload-encoding",
        "bundle-content",
        "not-json",
        "not-a-statement",
        "predicate-type-mismatch",
    }
    assert set(CODES) - exercised <= container_level


def test_unset_null_and_empty_optional_fields_read_alike() -> None:
    empties: tuple[Any, ...] = (None, {}, [])
    for value in empties:
        document = BASES["provenance-v1"]()
        definition = document["predicate"]["buildDefinition"]
        run = document["predicate"]["runDetails"]
        definition["internalParameters"] = value if value != [] else None
        definition["resolvedDependencies"] = value if value != {} else None
        run["byproducts"] = value if value != {} else None
        run["metadata"] = value if value != [] else None
        assert validate(document) == []


def test_vendor_extensions_are_accepted_everywhere_in_v1() -> None:
    document = BASES["provenance-v1"]()
    predicate = document["predicate"]
    predicate["acme_signed"] = True
    predicate["buildDefinition"]["acme_cache"] = {"hit": True}
    predicate["runDetails"]["builder"]["acme_pool"] = "eu"
    predicate["buildDefinition"]["resolvedDependencies"][0]["acme_kind"] = "source"
    assert validate(document) == []


def test_uri_extensions_are_accepted_in_v01_v02_and_vsa() -> None:
    for name in ("provenance-v0.1", "provenance-v0.2", "vsa-v1"):
        document = BASES[name]()
        document["predicate"]["https://acme.example/ext"] = {"x": 1}
        assert validate(document) == []


def test_vsa_accepts_later_spec_levels_and_properties() -> None:
    document = BASES["vsa-v1"]()
    document["predicate"]["verifiedLevels"] = [
        "SLSA_BUILD_LEVEL_UNEVALUATED",
        "SLSA_SOURCE_LEVEL_3",
        "SLSA_BUILD_REPRODUCED",
        "SLSA_SOURCE_TWO_PARTY_REVIEWED",
    ]
    document["predicate"]["dependencyLevels"] = {}
    assert validate(document) == []


def test_vsa_failed_is_consistent_when_both_say_so() -> None:
    document = BASES["vsa-v1"]()
    document["predicate"]["verificationResult"] = "FAILED"
    document["predicate"]["verifiedLevels"] = ["FAILED"]
    assert validate(document) == []


def test_timestamps_accept_fractional_seconds() -> None:
    document = BASES["provenance-v1"]()
    document["predicate"]["runDetails"]["metadata"]["startedOn"] = "2026-11-22T10:00:00.52Z"
    assert validate(document) == []


def test_digest_of_unknown_algorithm_is_free_form() -> None:
    document = BASES["provenance-v1"]()
    document["subject"][0]["digest"] = {"gce_image_id": "8970095005306000053", "arn": "x:y"}
    assert validate(document) == []


def test_statement_validates_through_the_model_too() -> None:
    raw = BASES["provenance-v1"]()
    broken = copy.deepcopy(raw)
    broken["predicate"]["runDetails"]["builder"]["id"] = ""
    assert validate(Statement.from_dict(raw)) == []
    (finding,) = validate(Statement.from_dict(broken))
    assert finding.path == "$.predicate.runDetails.builder.id"
    assert finding.severity is Severity.ERROR


def test_require_valid_raises_with_every_failing_finding() -> None:
    document = BASES["vsa-v1"]()
    document["predicate"]["verificationResult"] = "maybe"
    document["predicate"]["policy"].pop("digest")
    with pytest.raises(InvalidAttestation) as raised:
        require_valid(document)
    assert [f.code for f in raised.value.findings] == ["result-value"]
    assert "$.predicate.verificationResult" in str(raised.value)
    with pytest.raises(InvalidAttestation) as strict:
        require_valid(document, strict=True)
    assert {f.code for f in strict.value.findings} == {"result-value", "policy-digest-missing"}
    require_valid(BASES["vsa-v1"]())


def test_messages_say_what_was_found() -> None:
    document = BASES["provenance-v1"]()
    document["subject"][0]["digest"]["sha256"] = "ab"
    (finding,) = validate(document)
    assert finding.message == "expected 64 hex characters for sha256, found 2"
    assert str(finding) == (
        "error: $.subject[0].digest.sha256: expected 64 hex characters for sha256, "
        "found 2 [digest-length]"
    )


def test_non_string_keys_from_python_callers_do_not_crash() -> None:
    document = BASES["provenance-v1"]()
    document["predicate"][0] = "x"
    (finding,) = validate(document)
    assert (finding.path, finding.code) == ('$.predicate["0"]', "unknown-field")
