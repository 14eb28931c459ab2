"""`gh attestation verify`'s rules, as a built-in policy of the certificate identity.

    policy = GhPolicy(owner="sigstore", repo="sigstore/sigstore-js")
    policy.describe()                      # the criteria gh prints
    policy.checks(verified.identity)       # one Check per criterion
    Verifier(policy=policy.mode_policy(), trust=trust).verify(artifacts, bundles)  # assay.verify

What gh's flags require of a bundle's certificate: the source repository owner (or the
repository), the signer identity (an exact SAN, a regex, the signer repository or
workflow), the OIDC issuer, optional pins (signer digest, source ref and digest) and a
GitHub-hosted runner. The predicate type is part of the policy too; the predicate's
content is not checked (gh does not either). As gh, the statement is read before the
certificate is judged. `assay.verify.bundle_check` runs it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from assay import protocol
from assay.errors import AttestationError
from assay.policy.builtin import ModePolicy, SignatureForm, StatementRules
from assay.results import Check
from assay.sigstore.identity import CertificateIdentity

DEFAULT_PREDICATE_TYPE: Final = protocol.PROVENANCE_V1
DEFAULT_ISSUER: Final = protocol.GITHUB_ACTIONS_ISSUER
BUILTIN_POLICY_URI: Final = "builtin:gh-attestation"


@dataclass(frozen=True, slots=True)
class GhPolicy:
    """What `gh attestation verify`'s flags require of a bundle's certificate."""

    owner: str
    repo: str | None = None
    hostname: str = "github.com"
    cert_identity: str | None = None
    cert_identity_regex: re.Pattern[str] | None = None
    signer_repo: str | None = None
    signer_workflow: str | None = None
    oidc_issuer: str = DEFAULT_ISSUER
    signer_digest: str | None = None
    source_ref: str | None = None
    source_digest: str | None = None
    predicate_type: str = DEFAULT_PREDICATE_TYPE
    deny_self_hosted_runners: bool = False

    @property
    def server(self) -> str:
        return f"https://{self.hostname}"

    @property
    def signer_workflow_uri(self) -> str | None:
        """`--signer-workflow` as a URI: given with its scheme, with its host (as gh
        accepts `github.com/ORG/REPO/.github/workflows/X.yml`), or as `ORG/REPO/...`."""
        workflow = self.signer_workflow
        if workflow is None or workflow.startswith("https://"):
            return workflow
        if workflow.startswith(f"{self.hostname}/"):
            return f"https://{workflow}"
        return f"{self.server}/{workflow}"

    def san_rule(self) -> tuple[str, str]:
        """('exact'|'regex', value): the signer identity the SAN must show."""
        if self.cert_identity is not None:
            return "exact", self.cert_identity
        if self.cert_identity_regex is not None:
            return "regex", self.cert_identity_regex.pattern
        if self.signer_repo is not None:
            return "regex", f"^{re.escape(self.server)}/{re.escape(self.signer_repo)}/"
        workflow = self.signer_workflow_uri
        if workflow is not None:
            return "regex", f"^{re.escape(workflow)}"
        if self.repo is not None:
            return "regex", f"^{re.escape(self.server)}/{re.escape(self.repo)}/"
        return "regex", f"^{re.escape(self.server)}/{re.escape(self.owner)}/"

    def describe(self) -> list[str]:
        kind, value = self.san_rule()
        lines = [
            f"- Predicate type must match: {self.predicate_type}",
            f"- Source Repository Owner URI must match: {self.server}/{self.owner}",
        ]
        if self.repo:
            lines.append(f"- Source Repository URI must match: {self.server}/{self.repo}")
        lines.append(
            f"- Subject Alternative Name must {'match regex' if kind == 'regex' else 'match'}: {value}"
        )
        lines.append(f"- OIDC Issuer must match: {self.oidc_issuer}")
        if self.deny_self_hosted_runners:
            lines.append("- Action workflow Runner Environment must match: github-hosted")
        return lines

    def mode_policy(self) -> ModePolicy:
        """gh's flags as a built-in policy: bundles only, the statement read first, only
        its predicate type checked, then the certificate."""
        return ModePolicy(
            uri=BUILTIN_POLICY_URI,
            signature=SignatureForm.BUNDLE,
            certificate=self,
            default=StatementRules(predicate_type=self.predicate_type),
            certificate_first=False,
        )

    def checks(self, identity: CertificateIdentity) -> list[Check]:
        """One check per criterion, under gh's names."""
        checks = [
            self._equal(
                "certificate.sourceRepositoryOwnerUri",
                f"{self.server}/{self.owner}",
                identity.source_repository_owner_uri,
            )
        ]
        if self.repo is not None:
            checks.append(
                self._equal(
                    "certificate.sourceRepositoryUri",
                    f"{self.server}/{self.repo}",
                    identity.source_repository_uri,
                )
            )
        checks.append(self._san_check(identity.san))
        checks.append(self._equal("certificate.issuer", self.oidc_issuer, identity.issuer))
        checks.extend(
            self._equal(name, want, found)
            for name, want, found in self._pins(identity)
            if want is not None
        )
        return checks

    def _pins(
        self, identity: CertificateIdentity
    ) -> tuple[tuple[str, str | None, str | None], ...]:
        """(check, the value a flag pins, the certificate's value)."""
        hosted = "github-hosted" if self.deny_self_hosted_runners else None
        return (
            ("certificate.buildSignerDigest", self.signer_digest, identity.build_signer_digest),
            ("certificate.sourceRepositoryRef", self.source_ref, identity.source_repository_ref),
            (
                "certificate.sourceRepositoryDigest",
                self.source_digest,
                identity.source_repository_digest,
            ),
            ("certificate.runnerEnvironment", hosted, identity.runner_environment),
        )

    def _san_check(self, san: str | None) -> Check:
        kind, value = self.san_rule()
        text = san or ""
        matched = text == value if kind == "exact" else re.search(value, text) is not None
        return Check("certificate.san", matched, {kind: value}, san)

    @staticmethod
    def _equal(name: str, want: str, found: str | None) -> Check:
        return Check(name, want == found, want, found)


def parse_regex(pattern: str, flag: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as error:
        raise AttestationError(flag, f"expected a regular expression: {error}") from None
