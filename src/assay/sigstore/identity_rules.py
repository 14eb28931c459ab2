"""Certificate identities as trusted signers: what a policy's `identity:` block requires.

    rule = IdentityRule.from_mapping(
        {"issuer": "https://token.actions.githubusercontent.com",
         "subjectPattern": "https://github\\\\.com/acme/.+@refs/tags/v.+",
         "sourceRepository": "https://github.com/acme/widget",
         "runnerEnvironment": "github-hosted"}, "policy.yaml: $.signers[0].identity")
    rule.checks(verified.identity)     # one Check per requirement, with expected and found

The SAN matches exactly (`subject`) or as a whole against a pattern (`subjectPattern`,
`re.fullmatch`: no partial match, no trailing newline through `$`). Every other key
names a Fulcio extension and must be equal.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from assay.errors import AttestationError
from assay.sigstore.identity import CertificateIdentity
from assay.verify.checks import Check

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
        unknown = sorted(set(data) - KEYS)
        if unknown:
            raise AttestationError(
                f"{where}.{unknown[0]}", f"unknown key; expected one of {', '.join(sorted(KEYS))}"
            )
        values: dict[str, str] = {}
        for key, value in data.items():
            if not isinstance(value, str) or not value:
                raise AttestationError(
                    f"{where}.{key}", f"expected a non-empty string, got {value!r}"
                )
            values[key] = value
        if "issuer" not in values:
            raise AttestationError(f"{where}.issuer", "expected the OIDC issuer")
        if ("subject" in values) == ("subjectPattern" in values):
            raise AttestationError(where, "expected exactly one of subject or subjectPattern")
        pattern = None
        if "subjectPattern" in values:
            try:
                pattern = re.compile(values["subjectPattern"])
            except re.error as error:
                raise AttestationError(
                    f"{where}.subjectPattern", f"expected a regular expression: {error}"
                ) from None
        return cls(
            issuer=values["issuer"],
            subject=values.get("subject"),
            subject_pattern=pattern,
            extensions={k: v for k, v in values.items() if k in EXTENSIONS},
        )

    def checks(self, identity: CertificateIdentity) -> list[Check]:
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
            found = getattr(identity, EXTENSIONS[key])
            result.append(Check(f"identity.{key}", found == want, want, found))
        return result

    def matches(self, identity: CertificateIdentity) -> bool:
        return all(check.passed for check in self.checks(identity))
