"""Every real file in tests/assets/slsa: valid ones pass, broken ones fail where they break.

The expected errors below were checked by hand against each file and the spec; a file
not listed must produce no error at all.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from assay.attestation import (
    PROVENANCE_V1,
    Statement,
    parse_statement,
    validate,
)
from assay.attestation.documents import read_documents
from assay.attestation.findings import Severity
from assay.attestation.validate import validate_in_detail

from .samples import SLSA_ASSETS, asset_files

# Files that hold a bare predicate, not a statement; checked by wrapping them.
PREDICATE_ONLY = {
    "sigstore-python/slsa_predicate_v0_2.json": "https://slsa.dev/provenance/v0.2",
    "sigstore-python/slsa_predicate_v1_0.json": PROVENANCE_V1,
    "slsa-github-generator/valid-slsa-v02-predicate.json": "https://slsa.dev/provenance/v0.2",
}

_GCB = "provenance_summary.provenance"
# file -> {(location, JSON path, code)} of every error it must produce.
BROKEN: dict[str, set[tuple[str, str, str]]] = {
    # buildDefinition without externalParameters (required at build level 1).
    "attestation-verifier/test-data/build.fe1c6281.json": {
        ("", "$.predicate.buildDefinition.externalParameters", "missing-field")
    },
    "attestation-verifier/test-data-raw/build.json": {
        ("", "$.predicate.buildDefinition.externalParameters", "missing-field")
    },
    "sigstore-python/a.dsse.staging-rekor-v2.txt.sigstore.json": {
        ("", "$.predicate.buildDefinition.externalParameters", "missing-field")
    },
    # in-toto link documents: `type` where a Statement has `_type`.
    "attestation-verifier/test-data/clone.fe1c6281.json": {("", "$._type", "missing-field")},
    "attestation-verifier/test-data-raw/clone.json": {("", "$._type", "missing-field")},
    # A v0.3 bundle with a message signature instead of a DSSE envelope.
    "github-cli/github_provenance_demo-0.0.12-py3-none-any-bundle-missing-cert.jsonl": {
        ("", "$.dsseEnvelope", "bundle-content")
    },
    # No buildType; sha256 digests that are 40 hex characters (sha1-sized).
    "guac/oci-kubectl-linux-amd64-in-toto.json": {
        ("", "$.predicate.buildType", "missing-field"),
        ("", "$.predicate.invocation.configSource.digest.sha256", "digest-length"),
        ("", "$.predicate.materials[0].digest.sha256", "digest-length"),
    },
    # predicateType written "v1.0", "v1.0?draft", "v1?draft", "v1-rc2": not exact.
    "slsa-github-generator/docker-slsa1-provenance.json": {
        ("", "$.predicateType", "predicate-type-inexact")
    },
    "slsa-verifier/unit/gha/bundle/attestation.intoto.sigstore": {
        ("", "$.predicateType", "predicate-type-inexact")
    },
    "slsa-verifier/unit/gha/bundle/invalid-dsse-sig.intoto.sigstore": {
        ("", "$.predicateType", "predicate-type-inexact")
    },
    "slsa-verifier/unit/gha/bundle/mismatch-tlog.intoto.sigstore": {
        ("", "$.predicateType", "predicate-type-inexact")
    },
    "slsa-verifier/unit/gha/bundle/valid.intoto.sigstore": {
        ("", "$.predicateType", "missing-field")
    },
    "spec-examples/buildtype-gcb-triggered-build-v1-example.json": {
        ("", "$._type", "missing-field"),
        ("", "$.predicateType", "predicate-type-inexact"),
    },
    "spec-examples/buildtype-github-actions-workflow-v0.1-example.json": {
        ("", "$._type", "missing-field"),
        ("", "$.predicateType", "predicate-type-inexact"),
    },
    "spec-examples/buildtype-github-actions-workflow-v1-example.json": {
        ("", "$._type", "statement-type"),
        ("", "$.predicateType", "predicate-type-inexact"),
    },
    # GCB writes definedInMaterial as the string "-1" (protobuf JSON's int64 form): a
    # warning, not an error, since `assay verify` must accept what the builder signed
    # (slsa-verifier does); see test_protobuf_int64_material_index_is_a_warning.
    # Tampered envelopes: empty, truncated or missing payloads.
    "slsa-verifier/unit/gcb/gcloud-container-empty-payload.json": {
        (f"{_GCB}[0]", "$.payload", "payload-encoding")
    },
    "slsa-verifier/unit/gcb/gcloud-container-invalid-payload-encoding.json": {
        (f"{_GCB}[0]", "$.payload", "payload-encoding")
    },
    "slsa-verifier/unit/gcb/gcloud-container-no-payload.json": {
        (f"{_GCB}[0]", "$", "payload-encoding")
    },
    "slsa-verifier/unit/gcb/v1.0-gcloud-container-github-both-invalid-sig.json": {
        (f"{_GCB}[0]", "$.payload", "payload-encoding"),
        (f"{_GCB}[1]", "$.payload", "payload-encoding"),
    },
    "slsa-verifier/unit/gcb/v1.0-gcloud-container-github-v1.0-valid.json": {
        (f"{_GCB}[1]", "$.payload", "payload-encoding")
    },
    # Statement/v0.2 does not exist; a v0.1 predicate labelled v0.2 lacks buildType.
    "slsa-verifier/unit/gcb-slsaprovenance/v0.1/gcloud-container-invalid-intotoheader.json": {
        ("", "$._type", "statement-type")
    },
    "slsa-verifier/unit/gcb-slsaprovenance/v0.1/gcloud-container-invalid-slsaheader.json": {
        ("", "$.predicate.buildType", "missing-field"),
        # A v0.1 predicate under a v0.2 predicateType: its `recipe` is v0.1's.
        ("", "$.predicate.recipe", "field-of-other-version"),
    },
    # npm attestations: wrong payloadType, mismatched or wrong types, no subject.
    "slsa-verifier/unit/gha/npm-att-mismatch-prov-payloadtype.intoto.sigstore": {
        ("attestations[0]", "$.dsseEnvelope.payloadType", "payload-type")
    },
    "slsa-verifier/unit/gha/npm-att-mismatch-pub-payloadtype.intoto.sigstore": {
        ("attestations[0]", "$.dsseEnvelope.payloadType", "payload-type")
    },
    "slsa-verifier/unit/gha/npm-att-mismatch-prov-predicatetype.intoto.sigstore": {
        ("attestations[0]", "$.predicateType", "predicate-type-mismatch")
    },
    "slsa-verifier/unit/gha/npm-att-mismatch-pub-predicatetype.intoto.sigstore": {
        ("attestations[1]", "$.predicateType", "predicate-type-mismatch")
    },
    "slsa-verifier/unit/gha/npm-stmt-mismatch-prov-predicatetype.intoto.sigstore": {
        ("attestations[0]", "$.predicateType", "predicate-type-mismatch")
    },
    "slsa-verifier/unit/gha/npm-stmt-mismatch-pub-predicatetype.intoto.sigstore": {
        ("attestations[1]", "$.predicateType", "predicate-type-mismatch")
    },
    "slsa-verifier/unit/gha/npm-stmt-mismatch-prov-type.intoto.sigstore": {
        ("attestations[0]", "$._type", "statement-type")
    },
    "slsa-verifier/unit/gha/npm-att-publish-invalid-signature.intoto.sigstore": {
        ("attestations[1]", "$.subject[0].digest", "wrong-type")
    },
    "slsa-verifier/unit/gha/npm-att-publish-nosubjects.intoto.sigstore": {
        ("attestations[1]", "$.subject", "missing-field")
    },
    # The spec's own examples use placeholder digests such as "5678...".
    "spec-examples/vsa-v0.1-example.json": {("", "$.subject[0].digest.sha256", "digest-not-hex")},
    "spec-examples/vsa-v1.0-example.json": {
        ("", "$.predicate.inputAttestations[0].digest.sha256", "digest-not-hex"),
        ("", "$.predicate.policy.digest.sha256", "digest-not-hex"),
        ("", "$.subject[0].digest.sha256", "digest-not-hex"),
    },
    "spec-examples/vsa-v1.0-rc2-example.json": {
        ("", "$.predicateType", "predicate-type-inexact"),
        ("", "$.subject[0].digest.sha256", "digest-not-hex"),
    },
    "spec-examples/vsa-v1.1-example.json": {
        ("", "$.predicate.inputAttestations[0].digest.sha256", "digest-not-hex"),
        ("", "$.predicate.policy.digest.sha256", "digest-not-hex"),
        ("", "$.subject[0].digest.sha256", "digest-not-hex"),
    },
}

FILES = [name for name in asset_files() if name not in PREDICATE_ONLY]


def test_assets_are_all_there() -> None:
    assert len(asset_files()) == 291
    assert set(BROKEN) <= set(FILES)


@pytest.mark.parametrize("name", FILES)
def test_real_file_errors(name: str) -> None:
    documents = read_documents((SLSA_ASSETS / name).read_bytes())
    assert documents
    errors = {
        (document.location, finding.path, finding.code)
        for document in documents
        for finding in document.findings
        if finding.severity is Severity.ERROR
    }
    assert errors == BROKEN.get(name, set())
    assert not any(document.signatures_checked for document in documents)


def _statements() -> list[tuple[str, Any]]:
    found = []
    for name in FILES:
        for document in read_documents((SLSA_ASSETS / name).read_bytes()):
            if isinstance(document.statement, dict):
                found.append((f"{name} {document.location}".strip(), document.statement))
    return found


STATEMENTS = _statements()


def test_every_real_statement_is_found() -> None:
    # 291 files minus 3 bare predicates; some hold several statements, a few none.
    assert len(STATEMENTS) >= 280


@pytest.mark.parametrize(("where", "raw"), STATEMENTS, ids=[w for w, _ in STATEMENTS])
def test_real_statement_round_trips(where: str, raw: dict[str, Any]) -> None:
    statement = Statement.from_dict(raw)
    assert statement.to_dict() == raw
    again = parse_statement(statement.to_json())
    assert again.to_dict() == raw
    assert again == statement
    # Typed access never raises on real data, whatever its validity.
    predicate = (
        statement.typed_predicate()
        if raw.get("predicate") is None or isinstance(raw.get("predicate"), dict)
        else None
    )
    if predicate is not None:
        assert orjson.loads(predicate.to_json()) == raw["predicate"]
    for subject in statement.subject:
        assert isinstance(subject.digest, dict)
    # The fast path and the detailed rules agree on real data.
    assert validate(raw) == validate_in_detail(raw)


@pytest.mark.parametrize(("name", "predicate_type"), sorted(PREDICATE_ONLY.items()))
def test_real_bare_predicates_are_valid(name: str, predicate_type: str) -> None:
    data = (SLSA_ASSETS / name).read_bytes()
    # As a file, a bare predicate is named for what it is...
    (document,) = read_documents(data)
    assert [(f.path, f.code) for f in document.findings] == [("$", "not-a-statement")]
    # ...and inside a statement it is valid.
    predicate = orjson.loads(data)
    statement = {
        "_type": "https://in-toto.io/Statement/v1",
        "subject": [{"name": "x", "digest": {"sha256": "0" * 64}}],
        "predicateType": predicate_type,
        "predicate": predicate,
    }
    findings = validate(statement)
    assert [f for f in findings if f.severity is Severity.ERROR] == []
    assert Statement.from_dict(statement).to_dict() == statement


def test_real_v1_provenance_typed_access() -> None:
    data = (SLSA_ASSETS / "github-cli/sigstore-js-2.1.0-bundle.json").read_bytes()
    (document,) = read_documents(data)
    provenance = Statement.from_dict(document.statement).provenance_v1()
    assert provenance.builder_id == "https://github.com/actions/runner/github-hosted"
    assert provenance.build_type == (
        "https://slsa-framework.github.io/github-actions-buildtypes/workflow/v1"
    )
    assert provenance.external_parameters["workflow"]["repository"] == (
        "https://github.com/sigstore/sigstore-js"
    )
    (dependency,) = provenance.resolved_dependencies
    assert dependency.digest == {"gitCommit": "26d16513386ffaa790b1c32f927544f1322e4194"}
    assert provenance.run_details.metadata.invocation_id == (
        "https://github.com/sigstore/sigstore-js/actions/runs/6014488666/attempts/1"
    )


def test_real_v02_provenance_typed_access() -> None:
    data = (SLSA_ASSETS / "slsa-github-generator/attestation1.intoto").read_bytes()
    statement = parse_statement(data)
    provenance = statement.provenance_v02()
    assert provenance.build_type == "https://github.com/slsa-framework/slsa-github-generator/go@v1"
    assert provenance.invocation.config_source.entry_point == ".github/workflows/release.yml"
    assert provenance.materials[0].uri is not None
    assert provenance.metadata.completeness.parameters is not None


def test_real_vsa_typed_access() -> None:
    data = (SLSA_ASSETS / "slsa-verifier/cli/vsa/gce/v1/gke-gce-pre.bcid-vsa.jsonl").read_bytes()
    (document,) = read_documents(data)
    summary = Statement.from_dict(document.statement).verification_summary_v1()
    assert summary.verification_result == "PASSED"
    assert "SLSA_BUILD_LEVEL_2" in summary.verified_levels
    assert summary.verifier_id is not None


def test_protobuf_int64_material_index_is_a_warning() -> None:
    name = "slsa-verifier/unit/gcb-slsaprovenance/v0.1/gcloud-container-gcs.json"
    (document,) = read_documents((SLSA_ASSETS / name).read_bytes())
    found = [
        (f.path, f.code, f.severity)
        for f in document.findings
        if f.path == "$.predicate.recipe.definedInMaterial"
    ]
    assert found == [("$.predicate.recipe.definedInMaterial", "wrong-type", Severity.WARNING)]
