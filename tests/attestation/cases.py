"""Table of invalid documents, one or more per rule: base, change, expected finding.

Each case names a base statement (samples.BASES), a list of edits and the finding it
must produce. `structural` marks the cases a JSON Schema can express; the schema tests
check the schemas reject exactly those.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from .samples import BASES, SHA256

DELETE = object()
Path = tuple[str | int, ...]


@dataclass(frozen=True)
class Case:
    id: str
    base: str
    edits: tuple[tuple[Path, Any], ...]
    path: str
    code: str
    severity: str = "error"
    structural: bool = True

    def document(self) -> dict[str, Any]:
        document = copy.deepcopy(BASES[self.base]())
        for where, value in self.edits:
            apply(document, where, value)
        return document


def apply(document: Any, where: Path, value: Any) -> None:
    target = document
    for key in where[:-1]:
        target = target[key]
    if value is DELETE:
        del target[where[-1]]
    else:
        target[where[-1]] = value


P = ("predicate",)
BD = (*P, "buildDefinition")
RD = (*P, "runDetails")


def case(  # noqa: PLR0917 - table rows read best positionally
    id: str,
    base: str,
    edits: list[tuple[Path, Any]],
    path: str,
    code: str,
    severity: str = "error",
    *,
    structural: bool = True,
) -> Case:
    return Case(id, base, tuple(edits), path, code, severity, structural)


V1, V02, V01, VSA = "provenance-v1", "provenance-v0.2", "provenance-v0.1", "vsa-v1"

CASES: list[Case] = [
    # Statement layer
    case("statement-not-object", V1, [((), None)], "$", "not-object"),
    case("type-missing", V1, [(("_type",), DELETE)], "$._type", "missing-field"),
    case("type-null", V1, [(("_type",), None)], "$._type", "missing-field"),
    case("type-number", V1, [(("_type",), 1)], "$._type", "wrong-type"),
    case(
        "type-unknown",
        V1,
        [(("_type",), "https://in-toto.io/Statement/v2")],
        "$._type",
        "statement-type",
    ),
    case(
        "type-draft",
        V1,
        [(("_type",), "https://in-toto.io/Statement/v1?draft")],
        "$._type",
        "statement-type",
    ),
    case(
        "type-legacy-for-v1",
        V1,
        [(("_type",), "https://in-toto.io/Statement/v0.1")],
        "$._type",
        "statement-type-legacy",
        "warning",
        structural=False,
    ),
    case("subject-missing", V1, [(("subject",), DELETE)], "$.subject", "missing-field"),
    case("subject-object", V1, [(("subject",), {})], "$.subject", "wrong-type"),
    case("subject-empty", V1, [(("subject",), [])], "$.subject", "subject-empty"),
    case("subject-not-object", V1, [(("subject", 0), "x")], "$.subject[0]", "not-object"),
    case(
        "subject-digest-missing",
        V1,
        [(("subject", 0, "digest"), DELETE)],
        "$.subject[0].digest",
        "missing-field",
    ),
    case(
        "subject-digest-empty",
        V1,
        [(("subject", 0, "digest"), {})],
        "$.subject[0].digest",
        "missing-field",
    ),
    case(
        "subject-name-number",
        V1,
        [(("subject", 0, "name"), 7)],
        "$.subject[0].name",
        "wrong-type",
    ),
    case(
        "subject-name-duplicate",
        V1,
        [(("subject",), [{"name": "a", "digest": {"sha256": SHA256}}] * 2)],
        "$.subject[1].name",
        "subject-name-duplicate",
        "warning",
        structural=False,
    ),
    case(
        "statement-unknown-field",
        V1,
        [(("extra",), 1)],
        "$.extra",
        "unknown-field",
        "warning",
        structural=False,
    ),
    case(
        "predicate-type-missing",
        V1,
        [(("predicateType",), DELETE)],
        "$.predicateType",
        "missing-field",
    ),
    case("predicate-type-number", V1, [(("predicateType",), 3)], "$.predicateType", "wrong-type"),
    case(
        "predicate-type-v1.0",
        V1,
        [(("predicateType",), "https://slsa.dev/provenance/v1.0")],
        "$.predicateType",
        "predicate-type-inexact",
    ),
    case(
        "predicate-type-draft",
        VSA,
        [(("predicateType",), "https://slsa.dev/verification_summary/v1?draft")],
        "$.predicateType",
        "predicate-type-inexact",
    ),
    case(
        "predicate-type-foreign",
        V1,
        [(("predicateType",), "https://in-toto.io/attestation/test-result/v0.1")],
        "$.predicateType",
        "predicate-type-unchecked",
        "warning",
        structural=False,
    ),
    case("predicate-missing", V1, [(P, DELETE)], "$.predicate", "missing-field"),
    case("predicate-array", V1, [(P, [])], "$.predicate", "wrong-type"),
    # DigestSet
    case(
        "digest-uppercase",
        V1,
        [(("subject", 0, "digest", "sha256"), "A" * 64)],
        "$.subject[0].digest.sha256",
        "digest-not-hex",
    ),
    case(
        "digest-not-hex",
        V1,
        [(("subject", 0, "digest", "sha256"), "z" * 64)],
        "$.subject[0].digest.sha256",
        "digest-not-hex",
    ),
    case(
        "digest-short",
        V1,
        [(("subject", 0, "digest", "sha256"), "ab" * 3)],
        "$.subject[0].digest.sha256",
        "digest-length",
    ),
    case(
        "digest-sha512-short",
        V1,
        [(("subject", 0, "digest"), {"sha512": "a" * 64})],
        "$.subject[0].digest.sha512",
        "digest-length",
    ),
    case(
        "digest-gitcommit-odd",
        V1,
        [
            (
                ("predicate", "buildDefinition", "resolvedDependencies", 0, "digest", "gitCommit"),
                "a" * 41,
            )
        ],
        "$.predicate.buildDefinition.resolvedDependencies[0].digest.gitCommit",
        "digest-length",
    ),
    case(
        "digest-value-number",
        V1,
        [(("subject", 0, "digest", "sha256"), 5)],
        "$.subject[0].digest.sha256",
        "wrong-type",
    ),
    case(
        "digest-custom-empty",
        V1,
        [(("subject", 0, "digest"), {"gce_image_id": ""})],
        "$.subject[0].digest.gce_image_id",
        "digest-empty",
    ),
    # ResourceDescriptor
    case(
        "descriptor-name-only",
        V1,
        [((*BD, "resolvedDependencies", 0), {"name": "foo"})],
        "$.predicate.buildDefinition.resolvedDependencies[0]",
        "descriptor-empty",
    ),
    case(
        "descriptor-empty-entry",
        V1,
        [((*RD, "byproducts"), [{}])],
        "$.predicate.runDetails.byproducts[0]",
        "descriptor-empty",
        "warning",
        structural=False,
    ),
    case(
        "descriptor-content-not-base64",
        V1,
        [((*BD, "resolvedDependencies", 0), {"content": "not base64!"})],
        "$.predicate.buildDefinition.resolvedDependencies[0].content",
        "content-not-base64",
    ),
    case(
        "descriptor-uri-number",
        V1,
        [((*BD, "resolvedDependencies", 0, "uri"), 1)],
        "$.predicate.buildDefinition.resolvedDependencies[0].uri",
        "wrong-type",
    ),
    case(
        "descriptor-annotations-string",
        V1,
        [((*BD, "resolvedDependencies", 0, "annotations"), "x")],
        "$.predicate.buildDefinition.resolvedDependencies[0].annotations",
        "wrong-type",
    ),
    case(
        "descriptors-not-array",
        V1,
        [((*BD, "resolvedDependencies"), {})],
        "$.predicate.buildDefinition.resolvedDependencies",
        "wrong-type",
    ),
    # Provenance v1: required fields, unset/null/empty alike
    case(
        "v1-build-definition-missing",
        V1,
        [(BD, DELETE)],
        "$.predicate.buildDefinition",
        "missing-field",
    ),
    case(
        "v1-build-definition-empty", V1, [(BD, {})], "$.predicate.buildDefinition", "missing-field"
    ),
    case("v1-run-details-null", V1, [(RD, None)], "$.predicate.runDetails", "missing-field"),
    case(
        "v1-build-type-missing",
        V1,
        [((*BD, "buildType"), DELETE)],
        "$.predicate.buildDefinition.buildType",
        "missing-field",
    ),
    case(
        "v1-build-type-empty",
        V1,
        [((*BD, "buildType"), "")],
        "$.predicate.buildDefinition.buildType",
        "missing-field",
    ),
    case(
        "v1-external-parameters-null",
        V1,
        [((*BD, "externalParameters"), None)],
        "$.predicate.buildDefinition.externalParameters",
        "missing-field",
    ),
    case(
        "v1-external-parameters-empty",
        V1,
        [((*BD, "externalParameters"), {})],
        "$.predicate.buildDefinition.externalParameters",
        "missing-field",
    ),
    case(
        "v1-external-parameters-array",
        V1,
        [((*BD, "externalParameters"), [1])],
        "$.predicate.buildDefinition.externalParameters",
        "wrong-type",
    ),
    case(
        "v1-internal-parameters-string",
        V1,
        [((*BD, "internalParameters"), "x")],
        "$.predicate.buildDefinition.internalParameters",
        "wrong-type",
    ),
    case(
        "v1-builder-missing",
        V1,
        [((*RD, "builder"), DELETE)],
        "$.predicate.runDetails.builder",
        "missing-field",
    ),
    case(
        "v1-builder-id-missing",
        V1,
        [((*RD, "builder"), {"version": {"runner": "2"}})],
        "$.predicate.runDetails.builder.id",
        "missing-field",
    ),
    case(
        "v1-builder-id-empty",
        V1,
        [((*RD, "builder", "id"), "")],
        "$.predicate.runDetails.builder.id",
        "missing-field",
    ),
    case(
        "v1-builder-id-number",
        V1,
        [((*RD, "builder", "id"), 42)],
        "$.predicate.runDetails.builder.id",
        "wrong-type",
    ),
    case(
        "v1-builder-id-not-uri",
        V1,
        [((*RD, "builder", "id"), "github-hosted runner")],
        "$.predicate.runDetails.builder.id",
        "not-a-uri",
        "warning",
        structural=False,
    ),
    case(
        "v1-builder-version-number",
        V1,
        [((*RD, "builder", "version"), {"runner": 2})],
        "$.predicate.runDetails.builder.version.runner",
        "wrong-type",
    ),
    case(
        "v1-started-on-offset",
        V1,
        [((*RD, "metadata", "startedOn"), "2026-11-22T10:00:00+02:00")],
        "$.predicate.runDetails.metadata.startedOn",
        "timestamp-format",
    ),
    case(
        "v1-finished-on-date-only",
        V1,
        [((*RD, "metadata", "finishedOn"), "2026-11-22")],
        "$.predicate.runDetails.metadata.finishedOn",
        "timestamp-format",
    ),
    case(
        "v1-started-on-month-13",
        V1,
        [((*RD, "metadata", "startedOn"), "2026-13-22T10:00:00Z")],
        "$.predicate.runDetails.metadata.startedOn",
        "timestamp-format",
    ),
    case(
        "v1-invocation-id-number",
        V1,
        [((*RD, "metadata", "invocationId"), 1)],
        "$.predicate.runDetails.metadata.invocationId",
        "wrong-type",
    ),
    case(
        "v1-parameter-in-both",
        V1,
        [((*BD, "internalParameters", "workflow"), {"ref": "x"})],
        "$.predicate.buildDefinition.internalParameters.workflow",
        "parameter-in-both",
        "warning",
        structural=False,
    ),
    case(
        "v1-unknown-field",
        V1,
        [((*RD, "builder", "location"), "eu")],
        "$.predicate.runDetails.builder.location",
        "unknown-field",
        "warning",
        structural=False,
    ),
    case(
        "v1-extension-bad-name",
        V1,
        [((*BD, "_private"), 1)],
        "$.predicate.buildDefinition._private",
        "extension-name",
        "warning",
        structural=False,
    ),
    case(
        "v1-uri-extension-not-vendor",
        V1,
        [((*P, "https://example.com/ext"), 1)],
        '$.predicate["https://example.com/ext"]',
        "unknown-field",
        "warning",
        structural=False,
    ),
    # A field of another provenance version: a reader that goes by the fields it finds,
    # not by predicateType, reads another builder (issue 24).
    case(
        "v02-v1-run-details",
        V02,
        [((*P, "runDetails"), {"builder": {"id": "https://evil.example/builder"}})],
        "$.predicate.runDetails",
        "field-of-other-version",
        structural=False,
    ),
    case(
        "v02-v1-build-definition",
        V02,
        [((*P, "buildDefinition"), {"buildType": "https://evil.example/bt"})],
        "$.predicate.buildDefinition",
        "field-of-other-version",
        structural=False,
    ),
    case(
        "v02-v01-recipe",
        V02,
        [((*P, "recipe"), {"type": "https://evil.example/recipe"})],
        "$.predicate.recipe",
        "field-of-other-version",
        structural=False,
    ),
    case(
        "v1-v02-builder",
        V1,
        [((*P, "builder"), {"id": "https://evil.example/builder"})],
        "$.predicate.builder",
        "field-of-other-version",
        structural=False,
    ),
    case(
        "v1-v02-materials",
        V1,
        [((*P, "materials"), [])],
        "$.predicate.materials",
        "field-of-other-version",
        structural=False,
    ),
    case(
        "v01-v1-run-details",
        V01,
        [((*P, "runDetails"), {"builder": {"id": "https://evil.example/builder"}})],
        "$.predicate.runDetails",
        "field-of-other-version",
        structural=False,
    ),
    # Provenance v0.2
    case(
        "v02-builder-missing",
        V02,
        [((*P, "builder"), DELETE)],
        "$.predicate.builder",
        "missing-field",
    ),
    case(
        "v02-builder-id-empty",
        V02,
        [((*P, "builder", "id"), "")],
        "$.predicate.builder.id",
        "missing-field",
    ),
    case(
        "v02-build-type-missing",
        V02,
        [((*P, "buildType"), DELETE)],
        "$.predicate.buildType",
        "missing-field",
    ),
    case(
        "v02-parameters-array",
        V02,
        [((*P, "invocation", "parameters"), [])],
        "$.predicate.invocation.parameters",
        "wrong-type",
    ),
    case(
        "v02-config-source-digest",
        V02,
        [((*P, "invocation", "configSource", "digest"), {"sha1": "abc"})],
        "$.predicate.invocation.configSource.digest.sha1",
        "digest-length",
    ),
    case(
        "v02-completeness-string",
        V02,
        [((*P, "metadata", "completeness", "parameters"), "yes")],
        "$.predicate.metadata.completeness.parameters",
        "wrong-type",
    ),
    case(
        "v02-reproducible-string",
        V02,
        [((*P, "metadata", "reproducible"), "no")],
        "$.predicate.metadata.reproducible",
        "wrong-type",
    ),
    case(
        "v02-build-started-on",
        V02,
        [((*P, "metadata", "buildStartedOn"), "yesterday")],
        "$.predicate.metadata.buildStartedOn",
        "timestamp-format",
    ),
    case(
        "v02-material-digest-empty",
        V02,
        [((*P, "materials", 0, "digest"), {})],
        "$.predicate.materials[0].digest",
        "digest-empty",
    ),
    case(
        "v02-build-config-string",
        V02,
        [((*P, "buildConfig"), "make")],
        "$.predicate.buildConfig",
        "wrong-type",
    ),
    case(
        "v02-non-uri-extension",
        V02,
        [((*P, "vendor_thing"), 1)],
        "$.predicate.vendor_thing",
        "unknown-field",
        "warning",
        structural=False,
    ),
    # Provenance v0.1
    case(
        "v01-builder-id-missing",
        V01,
        [((*P, "builder"), {})],
        "$.predicate.builder.id",
        "missing-field",
    ),
    case(
        "v01-recipe-type-missing",
        V01,
        [((*P, "recipe", "type"), DELETE)],
        "$.predicate.recipe.type",
        "missing-field",
    ),
    case(
        "v01-defined-in-material-string",
        V01,
        [((*P, "recipe", "definedInMaterial"), "zero")],
        "$.predicate.recipe.definedInMaterial",
        "wrong-type",
    ),
    case(
        "v01-defined-in-material-negative",
        V01,
        [((*P, "recipe", "definedInMaterial"), -1)],
        "$.predicate.recipe.definedInMaterial",
        "material-index",
    ),
    case(
        "v01-defined-in-material-out-of-range",
        V01,
        [((*P, "recipe", "definedInMaterial"), 2)],
        "$.predicate.recipe.definedInMaterial",
        "material-index",
        structural=False,
    ),
    case(
        "v01-arguments-array",
        V01,
        [((*P, "recipe", "arguments"), [])],
        "$.predicate.recipe.arguments",
        "wrong-type",
    ),
    case(
        "v01-completeness-arguments",
        V01,
        [((*P, "metadata", "completeness", "arguments"), 1)],
        "$.predicate.metadata.completeness.arguments",
        "wrong-type",
    ),
    case(
        "v01-materials-object",
        V01,
        [((*P, "materials"), {})],
        "$.predicate.materials",
        "wrong-type",
    ),
    # Verification summary v1
    case(
        "vsa-verifier-missing",
        VSA,
        [((*P, "verifier"), DELETE)],
        "$.predicate.verifier",
        "missing-field",
    ),
    case(
        "vsa-verifier-id-missing",
        VSA,
        [((*P, "verifier", "id"), DELETE)],
        "$.predicate.verifier.id",
        "missing-field",
    ),
    case(
        "vsa-verifier-version-number",
        VSA,
        [((*P, "verifier", "version", "assay"), 1)],
        "$.predicate.verifier.version.assay",
        "wrong-type",
    ),
    case(
        "vsa-time-verified-missing",
        VSA,
        [((*P, "timeVerified"), DELETE)],
        "$.predicate.timeVerified",
        "missing-field",
        "warning",
        structural=False,
    ),
    case(
        "vsa-time-verified-format",
        VSA,
        [((*P, "timeVerified"), "2026-11-22 12:00:00")],
        "$.predicate.timeVerified",
        "timestamp-format",
    ),
    case(
        "vsa-resource-uri-missing",
        VSA,
        [((*P, "resourceUri"), DELETE)],
        "$.predicate.resourceUri",
        "missing-field",
    ),
    case(
        "vsa-policy-missing", VSA, [((*P, "policy"), DELETE)], "$.predicate.policy", "missing-field"
    ),
    case(
        "vsa-policy-uri-missing",
        VSA,
        [((*P, "policy"), {"digest": {"sha256": SHA256}})],
        "$.predicate.policy.uri",
        "policy-uri-missing",
    ),
    case(
        "vsa-policy-digest-missing",
        VSA,
        [((*P, "policy", "digest"), DELETE)],
        "$.predicate.policy.digest",
        "policy-digest-missing",
        "warning",
        structural=False,
    ),
    case(
        "vsa-input-attestation-digest-missing",
        VSA,
        [((*P, "inputAttestations", 0, "digest"), DELETE)],
        "$.predicate.inputAttestations[0].digest",
        "input-attestation-digest",
    ),
    case(
        "vsa-input-attestation-uri-missing",
        VSA,
        [((*P, "inputAttestations", 0, "uri"), DELETE)],
        "$.predicate.inputAttestations[0].uri",
        "input-attestation-uri",
        "warning",
        structural=False,
    ),
    case(
        "vsa-result-missing",
        VSA,
        [((*P, "verificationResult"), DELETE)],
        "$.predicate.verificationResult",
        "missing-field",
    ),
    case(
        "vsa-result-lowercase",
        VSA,
        [((*P, "verificationResult"), "passed")],
        "$.predicate.verificationResult",
        "result-value",
    ),
    case(
        "vsa-levels-missing",
        VSA,
        [((*P, "verifiedLevels"), DELETE)],
        "$.predicate.verifiedLevels",
        "missing-field",
    ),
    case(
        "vsa-levels-string",
        VSA,
        [((*P, "verifiedLevels"), "SLSA_BUILD_LEVEL_3")],
        "$.predicate.verifiedLevels",
        "wrong-type",
    ),
    case(
        "vsa-level-number",
        VSA,
        [((*P, "verifiedLevels", 1), 3)],
        "$.predicate.verifiedLevels[1]",
        "wrong-type",
    ),
    case(
        "vsa-level-reserved-prefix",
        VSA,
        [((*P, "verifiedLevels", 1), "SLSA_GOLD")],
        "$.predicate.verifiedLevels[1]",
        "level-reserved-prefix",
    ),
    case(
        "vsa-level-custom",
        VSA,
        [((*P, "verifiedLevels", 1), "ACME_TRUSTED")],
        "$.predicate.verifiedLevels[1]",
        "level-custom",
        "warning",
        structural=False,
    ),
    case(
        "vsa-level-duplicate-track",
        VSA,
        [((*P, "verifiedLevels"), ["SLSA_BUILD_LEVEL_3", "SLSA_BUILD_LEVEL_2"])],
        "$.predicate.verifiedLevels[1]",
        "level-duplicate-track",
        structural=False,
    ),
    case(
        "vsa-failed-without-failed-level",
        VSA,
        [((*P, "verificationResult"), "FAILED")],
        "$.predicate.verifiedLevels",
        "result-inconsistent",
        structural=False,
    ),
    case(
        "vsa-passed-with-failed-level",
        VSA,
        [((*P, "verifiedLevels"), ["FAILED"])],
        "$.predicate.verifiedLevels",
        "result-inconsistent",
        structural=False,
    ),
    case(
        "vsa-dependency-count-negative",
        VSA,
        [((*P, "dependencyLevels", "SLSA_BUILD_LEVEL_1"), -1)],
        "$.predicate.dependencyLevels.SLSA_BUILD_LEVEL_1",
        "dependency-count",
    ),
    case(
        "vsa-dependency-count-float",
        VSA,
        [((*P, "dependencyLevels", "SLSA_BUILD_LEVEL_1"), 1.5)],
        "$.predicate.dependencyLevels.SLSA_BUILD_LEVEL_1",
        "dependency-count",
    ),
    case(
        "vsa-dependency-count-bool",
        VSA,
        [((*P, "dependencyLevels", "SLSA_BUILD_LEVEL_1"), True)],
        "$.predicate.dependencyLevels.SLSA_BUILD_LEVEL_1",
        "dependency-count",
    ),
    case(
        "vsa-dependency-level-reserved",
        VSA,
        [((*P, "dependencyLevels"), {"SLSA_TOP": 1})],
        "$.predicate.dependencyLevels.SLSA_TOP",
        "level-reserved-prefix",
    ),
    case(
        "vsa-dependency-levels-array",
        VSA,
        [((*P, "dependencyLevels"), [])],
        "$.predicate.dependencyLevels",
        "wrong-type",
    ),
    case(
        "vsa-slsa-version-format",
        VSA,
        [((*P, "slsaVersion"), "v1")],
        "$.predicate.slsaVersion",
        "version-format",
    ),
    case(
        "vsa-non-uri-extension",
        VSA,
        [((*P, "acme_note"), "x")],
        "$.predicate.acme_note",
        "unknown-field",
        "warning",
        structural=False,
    ),
]
