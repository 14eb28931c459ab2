"""Dependency level resolution (pure): walk `resolvedDependencies` through evidence.

For each non-source dependency the resolver returns evidence found for its digest: its
own provenance (verified, with its dependencies to walk in turn) or a trusted VSA (with
its `verifiedLevels` and `dependencyLevels`). Each dependency is counted once at its
highest verified level; a dependency without evidence is counted at level 0 (SLSA's
"no guarantees"), so a summary never hides unverified dependencies. Cycles are reported.
Levels are ints here; `SLSA_BUILD_LEVEL_n` names are made only for the wire.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from assay.policy.model import DependencyRule
from assay.results import Check
from assay.verify.claims import Dependency

MAX_DEPTH: Final = 64
"""Deeper dependency chains are reported rather than followed."""

_PREFERRED: Final = ("sha256", "sha512", "sha384", "gitCommit", "sha1")
_BUILD_LEVEL: Final = re.compile(r"SLSA_BUILD_LEVEL_([0-9])")


def build_level_name(level: int) -> str:
    """`SLSA_BUILD_LEVEL_n`, the wire name of a build level."""
    return f"SLSA_BUILD_LEVEL_{level}"


def parse_build_level(name: str) -> int | None:
    """The int of a real build level name (`SLSA_BUILD_LEVEL_0`..`_3`), else None."""
    match = _BUILD_LEVEL.fullmatch(name)
    if match is None or int(match.group(1)) > 3:
        return None
    return int(match.group(1))


@dataclass(frozen=True, slots=True)
class Evidence:
    """What was verified about one dependency."""

    kind: str  # "provenance" or "vsa"
    level: int
    source: str
    """The attestation that gave this evidence (a file name)."""
    dependencies: tuple[Dependency, ...] = ()
    """For provenance: the dependency's own resolvedDependencies, walked in turn."""
    dependency_levels: Mapping[int, int] | None = None
    """For a VSA: the counts it claims for its own dependencies (build level -> count)."""
    resource_uri: str | None = None


Resolver = Callable[[Dependency], Sequence[Evidence]]


@dataclass(slots=True)
class DependencyResult:
    levels: dict[int, int] = field(default_factory=dict)
    """Build level -> number of dependencies verified at it; 0 counts the unverified."""
    resolved: dict[str, tuple[int, str]] = field(default_factory=dict)
    """Dependency key -> (level, evidence source)."""
    missing: list[str] = field(default_factory=list)
    """Dependencies without evidence (counted at level 0)."""
    cycles: list[str] = field(default_factory=list)
    checks: list[Check] = field(default_factory=list)
    evidence_given: bool = True
    """Whether an evidence source was given at all."""
    rejected: list[str] = field(default_factory=list)
    """Evidence that was offered but did not verify (never used)."""

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks)

    @property
    def unverified(self) -> int:
        """How many dependencies have no verified evidence."""
        return len(self.missing)

    def level_names(self) -> dict[str, int]:
        """`dependencyLevels` as a VSA writes it."""
        return {build_level_name(level): count for level, count in sorted(self.levels.items())}

    def to_dict(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "levels": {str(level): count for level, count in sorted(self.levels.items())},
            "unverified": self.missing,
            "evidenceGiven": self.evidence_given,
            "resolved": {
                key: {"level": level, "evidence": source}
                for key, (level, source) in self.resolved.items()
            },
            "cycles": self.cycles,
            "rejectedEvidence": self.rejected,
            "checks": [check.to_dict() for check in self.checks],
        }


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
    dependencies: Sequence[Dependency],
    resolver: Resolver,
    rule: DependencyRule | None,
    *,
    evidence_given: bool = True,
) -> DependencyResult:
    """Resolve the artifact's non-source dependencies transitively and check `rule`."""
    result = DependencyResult(evidence_given=evidence_given)
    claimed: Counter[int] = Counter()
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
                reason = (
                    "no provenance or trusted VSA found for its digest"
                    if evidence_given
                    else "no evidence for dependencies was given"
                )
                result.checks.append(
                    Check(
                        "dependency",
                        False,
                        rule.minimum_level,
                        None,
                        reason,
                        subject=dependency.uri or key,
                    )
                )
            return
        best = _best(evidence, dependency)
        result.resolved[key] = (best.level, best.source)
        if rule.minimum_level > 0 and not excepted:
            result.checks.append(
                Check(
                    "dependency",
                    best.level >= rule.minimum_level,
                    rule.minimum_level,
                    best.level,
                    f"from {best.source}",
                    subject=dependency.uri or key,
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
    counts: Counter[int] = Counter(level for level, _ in result.resolved.values())
    if result.missing:
        counts[0] += len(result.missing)
    counts.update(claimed)
    result.levels = dict(sorted(counts.items()))
    if result.cycles:
        result.checks.append(
            Check("dependencies (cycles)", False, "no cycles", result.cycles, "dependency cycle")
        )
    return result
