"""Certificate identities as trusted signers: what a policy's `identity:` block requires.

    rule = IdentityRule.from_mapping(
        {"issuer": "https://token.actions.githubusercontent.com",
         "subjectPattern": "https://github\\\\.com/acme/.+@refs/tags/v.+",
         "sourceRepository": "https://github.com/acme/widget",
         "runnerEnvironment": "github-hosted"}, "policy.yaml: $.signers[0].identity")
    rule.checks(verified.identity)     # one Check per requirement, with expected and found

The SAN matches exactly (`subject`) or as a whole against a pattern (`subjectPattern`,
`re.fullmatch`: no partial match, no trailing newline through `$`). Every other key
names a Fulcio extension and must be equal. Certificates issued before Fulcio wrote the
source-repository extensions (slsa-github-generator before 2023) carry only the
deprecated GitHub ones; `sourceRepository`, `sourceRepositoryRef`,
`sourceRepositoryDigest` and `buildTrigger` then read those, as slsa-verifier does.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final, Protocol

from assay.errors import AttestationError
from assay.sigstore.identity import CertificateIdentity

if TYPE_CHECKING:
    from assay.results import Check

EXTENSIONS: Final = {
    "sourceRepository": "source_repository_uri",
    "sourceRepositoryRef": "source_repository_ref",
    "sourceRepositoryDigest": "source_repository_digest",
    "sourceRepositoryOwner": "source_repository_owner_uri",
    "buildSignerUri": "build_signer_uri",
    "buildSignerDigest": "build_signer_digest",
    "buildConfigUri": "build_config_uri",
    "workflowRef": "github_workflow_ref",
    "buildTrigger": "build_trigger",
    "runnerEnvironment": "runner_environment",
}
KEYS: Final = frozenset({"issuer", "subject", "subjectPattern", *EXTENSIONS})


def extension_value(identity: CertificateIdentity, key: str) -> str | None:
    """The certificate's value for a policy key, the deprecated extension standing in
    for a newer one the certificate does not carry."""
    value: str | None = getattr(identity, EXTENSIONS[key])
    if value is not None:
        return value
    if key == "sourceRepository" and identity.github_workflow_repository:
        return f"https://github.com/{identity.github_workflow_repository}"
    if key == "sourceRepositoryRef":
        return identity.github_workflow_ref
    if key == "sourceRepositoryDigest":
        return identity.github_workflow_sha
    if key == "buildTrigger":
        return identity.github_workflow_trigger
    return None


class CertificateRules(Protocol):
    """What a certificate must show, as one named check per requirement.

    `IdentityRule` (a policy file's `identity:` block) is one; the built-in policies of
    slsa-verifier's and gh's modes are others (`assay.policy.slsa_github.GeneratorIdentity`,
    `assay.policy.gh_attestation.GhPolicy`): their checks carry upstream's names
    (`certificate.builder`, `certificate.sourceRepositoryOwnerUri`, ...)."""

    def checks(self, identity: CertificateIdentity) -> list[Check]:
        """One check per requirement, each with what was expected and what was found."""
        ...


@dataclass(frozen=True, slots=True)
class IdentityRule:
    """The certificate a Sigstore signer must present."""

    issuer: str
    subject: str | None = None
    subject_pattern: re.Pattern[str] | None = None
    extensions: dict[str, str] = field(default_factory=dict)
    """Policy key (`sourceRepository`, …) -> the exact value required."""

    @classmethod
    def from_mapping(cls, data: Mapping[str, object], where: str) -> IdentityRule:
        values = _rule_values(data, where)
        if "issuer" not in values:
            raise AttestationError(f"{where}.issuer", "expected the OIDC issuer")
        if ("subject" in values) == ("subjectPattern" in values):
            raise AttestationError(where, "expected exactly one of subject or subjectPattern")
        return cls(
            issuer=values["issuer"],
            subject=values.get("subject"),
            subject_pattern=_subject_pattern(values.get("subjectPattern"), where),
            extensions={k: v for k, v in values.items() if k in EXTENSIONS},
        )

    def describe(self) -> str:
        san = (
            self.subject
            if self.subject is not None
            else f"/{self.subject_pattern.pattern if self.subject_pattern else ''}/"
        )
        pins = "".join(f", {key} {value}" for key, value in self.extensions.items())
        return f"certificate from {self.issuer} for {san}{pins}"

    def checks(self, identity: CertificateIdentity) -> list[Check]:
        from assay.results import Check

        result = [
            Check("identity.issuer", identity.issuer == self.issuer, self.issuer, identity.issuer)
        ]
        san = identity.san
        if self.subject is not None:
            result.append(Check("identity.subject", san == self.subject, self.subject, san))
        elif self.subject_pattern is not None:
            matched = san is not None and self.subject_pattern.fullmatch(san) is not None
            result.append(
                Check(
                    "identity.subject",
                    matched,
                    {"pattern": self.subject_pattern.pattern},
                    san,
                )
            )
        for key, want in self.extensions.items():
            found = extension_value(identity, key)
            result.append(Check(f"identity.{key}", found == want, want, found))
        return result

    def matches(self, identity: CertificateIdentity) -> bool:
        return all(check.passed for check in self.checks(identity))


def _rule_values(data: Mapping[str, object], where: str) -> dict[str, str]:
    """The rule's keys, each known and a non-empty string."""
    unknown = sorted(set(data) - KEYS)
    if unknown:
        raise AttestationError(
            f"{where}.{unknown[0]}", f"unknown key; expected one of {', '.join(sorted(KEYS))}"
        )
    values: dict[str, str] = {}
    for key, value in data.items():
        if not isinstance(value, str) or not value:
            raise AttestationError(f"{where}.{key}", f"expected a non-empty string, got {value!r}")
        values[key] = value
    return values


def _subject_pattern(source: str | None, where: str) -> re.Pattern[str] | None:
    if source is None:
        return None
    try:
        return re.compile(source)
    except re.error as error:
        raise AttestationError(
            f"{where}.subjectPattern", f"expected a regular expression: {error}"
        ) from None
