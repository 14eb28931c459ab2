"""Typed models: snake_case reads of lowerCamelCase wire fields, building, lossless output."""

from __future__ import annotations

import datetime as dt

import orjson
import pytest

from assay.attestation import (
    PROVENANCE_V1,
    STATEMENT_V1,
    VSA_V1,
    ProvenanceV1,
    ResourceDescriptor,
    Statement,
    VerificationSummaryV1,
    build_vsa_statement,
    format_timestamp,
    parse_statement,
    validate,
)
from assay.errors import AttestationError

from .samples import SHA256, provenance_v01, provenance_v02, provenance_v1, vsa_v1


def test_provenance_v1_reads_every_field() -> None:
    statement = Statement.from_dict(provenance_v1())
    assert statement.type == STATEMENT_V1
    assert statement.predicate_type == PROVENANCE_V1
    assert statement.subject_digests() == [{"sha256": SHA256}]
    provenance = statement.provenance_v1()
    assert provenance.builder_id == "https://github.com/actions/runner/github-hosted"
    assert provenance.build_definition.build_type == provenance.build_type
    assert provenance.external_parameters["workflow"]["path"] == ".github/workflows/release.yml"
    assert provenance.internal_parameters == {"github": {"event_name": "push"}}
    (dependency,) = provenance.resolved_dependencies
    assert dependency.uri == "git+https://github.com/octo/demo@refs/heads/main"
    metadata = provenance.run_details.metadata
    assert (metadata.started_on, metadata.finished_on) == (
        "2026-11-22T10:00:00Z",
        "2026-11-22T10:05:00Z",
    )
    assert provenance.run_details.byproducts == ()
    assert provenance.run_details.builder.version == {}


def test_v1_unset_reads_as_empty() -> None:
    raw = provenance_v1()
    del raw["predicate"]["buildDefinition"]["internalParameters"]
    raw["predicate"]["buildDefinition"]["resolvedDependencies"] = None
    provenance = Statement.from_dict(raw).provenance_v1()
    assert provenance.internal_parameters == {}
    assert provenance.resolved_dependencies == ()


def test_legacy_provenance_reads() -> None:
    v02 = Statement.from_dict(provenance_v02()).provenance_v02()
    assert v02.builder_id == "https://github.com/octo/builder@v1"
    assert v02.invocation.config_source.entry_point == ".github/workflows/release.yml"
    assert v02.invocation.parameters == {"target": "linux"}
    assert v02.metadata.completeness.parameters is True
    assert v02.metadata.reproducible is False
    assert v02.build_config == {"steps": [{"command": ["go", "build"]}]}
    assert v02.materials[0].digest == {"sha1": "26d16513386ffaa790b1c32f927544f1322e4194"}
    v01 = Statement.from_dict(provenance_v01()).provenance_v01()
    assert v01.recipe is not None
    assert v01.recipe.defined_in_material == 0
    assert v01.recipe.arguments == {"substitutions": {"_TAG": "v1"}}
    assert v01.metadata.completeness.arguments is True
    assert len(v01.materials) == 2


def test_vsa_reads() -> None:
    summary = Statement.from_dict(vsa_v1()).verification_summary_v1()
    assert summary.verifier_id == "https://verifier.example/v1"
    assert summary.verifier.version == {"assay": "0.1.0"}
    assert summary.policy.uri == "https://example.com/policy.yaml"
    assert summary.input_attestations[0].digest == {"sha256": SHA256}
    assert summary.verified_levels == ("SLSA_BUILD_LEVEL_3", "SLSA_BUILD_REPRODUCED")
    assert summary.dependency_levels == {"SLSA_BUILD_LEVEL_3": 5, "SLSA_BUILD_LEVEL_1": 2}
    assert summary.slsa_version == "1.1"


def test_vsa_dependency_levels_keep_unset_apart_from_empty() -> None:
    raw = vsa_v1()
    del raw["predicate"]["dependencyLevels"]
    assert Statement.from_dict(raw).verification_summary_v1().dependency_levels is None
    raw["predicate"]["dependencyLevels"] = {}
    assert Statement.from_dict(raw).verification_summary_v1().dependency_levels == {}


def test_wrong_typed_accessor_raises_with_path() -> None:
    statement = Statement.from_dict(provenance_v1())
    with pytest.raises(AttestationError, match=r"\$\.predicateType: expected") as raised:
        statement.verification_summary_v1()
    assert raised.value.where == "$.predicateType"
    assert statement.typed_predicate() == statement.provenance_v1()


def test_typed_predicate_of_foreign_type_is_none() -> None:
    raw = provenance_v1()
    raw["predicateType"] = "https://in-toto.io/attestation/test-result/v0.1"
    assert Statement.from_dict(raw).typed_predicate() is None


def test_unknown_and_extension_fields_survive() -> None:
    raw = provenance_v1()
    raw["acme"] = {"x": [1, 2]}
    raw["predicate"]["runDetails"]["acme_pool"] = "eu"
    raw["subject"][0]["annotations"] = {"k": "v"}
    statement = Statement.from_dict(raw)
    assert statement.to_dict() == raw
    assert statement.unknown_fields == {"acme": {"x": [1, 2]}}
    assert statement.provenance_v1().run_details.unknown_fields == {"acme_pool": "eu"}
    assert orjson.loads(statement.to_json()) == raw
    assert list(orjson.loads(statement.to_json())) == list(raw)  # key order kept


