"""Migration v0.1 -> v0.2 -> v1 per the spec's tables, with every loss reported."""

from __future__ import annotations

import pytest

from assay.attestation import PROVENANCE_V1, STATEMENT_V1, Severity, validate
from assay.attestation.documents import read_documents
from assay.attestation.migrate import migrate
from assay.errors import AttestationError

from .samples import COMMIT, SLSA_ASSETS, provenance_v01, provenance_v02, provenance_v1


def test_v02_to_v1_follows_the_table() -> None:
    result = migrate(provenance_v02())
    statement = result.statement
    assert statement.type == STATEMENT_V1
    assert statement.predicate_type == PROVENANCE_V1
    assert result.source_predicate_type == "https://slsa.dev/provenance/v0.2"
    predicate = statement.to_dict()["predicate"]
    assert predicate["buildDefinition"] == {
        "buildType": "https://github.com/octo/builder/go@v1",
        "externalParameters": {
            "target": "linux",
            "entryPoint": ".github/workflows/release.yml",
            "source": "git+https://github.com/octo/demo@refs/tags/v1",
        },
        "internalParameters": {"arch": "X64"},
        # The config source equals the only material: listed once.
        "resolvedDependencies": [
            {"uri": "git+https://github.com/octo/demo@refs/tags/v1", "digest": {"sha1": COMMIT}}
        ],
    }
    assert predicate["runDetails"] == {
        "builder": {"id": "https://github.com/octo/builder@v1"},
        "metadata": {
            "invocationId": "run-1",
            "startedOn": "2026-11-22T10:00:00Z",
            "finishedOn": "2026-11-22T10:05:00.52Z",
        },
    }
    lost = {loss.path for loss in result.losses}
    assert lost == {
        "$.predicate.buildConfig",
        "$.predicate.metadata.completeness",
        "$.predicate.metadata.reproducible",
    }
    assert [note.path for note in result.notes] == ["$.predicate.buildType"]
    assert validate(statement) == []


def test_v01_to_v1_goes_through_v02() -> None:
    result = migrate(provenance_v01())
    definition = result.statement.to_dict()["predicate"]["buildDefinition"]
    assert definition["buildType"] == "https://cloudbuild.googleapis.com/CloudBuildYaml@v0.1"
    assert definition["externalParameters"] == {
        "substitutions": {"_TAG": "v1"},
        "entryPoint": "cloudbuild.yaml",
        "source": "https://github.com/octo/demo",
    }
    assert definition["internalParameters"] == {"region": "us-west2"}
    assert definition["resolvedDependencies"] == [
        {"uri": "https://github.com/octo/demo", "digest": {"sha1": COMMIT}},
        {"uri": "gcr.io/cloud-builders/docker"},
    ]
    reasons = {loss.path: loss.reason for loss in result.losses}
    notes = {note.path: note.message for note in result.notes}
    assert "materials[0] became the config source" in notes["$.predicate.recipe.definedInMaterial"]
    assert "carried unchanged" in notes["$.predicate.buildType"]
    assert not set(notes) & set(reasons)
    assert "$.predicate.metadata.completeness" in reasons
    assert "$.predicate.metadata.reproducible" in reasons
    assert validate(result.statement) == []


def test_extensions_that_v1_cannot_name_are_reported() -> None:
    source = provenance_v02()
    source["predicate"]["https://acme.example/ext"] = 1
    source["predicate"]["invocation"]["configSource"]["https://acme.example/x"] = 2
    result = migrate(source)
    lost = {loss.path for loss in result.losses}
    assert '$.predicate["https://acme.example/ext"]' in lost
    assert '$.predicate.invocation.configSource["https://acme.example/x"]' in lost


def test_parameter_name_clash_is_reported_not_overwritten() -> None:
    source = provenance_v02()
    source["predicate"]["invocation"]["parameters"]["source"] = "mine"
    result = migrate(source)
    external = result.statement.provenance_v1().external_parameters
    assert external["source"] == "mine"
    assert any(
        loss.path == "$.predicate.invocation.configSource.uri" and "already has" in loss.reason
        for loss in result.losses
    )


def test_v01_without_recipe_reports_unknown_build_type() -> None:
    source = provenance_v01()
    del source["predicate"]["recipe"]
    result = migrate(source)
    assert any(loss.path == "$.predicate.recipe" for loss in result.losses)
    findings = validate(result.statement)
    assert ("$.predicate.buildDefinition.buildType", "missing-field") in {
        (f.path, f.code) for f in findings
    }


def test_v1_comes_back_unchanged() -> None:
    result = migrate(provenance_v1())
    assert result.statement.to_dict() == provenance_v1()
    assert result.losses == []


def test_other_predicates_are_refused() -> None:
    raw = provenance_v1()
    raw["predicateType"] = "https://slsa.dev/verification_summary/v1"
    with pytest.raises(AttestationError, match=r"expected 'https://slsa\.dev/provenance/v0\.1'"):
        migrate(raw)


@pytest.mark.parametrize(
    "name",
    [
        "slsa-github-generator/attestation1.intoto",
        "slsa-verifier/unit/gcb-slsaprovenance/v0.1/gcloud-container-github.json",
        "slsa-verifier/cli/gha_go/v1.8.0/binary-linux-amd64-push-v14.intoto.jsonl",
        "guac/oci-dsse-att.json",
    ],
)
def test_real_legacy_provenance_migrates_to_valid_v1(name: str) -> None:
    (document,) = read_documents((SLSA_ASSETS / name).read_bytes())
    result = migrate(document.statement)
    errors = [f for f in validate(result.statement) if f.severity is Severity.ERROR]
    assert errors == []
    source = document.statement["predicate"]
    provenance = result.statement.provenance_v1()
    assert provenance.builder_id == source["builder"]["id"]
    assert result.statement.subject_digests() == [
        s["digest"] for s in document.statement["subject"]
    ]
