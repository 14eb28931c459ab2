"""A provenance statement's dependencies are read once: `assay scan` (an unverified
statement) and `assay verify`'s `vulnerabilities:` check (a verified one) see the same
components, and refuse the same malformed purl with the same reason. Before, the check
took `pkg:not a purl` as a component named after itself and silently dropped a
dependency known only by its name."""

from __future__ import annotations

from typing import Any

import pytest

from assay.audit.check import dependency_inventory
from assay.audit.inputs.purls import provenance_inventory
from assay.errors import AssayError, InputError
from assay.policy.model import Policy
from assay.verify.claims import read_claims
from assay.verify.dependency_check import DependencyCheckInput


def _statement(*dependencies: dict[str, Any]) -> dict[str, Any]:
    return {
        "_type": "https://in-toto.io/Statement/v1",
        "subject": [{"name": "app", "digest": {"sha256": "a" * 64}}],
        "predicateType": "https://slsa.dev/provenance/v1",
        "predicate": {
            "buildDefinition": {
                "buildType": "https://example.com/build/v1",
                "externalParameters": {},
                "resolvedDependencies": list(dependencies),
            },
            "runDetails": {"builder": {"id": "https://example.com/builder"}},
        },
    }


def _scanned(statement: dict[str, Any]) -> list[tuple[str, str | None]]:
    inventory = provenance_inventory(statement, "prov.json", "prov.json: $", notes=())
    return [(c.name, c.version) for c in inventory.components]


def _checked(statement: dict[str, Any]) -> list[tuple[str, str | None]]:
    claims = read_claims(statement)
    subject = DependencyCheckInput(
        policy=Policy(uri="policy", digest={}, signers=(), build_types=()),
        subjects=claims.subjects,
        dependencies=claims.dependencies,
    )
    return [(c.name, c.version) for i in dependency_inventory(subject) for c in i.components]


def test_a_malformed_purl_is_refused_by_scan_and_by_the_check_alike() -> None:
    statement = _statement(
        {"uri": "pkg:npm/left-pad@1.3.0", "digest": {"sha256": "b" * 64}},
        {"uri": "pkg:not a purl", "digest": {"sha256": "c" * 64}},
    )
    with pytest.raises(InputError) as scanned:
        _scanned(statement)
    with pytest.raises(AssayError) as checked:
        _checked(statement)
    assert scanned.value.reason == checked.value.reason
    assert checked.value.where.endswith("[1].uri")


def test_a_dependency_known_by_its_name_only_is_a_component_for_both() -> None:
    statement = _statement(
        {"uri": "pkg:npm/left-pad@1.3.0", "digest": {"sha256": "b" * 64}},
        {"name": "vendored-zlib", "digest": {"sha256": "d" * 64}},
        {
            "uri": "git+https://github.com/example/app@refs/heads/main",
            "digest": {"gitCommit": "e" * 40},
        },
    )
    scanned = _scanned(statement)
    assert ("vendored-zlib", None) in scanned
    assert _checked(statement) == scanned
