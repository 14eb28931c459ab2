"""Property tests: any statement built from parts survives parse and serialize unchanged."""

from __future__ import annotations

import copy
from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.attestation import (
    ProvenanceV01,
    ProvenanceV02,
    ProvenanceV1,
    ResourceDescriptor,
    Statement,
    VerificationSummaryV1,
    build_vsa_statement,
    parse_statement,
    validate,
)
from assay.attestation.migrate import migrate

json_scalars = st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=20)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=12,
)
hex64 = st.text("0123456789abcdef", min_size=64, max_size=64)
names = st.text(min_size=1, max_size=30)
uris = st.builds(
    lambda host, path: f"https://{host}.example/{path}",
    st.from_regex(r"[a-z]{1,10}", fullmatch=True),
    st.from_regex(r"[a-z0-9/]{0,20}", fullmatch=True),
)
vendor_keys = st.from_regex(r"[a-z]{2,8}_[a-zA-Z]{1,10}", fullmatch=True)

descriptors = st.builds(
    lambda uri, digest, name, extra: ResourceDescriptor(
        uri=uri, digest={"sha256": digest}, name=name, extensions=extra
    ),
    uris,
    hex64,
    st.none() | names,
    st.dictionaries(vendor_keys, json_values, max_size=2),
)


@st.composite
def provenance_statements(draw: st.DrawFn) -> dict[str, Any]:
    predicate: dict[str, Any] = {
        "buildDefinition": {
            "buildType": draw(uris),
            "externalParameters": draw(
                st.dictionaries(
                    st.text(min_size=1, max_size=10), json_values, min_size=1, max_size=4
                )
            ),
            "resolvedDependencies": [d.to_dict() for d in draw(st.lists(descriptors, max_size=3))],
        },
        "runDetails": {"builder": {"id": draw(uris)}},
    }
    predicate.update(draw(st.dictionaries(vendor_keys, json_values, max_size=2)))
    statement: dict[str, Any] = {
        "_type": "https://in-toto.io/Statement/v1",
        "subject": [d.to_dict() for d in draw(st.lists(descriptors, min_size=1, max_size=3))],
        "predicateType": "https://slsa.dev/provenance/v1",
        "predicate": predicate,
    }
    statement.update(
        draw(
            st.dictionaries(
                st.from_regex(r"https://x\.example/[a-z]{1,5}", fullmatch=True),
                json_values,
                max_size=2,
            )
        )
    )
    return statement


@settings(max_examples=150, deadline=None)
@given(provenance_statements())
def test_parse_serialize_round_trip(raw: dict[str, Any]) -> None:
    statement = parse_statement(orjson.dumps(raw))
    assert statement.to_dict() == raw
    assert orjson.loads(statement.to_json()) == raw
    assert Statement.from_dict(statement.to_dict()) == statement
    # Vendor and URI-named extensions never make a well-formed statement invalid.
    assert [f for f in validate(statement) if f.severity == "error"] == []
    assert migrate(statement).statement == statement


@settings(max_examples=100, deadline=None)
@given(
    subject=st.lists(descriptors, min_size=1, max_size=3),
    verifier=uris,
    levels=st.lists(
        st.sampled_from(
            ["SLSA_BUILD_LEVEL_1", "SLSA_SOURCE_LEVEL_2", "SLSA_BUILD_REPRODUCED", "ACME_OK"]
        ),
        unique=True,
        max_size=3,
    ),
    counts=st.dictionaries(
        st.sampled_from(["SLSA_BUILD_LEVEL_1", "SLSA_BUILD_LEVEL_3"]), st.integers(0, 10**6)
    ),
    policy=descriptors,
)
def test_built_summaries_round_trip_and_validate(
    subject: list[ResourceDescriptor],
    verifier: str,
    levels: list[str],
    counts: dict[str, int],
    policy: ResourceDescriptor,
) -> None:
    summary = VerificationSummaryV1(
        verifier_id=verifier,
        time_verified="2026-11-22T12:00:00Z",
        resource_uri="https://example.com/a",
        policy=policy,
        verification_result="PASSED",
        verified_levels=levels,
        dependency_levels=counts,
    )
    statement = build_vsa_statement(subject, summary)
    again = parse_statement(statement.to_json())
    assert again == statement
    assert again.verification_summary_v1().verified_levels == tuple(levels)
    assert again.verification_summary_v1().dependency_levels == counts
    assert [f for f in validate(again) if f.severity == "error"] == []


@settings(max_examples=200, deadline=None)
@given(json_values)
def test_validate_never_raises_on_arbitrary_json(value: Any) -> None:
    for document in (
        value,
        {"predicateType": "https://slsa.dev/provenance/v1", "predicate": value},
    ):
        findings = validate(document)
        assert all(f.path.startswith("$") and f.message for f in findings)


