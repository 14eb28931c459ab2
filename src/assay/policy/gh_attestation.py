"""`gh attestation verify`'s rules, as a built-in policy of the certificate identity.

    policy = GhPolicy(owner="sigstore", repo="sigstore/sigstore-js")
    policy.describe()                      # the criteria gh prints
    identity_checks(verified.identity, policy)  # one Check per criterion

What gh's flags require of a bundle's certificate: the source repository owner (or the
repository), the signer identity (an exact SAN, a regex, the signer repository or
workflow), the OIDC issuer, optional pins (signer digest, source ref and digest) and a
GitHub-hosted runner. The predicate type is part of the policy too; the predicate's
content is not checked (gh does not either). `assay.verify.bundle_check` runs it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from assay import protocol
from assay.errors import AttestationError
from assay.results import Check
from assay.sigstore.identity import CertificateIdentity

DEFAULT_PREDICATE_TYPE: Final = protocol.PROVENANCE_V1
DEFAULT_ISSUER: Final = protocol.GITHUB_ACTIONS_ISSUER


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


def identity_checks(identity: CertificateIdentity, policy: GhPolicy) -> list[Check]:
    owner = f"{policy.server}/{policy.owner}"
    checks = [
        Check(
            "certificate.sourceRepositoryOwnerUri",
            identity.source_repository_owner_uri == owner,
            owner,
            identity.source_repository_owner_uri,
        )
    ]
    if policy.repo is not None:
        repo = f"{policy.server}/{policy.repo}"
        checks.append(
            Check(
                "certificate.sourceRepositoryUri",
                identity.source_repository_uri == repo,
                repo,
                identity.source_repository_uri,
            )
        )
    kind, value = policy.san_rule()
    san = identity.san or ""
    matched = san == value if kind == "exact" else re.search(value, san) is not None
    checks.append(Check("certificate.san", matched, {kind: value}, identity.san))
    checks.append(
        Check(
            "certificate.issuer",
            identity.issuer == policy.oidc_issuer,
            policy.oidc_issuer,
            identity.issuer,
        )
    )
    pins = (
        ("certificate.buildSignerDigest", policy.signer_digest, identity.build_signer_digest),
        ("certificate.sourceRepositoryRef", policy.source_ref, identity.source_repository_ref),
        (
            "certificate.sourceRepositoryDigest",
            policy.source_digest,
            identity.source_repository_digest,
        ),
    )
    for name, want, found in pins:
        if want is not None:
            checks.append(Check(name, want == found, want, found))
    if policy.deny_self_hosted_runners:
        checks.append(
            Check(
                "certificate.runnerEnvironment",
                identity.runner_environment == "github-hosted",
                "github-hosted",
                identity.runner_environment,
            )
        )
    return checks


def parse_regex(pattern: str, flag: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as error:
        raise AttestationError(flag, f"expected a regular expression: {error}") from None
