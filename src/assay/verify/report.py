"""The verdict of one `Verifier` run, whatever policy it ran: a policy file or a mode's
built-in policy.

    report.passed        # every artifact covered, and every check beyond them passed
    report.level         # the build level every artifact reached (an int), or None
    report.artifacts     # one `Coverage` per artifact: its own verdict
    report.attestations  # one evaluation per signed item, in the order given

Nothing outside this object may change the verdict; commands and pages only format it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from assay.policy.builtin import ModePolicy
from assay.policy.model import Policy
from assay.results import Check
from assay.verify.dependency_check import DependencyCheckResult
from assay.verify.levels import DependencyResult, build_level_name
from assay.verify.pipeline import Coverage, Evaluation

__all__ = ["TLOG_WAIVED_LEVEL", "ArtifactResult", "EvaluationT", "PolicyT", "Report"]

TLOG_WAIVED_LEVEL = "ASSAY_TRANSPARENCY_LOG_WAIVED"
"""Listed in a VSA's `verifiedLevels` when a passing attestation was accepted without a
transparency-log entry (`insecure_ignore_tlog`): a VSA never hides the waiver."""

PolicyT = TypeVar("PolicyT", bound="Policy | ModePolicy")
EvaluationT = TypeVar("EvaluationT", bound=Evaluation)

ArtifactResult = Coverage
"""One artifact's own verdict in a report."""


@dataclass(slots=True)
class Report(Generic[PolicyT, EvaluationT]):
    """The verdict and everything it rests on; `passed` is final."""

    policy: PolicyT
    artifacts: list[ArtifactResult]
    attestations: list[EvaluationT]
    extra_checks: list[Check] = field(default_factory=list)
    dependencies: DependencyResult | None = None
    """Dependency levels, when something passed (None: nothing was verified, or the
    policy asks for none)."""
    dependency_checks: list[DependencyCheckResult] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        # The dependency results pass exactly when each of their checks does.
        return (
            bool(self.artifacts)
            and all(a.passed for a in self.artifacts)
            and all(check.passed for check in self._checks_beyond_artifacts())
        )

    @property
    def level(self) -> int | None:
        """The build level every artifact reached (the lowest among them)."""
        levels = [a.level for a in self.artifacts]
        if not levels or any(level is None for level in levels):
            return None
        return min(level for level in levels if level is not None)

    @property
    def transparency_log_waived(self) -> bool:
        """A passing attestation was accepted without a transparency-log entry."""
        covering = {id(e) for a in self.artifacts for e in a.covering}
        return any(e.tlog_waived for e in self.attestations if id(e) in covering)

    @property
    def dependency_levels(self) -> dict[int, int] | None:
        """Build level -> number of dependencies at it (0: unverified), or None."""
        return None if self.dependencies is None else dict(self.dependencies.levels)

    @property
    def verified_levels(self) -> list[str]:
        """The VSA's `verifiedLevels` for this verdict (`["FAILED"]` when it failed)."""
        if not self.passed or self.level is None:
            return ["FAILED"]
        extra = [
            level
            for result in self.dependency_checks
            if result.passed
            for level in result.verified_levels
        ]
        if self.transparency_log_waived:
            extra.append(TLOG_WAIVED_LEVEL)
        return [build_level_name(self.level), *dict.fromkeys(extra)]

    def all_checks(self) -> list[Check]:
        """Every check made, attestation checks first."""
        found = [check for a in self.attestations for check in a.checks]
        return found + self._checks_beyond_artifacts()

    def _checks_beyond_artifacts(self) -> list[Check]:
        """The extra checks, then the dependency levels' checks and the dependency checks."""
        found = list(self.extra_checks)
        if self.dependencies is not None:
            found += self.dependencies.checks
        return found + [check for result in self.dependency_checks for check in result.checks]

    def failures(self) -> list[Check]:
        return [check for check in self.all_checks() if not check.passed]

    def to_dict(self) -> dict[str, Any]:
        result: dict[str, Any] = {
            "passed": self.passed,
            "level": self.level,
            "policy": _policy_dict(self.policy),
            "artifacts": [
                {
                    "name": a.artifact.name,
                    "digest": a.artifact.digest,
                    "passed": a.passed,
                    "level": a.level,
                    "attestations": a.attestations,
                }
                for a in self.artifacts
            ],
            "attestations": [a.to_dict() for a in self.attestations],
            "checks": [check.to_dict() for check in self.extra_checks],
            "transparencyLogWaived": self.transparency_log_waived,
        }
        if self.dependencies is not None:
            result["dependencyLevels"] = self.dependencies.level_names()
            result["dependencies"] = self.dependencies.to_dict()
        if self.dependency_checks:
            result["dependencyChecks"] = [r.to_dict() for r in self.dependency_checks]
        return result


def _policy_dict(policy: Policy | ModePolicy) -> dict[str, Any]:
    # A built-in policy is code shipped with assay: its URI names it, no file digest does.
    if isinstance(policy, Policy):
        return {"uri": policy.uri, "digest": policy.digest}
    return {"uri": policy.uri}