@settings(max_examples=200, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(
            [
                "buildDefinition",
                "runDetails",
                "verifier",
                "policy",
                "verifiedLevels",
                "verificationResult",
                "builder",
                "recipe",
                "materials",
                "metadata",
                "invocation",
                "dependencyLevels",
                "inputAttestations",
            ]
        ),
        json_values,
        max_size=6,
    ),
    st.sampled_from(
        [
            "https://slsa.dev/provenance/v1",
            "https://slsa.dev/provenance/v0.2",
            "https://slsa.dev/provenance/v0.1",
            "https://slsa.dev/verification_summary/v1",
        ]
    ),
)
def test_validate_never_raises_on_malformed_predicates(
    predicate: dict[str, Any], predicate_type: str
) -> None:
    document = {
        "_type": "https://in-toto.io/Statement/v1",
        "subject": [{"digest": {"sha256": "0" * 64}}],
        "predicateType": predicate_type,
        "predicate": predicate,
    }
    findings = validate(document)
    statement = Statement.from_dict(document)
    assert statement.to_dict() == document
    typed = statement.typed_predicate()
    assert typed is not None
    assert isinstance(findings, list)
    _read_everything(typed)


def _read_everything(view: Any) -> None:
    """Every typed reader returns a value of its declared shape, never raises."""
    if isinstance(view, ProvenanceV1):
        assert isinstance(view.external_parameters, dict)
        assert view.builder_id is None or isinstance(view.builder_id, str)
        _ = [d.digest for d in view.resolved_dependencies]
        _ = view.run_details.metadata.started_on, view.run_details.byproducts
        _ = view.run_details.builder.version, view.run_details.builder.builder_dependencies
    elif isinstance(view, ProvenanceV02):
        _ = view.builder_id, view.build_type, view.build_config
        _ = view.invocation.config_source.digest, view.invocation.parameters
        _ = [m.uri for m in view.materials], view.metadata.completeness.materials
    elif isinstance(view, ProvenanceV01):
        recipe = view.recipe
        _ = recipe and (recipe.type, recipe.defined_in_material, recipe.arguments)
        _ = view.builder_id, view.metadata.reproducible, [m.digest for m in view.materials]
    else:
        assert isinstance(view, VerificationSummaryV1)
        assert isinstance(view.verified_levels, tuple)
        _ = view.dependency_levels, view.policy.uri, view.verifier.version
        _ = [a.digest for a in view.input_attestations], view.time_verified


# The fast path must never accept what the detailed validator would report on.
from assay.attestation._fast import clean_provenance_v1  # noqa: E402
from assay.attestation.validate import validate_in_detail  # noqa: E402

from .cases import CASES, apply  # noqa: E402
from .samples import provenance_v1  # noqa: E402

_MUTATION_PATHS = [
    ("_type",),
    ("predicateType",),
    ("subject",),
    ("subject", 0),
    ("subject", 0, "digest"),
    ("subject", 0, "digest", "sha256"),
    ("subject", 0, "name"),
    ("subject", 0, "uri"),
    ("predicate",),
    ("predicate", "buildDefinition"),
    ("predicate", "buildDefinition", "buildType"),
    ("predicate", "buildDefinition", "externalParameters"),
    ("predicate", "buildDefinition", "internalParameters"),
    ("predicate", "buildDefinition", "internalParameters", "workflow"),
    ("predicate", "buildDefinition", "resolvedDependencies"),
    ("predicate", "buildDefinition", "resolvedDependencies", 0),
    ("predicate", "buildDefinition", "resolvedDependencies", 0, "uri"),
    ("predicate", "buildDefinition", "resolvedDependencies", 0, "digest"),
    ("predicate", "buildDefinition", "resolvedDependencies", 0, "content"),
    ("predicate", "buildDefinition", "resolvedDependencies", 0, "annotations"),
    ("predicate", "buildDefinition", "acme_x"),
    ("predicate", "buildDefinition", "x"),
    ("predicate", "runDetails"),
    ("predicate", "runDetails", "builder"),
    ("predicate", "runDetails", "builder", "id"),
    ("predicate", "runDetails", "builder", "version"),
    ("predicate", "runDetails", "builder", "builderDependencies"),
    ("predicate", "runDetails", "metadata"),
    ("predicate", "runDetails", "metadata", "startedOn"),
    ("predicate", "runDetails", "metadata", "invocationId"),
    ("predicate", "runDetails", "byproducts"),
    ("extra",),
]
_ODD_VALUES = st.sampled_from(
    [
        None,
        "",
        "x",
        "https://a.example/b",
        "A" * 64,
        "a" * 64,
        "2026-11-22T10:00:00Z",
        0,
        -1,
        True,
        [],
        {},
        [{}],
        [None],
        {"sha256": "a" * 64},
        {"uri": "u"},
        {"name": "n"},
        {"k": 1},
    ]
)


@settings(max_examples=600, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_MUTATION_PATHS), _ODD_VALUES), min_size=1, max_size=3))
def test_fast_path_never_accepts_what_detail_rejects(
    edits: list[tuple[tuple[Any, ...], Any]],
) -> None:
    document = provenance_v1()
    for where, value in edits:
        try:
            apply(document, where, copy.deepcopy(value))
        except (KeyError, IndexError, TypeError):
            continue
    if clean_provenance_v1(document):
        assert validate_in_detail(document) == []
    assert validate(document) == validate_in_detail(document)


def test_fast_path_takes_the_clean_base_and_refuses_every_case() -> None:
    assert clean_provenance_v1(provenance_v1())
    for case in CASES:
        if case.edits[0][0] != ():
            assert not clean_provenance_v1(case.document()), case.id
