"""Dependency level resolution (pure): walk `resolvedDependencies` through evidence.

For each non-source dependency the resolver returns evidence found for its digest: its
own provenance (verified, with its dependencies to walk in turn) or a trusted VSA (with
its `verifiedLevels` and `dependencyLevels`). Each dependency is counted once per track
at its highest verified level; cycles and dependencies without evidence are reported.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from assay.policy.model import DependencyRule
from assay.verify.checks import Check
from assay.verify.claims import Dependency

MAX_DEPTH: Final = 64
"""Deeper dependency chains are reported rather than followed."""

_PREFERRED: Final = ("sha256", "sha512", "sha384", "gitCommit", "sha1")


@dataclass(frozen=True, slots=True)
class Evidence:
    """What was verified about one dependency."""

    kind: str  # "provenance" or "vsa"
    level: int
    source: str
    """The attestation that gave this evidence (a file name)."""
    dependencies: tuple[Dependency, ...] = ()
    """For provenance: the dependency's own resolvedDependencies, walked in turn."""
    dependency_levels: Mapping[str, int] | None = None
    """For a VSA: the counts it claims for its own dependencies."""
    resource_uri: str | None = None


Resolver = Callable[[Dependency], Sequence[Evidence]]


@dataclass(slots=True)
class DependencyResult:
    levels: dict[str, int] = field(default_factory=dict)
    """`dependencyLevels` for the VSA: `SLSA_BUILD_LEVEL_n` -> count."""
    resolved: dict[str, tuple[int, str]] = field(default_factory=dict)
    """Dependency key -> (level, evidence source)."""
    missing: list[str] = field(default_factory=list)
    cycles: list[str] = field(default_factory=list)
    checks: list[Check] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks)


def dependency_key(dependency: Dependency) -> str:
    """A stable identity: the preferred digest, else the URI."""
    for algorithm in _PREFERRED:
        if algorithm in dependency.digest:
            return f"{algorithm}:{dependency.digest[algorithm].lower()}"
    if dependency.digest:
        algorithm = sorted(dependency.digest)[0]
        return f"{algorithm}:{dependency.digest[algorithm]}"
    return f"uri:{dependency.uri}"


def _best(evidence: Sequence[Evidence], dependency: Dependency) -> Evidence:
    # Highest level first; at equal level prefer a VSA about this very resource URI.
    return max(
        evidence,
        key=lambda e: (e.level, e.kind == "vsa" and e.resource_uri == dependency.uri),
    )


def resolve_dependencies(
    dependencies: Sequence[Dependency], resolver: Resolver, rule: DependencyRule | None
) -> DependencyResult:
    """Resolve the artifact's non-source dependencies transitively and check `rule`."""
    result = DependencyResult()
    claimed: Counter[str] = Counter()
    rule = rule or DependencyRule()

    def walk(dependency: Dependency, stack: tuple[str, ...]) -> None:
        key = dependency_key(dependency)
        if key in stack:
            result.cycles.append(" -> ".join((*stack, key)))
            return
        if key in result.resolved or key in result.missing:
            return  # counted once, however many paths lead to it
        if len(stack) >= MAX_DEPTH:
            result.cycles.append(f"{key}: deeper than {MAX_DEPTH} levels, not followed")
            return
        excepted = rule.excepts(dependency.uri, dependency.digest)
        evidence = list(resolver(dependency)) if dependency.digest else []
        if not evidence:
            result.missing.append(key)
            if rule.minimum_level > 0 and not excepted:
                result.checks.append(
                    Check(
                        f"dependency[{dependency.uri or key}]",
                        False,
                        f"SLSA_BUILD_LEVEL_{rule.minimum_level} or higher",
                        None,
                        "no provenance or trusted VSA found for its digest",
                    )
                )
            return
        best = _best(evidence, dependency)
        result.resolved[key] = (best.level, best.source)
        if rule.minimum_level > 0 and not excepted:
            result.checks.append(
                Check(
                    f"dependency[{dependency.uri or key}]",
                    best.level >= rule.minimum_level,
                    f"SLSA_BUILD_LEVEL_{rule.minimum_level} or higher",
                    f"SLSA_BUILD_LEVEL_{best.level}",
                    f"from {best.source}",
                )
            )
        if best.kind == "provenance":
            for child in best.dependencies:
                if not child.is_source:
                    walk(child, (*stack, key))
        elif best.dependency_levels:
            claimed.update({k: v for k, v in best.dependency_levels.items() if v > 0})

    for dependency in dependencies:
        if not dependency.is_source:
            walk(dependency, ())
    counts: Counter[str] = Counter(
        f"SLSA_BUILD_LEVEL_{level}" for level, _ in result.resolved.values()
    )
    counts.update(claimed)
    result.levels = dict(sorted(counts.items()))
    if result.cycles:
        result.checks.append(
            Check("dependencies (cycles)", False, "no cycles", result.cycles, "dependency cycle")
        )
    return result