def test_from_dict_copies_its_input() -> None:
    raw = provenance_v1()
    statement = Statement.from_dict(raw)
    raw["predicate"]["runDetails"]["builder"]["id"] = "changed"
    assert statement.provenance_v1().builder_id == "https://github.com/actions/runner/github-hosted"
    out = statement.to_dict()
    out["subject"].clear()
    assert len(statement.subject) == 1


def test_parse_statement_rejects_non_objects_and_bad_json() -> None:
    with pytest.raises(AttestationError, match="expected a JSON object, found array"):
        parse_statement(b"[]")
    with pytest.raises(AttestationError, match="expected JSON"):
        parse_statement(b"{")


def test_parse_statement_enforces_the_size_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    from assay.attestation import statement as module

    monkeypatch.setattr(module, "MAX_PAYLOAD_BYTES", 10)
    with pytest.raises(AttestationError, match="expected at most 10 bytes"):
        parse_statement(b'{"_type": "https://in-toto.io/Statement/v1"}')


def test_build_vsa_statement_is_valid_and_serializes_wire_names() -> None:
    summary = VerificationSummaryV1(
        verifier_id="https://verifier.example/v1",
        verifier_version={"assay": "0.1.0"},
        time_verified=dt.datetime(2026, 11, 22, 12, 0, 5, 123, tzinfo=dt.UTC),
        resource_uri="pkg:npm/demo@1.0.0",
        policy=ResourceDescriptor(uri="https://example.com/policy", digest={"sha256": SHA256}),
        input_attestations=[ResourceDescriptor(uri="https://x/att", digest={"sha256": SHA256})],
        verification_result="PASSED",
        verified_levels=["SLSA_BUILD_LEVEL_3"],
        dependency_levels={},
        slsa_version="1.1",
    )
    statement = build_vsa_statement(
        [ResourceDescriptor(name="demo", digest={"sha256": SHA256})], summary
    )
    wire = orjson.loads(statement.to_json())
    assert wire["_type"] == STATEMENT_V1
    assert wire["predicateType"] == VSA_V1
    predicate = wire["predicate"]
    assert predicate["timeVerified"] == "2026-11-22T12:00:05Z"
    assert predicate["verifier"] == {
        "id": "https://verifier.example/v1",
        "version": {"assay": "0.1.0"},
    }
    assert predicate["dependencyLevels"] == {}
    assert predicate["slsaVersion"] == "1.1"
    assert "dependency_levels" not in predicate
    assert validate(statement) == []
    assert parse_statement(statement.to_json()).verification_summary_v1() == summary


def test_vsa_without_optional_fields_leaves_them_out() -> None:
    summary = VerificationSummaryV1(
        verifier_id="https://v",
        resource_uri="https://r",
        policy=ResourceDescriptor(uri="https://p"),
        verification_result="FAILED",
        verified_levels=["FAILED"],
    )
    assert set(summary.to_dict()) == {
        "verifier",
        "resourceUri",
        "policy",
        "verificationResult",
        "verifiedLevels",
    }


def test_format_timestamp_converts_to_utc() -> None:
    paris = dt.timezone(dt.timedelta(hours=1))
    assert format_timestamp(dt.datetime(2026, 1, 1, 1, 0, tzinfo=paris)) == "2026-01-01T00:00:00Z"
    assert format_timestamp(dt.datetime(2026, 1, 1, 1, 0)) == "2026-01-01T01:00:00Z"


def test_build_provenance_v1_statement() -> None:
    provenance = ProvenanceV1(
        build_type="https://example.com/build/v1",
        external_parameters={"source": "git+https://example.com/repo"},
        builder_id="https://example.com/builder",
        resolved_dependencies=[
            ResourceDescriptor(uri="git+https://example.com/repo", digest={"gitCommit": "a" * 40})
        ],
        started_on="2026-11-22T10:00:00Z",
    )
    statement = Statement(
        subject=[{"name": "a", "digest": {"sha256": SHA256}}],
        predicate_type=PROVENANCE_V1,
        predicate=provenance,
    )
    assert validate(statement) == []
    assert statement.provenance_v1() == provenance
    wire = statement.to_dict()["predicate"]
    assert wire["runDetails"] == {
        "builder": {"id": "https://example.com/builder"},
        "metadata": {"startedOn": "2026-11-22T10:00:00Z"},
    }


def test_resource_descriptor_wire_names_and_extensions() -> None:
    descriptor = ResourceDescriptor(
        name="log",
        download_location="https://x/log",
        media_type="text/plain",
        content="aGVsbG8=",
        extensions={"acme_kind": "log"},
    )
    assert descriptor.to_dict() == {
        "name": "log",
        "downloadLocation": "https://x/log",
        "mediaType": "text/plain",
        "content": "aGVsbG8=",
        "acme_kind": "log",
    }
    assert descriptor.download_location == "https://x/log"
    assert descriptor.unknown_fields == {"acme_kind": "log"}
    assert ResourceDescriptor.from_dict(descriptor.to_dict()) == descriptor


def test_public_api_names_resolve() -> None:
    import assay.attestation as api

    assert [name for name in api.__all__ if not hasattr(api, name)] == []
    assert {"parse_statement", "validate", "extract_payload", "build_vsa_statement"} <= set(
        api.__all__
    )
