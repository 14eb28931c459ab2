from __future__ import annotations

from collections.abc import Sequence

from assay.policy import DependencyRule
from assay.verify.claims import Dependency
from assay.verify.levels import Evidence, resolve_dependencies


def dep(name: str, uri: str | None = None) -> Dependency:
    return Dependency(uri or f"pkg:generic/{name}", {"sha256": name * 4}, False)


def resolver(table: dict[str, list[Evidence]]):  # type: ignore[no-untyped-def]
    def resolve(dependency: Dependency) -> Sequence[Evidence]:
        return table.get(dependency.digest["sha256"][:2], [])

    return resolve


def test_no_dependencies_gives_empty_levels() -> None:
    source = Dependency("git+https://github.com/o/r@refs/heads/main", {"gitCommit": "a" * 40}, True)
    result = resolve_dependencies([source], resolver({}), None)
    assert result.levels == {}
    assert result.passed


def test_each_dependency_counted_once_at_its_highest_level() -> None:
    a, b = dep("aa"), dep("bb")
    table = {
        "aa": [Evidence("provenance", 2, "a.prov", (b,)), Evidence("vsa", 3, "a.vsa")],
        "bb": [Evidence("provenance", 1, "b.prov")],
    }
    # b reached twice (directly and through a's provenance), but a's best evidence is the VSA.
    result = resolve_dependencies([a, b, b], resolver(table), None)
    assert result.levels == {1: 1, 3: 1}
    assert result.level_names() == {"SLSA_BUILD_LEVEL_1": 1, "SLSA_BUILD_LEVEL_3": 1}
    assert result.resolved["sha256:" + "aa" * 4] == (3, "a.vsa")


def test_transitive_provenance_and_vsa_counts() -> None:
    a, b = dep("aa"), dep("bb")
    table = {
        "aa": [Evidence("provenance", 3, "a", (b,))],
        "bb": [Evidence("vsa", 2, "b", dependency_levels={3: 4})],
    }
    result = resolve_dependencies([a], resolver(table), None)
    assert result.levels == {2: 1, 3: 5}


def test_cycles_are_reported() -> None:
    a, b = dep("aa"), dep("bb")
    table = {
        "aa": [Evidence("provenance", 3, "a", (b,))],
        "bb": [Evidence("provenance", 3, "b", (a,))],
    }
    result = resolve_dependencies([a], resolver(table), None)
    assert result.cycles
    assert "->" in result.cycles[0]
    assert not result.passed


def test_minimum_level_missing_evidence_and_exceptions() -> None:
    a, b, c = dep("aa"), dep("bb"), dep("cc", uri="pkg:npm/left-pad@1.0.0")
    table = {"aa": [Evidence("provenance", 3, "a")], "bb": [Evidence("provenance", 1, "b")]}
    rule = DependencyRule(minimum_level=2, exceptions=("pkg:npm/",))
    result = resolve_dependencies([a, b, c], resolver(table), rule)
    failed = [(check.name, check.subject) for check in result.checks if not check.passed]
    assert failed == [("dependency", "pkg:generic/bb")]
    assert result.missing == ["sha256:" + "cc" * 4]
    # The dependency without evidence is counted at level 0, never left out.
    assert result.levels == {0: 1, 1: 1, 3: 1}
    strict = resolve_dependencies([a, c], resolver(table), DependencyRule(minimum_level=2))
    assert [(c.subject, c.found) for c in strict.checks if not c.passed] == [
        ("pkg:npm/left-pad@1.0.0", None)
    ]
