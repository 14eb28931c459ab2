"""`verify-bundle`: `gh attestation verify`'s checks on local Sigstore bundles.

    policy = GhPolicy.build(owner="sigstore", repo=None, ...)
    result = verify_bundles(artifact_digest, bundle_bytes, "att.jsonl", policy, verifier)
    result.passed, [r.to_dict() for r in result.results]

As gh: every bundle of the file is tried; the artifact passes when at least one bundle
verifies, names the artifact's digest as a subject, has the expected predicate type and a
certificate identity the policy accepts (owner or repository, signer identity, OIDC
issuer, optional pins). The predicate's content is not checked (gh does not either).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from assay.errors import AttestationError, VerificationError
from assay.results import Check
from assay.sigstore import load_json
from assay.sigstore.identity import CertificateIdentity
from assay.sigstore.verifier import BundleVerifier, VerifiedSignature

DEFAULT_PREDICATE_TYPE: Final = "https://slsa.dev/provenance/v1"
DEFAULT_ISSUER: Final = "https://token.actions.githubusercontent.com"
MAX_BUNDLES: Final = 256
V01: Final = "application/vnd.dev.sigstore.bundle+json;version=0.1"


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


@dataclass(slots=True)
class BundleResult:
    where: str
    checks: list[Check] = field(default_factory=list)
    signature: VerifiedSignature | None = None
    predicate_type: str | None = None
    statement: dict[str, Any] | None = None

    @property
    def passed(self) -> bool:
        return bool(self.checks) and all(c.passed for c in self.checks)

    def to_dict(self) -> dict[str, Any]:
        return {
            "bundle": self.where,
            "passed": self.passed,
            "predicateType": self.predicate_type,
            "signature": self.signature.to_dict() if self.signature else None,
            "checks": [c.to_dict() for c in self.checks],
        }


@dataclass(slots=True)
class BundleVerification:
    artifact: str
    digest: tuple[str, str]
    policy: GhPolicy
    results: list[BundleResult]

    @property
    def passed(self) -> bool:
        return any(r.passed for r in self.results)

    @property
    def verified(self) -> list[BundleResult]:
        return [r for r in self.results if r.passed]

    def to_dict(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "artifact": {"name": self.artifact, "digest": {self.digest[0]: self.digest[1]}},
            "verified": len(self.verified),
            "bundles": [r.to_dict() for r in self.results],
        }


def read_bundles(data: bytes, where: str) -> list[tuple[str, dict[str, Any]]]:
    """Bundles of a file (one bundle, JSON lines of bundles, npm's attestations document,
    PEP 740 attestations or a PyPI provenance file), read by the reader every command
    shares (`assay.attestation.files`)."""
    from assay.attestation.files import parse_file

    result: list[tuple[str, dict[str, Any]]] = []
    for record in parse_file(data, where):
        if record.kind == "unknown":
            continue
        if record.kind != "sigstore-bundle":
            raise AttestationError(
                record.label, f"expected a Sigstore bundle, found {_KINDS[record.kind]}"
            )
        result.append((record.label, record.document))
    if len(result) > MAX_BUNDLES:
        raise AttestationError(where, f"expected at most {MAX_BUNDLES} bundles, got {len(result)}")
    if not result:
        raise AttestationError(where, "expected at least one Sigstore bundle")
    return result


_KINDS: Final = {"statement": "an unsigned in-toto statement", "dsse": "a DSSE envelope"}


def _subject_check(statement: dict[str, Any], digest: tuple[str, str]) -> Check:
    subjects = statement.get("subject")
    found = []
    for subject in subjects if isinstance(subjects, list) else []:
        if isinstance(subject, dict) and isinstance(subject.get("digest"), dict):
            found.append(subject["digest"])
    matched = any(d.get(digest[0]) == digest[1] for d in found)
    return Check("subject", matched, {digest[0]: digest[1]}, found)


def verify_bundles(
    artifact: str,
    digest: tuple[str, str],
    data: bytes,
    where: str,
    *,
    policy: GhPolicy,
    verifier: BundleVerifier,
) -> BundleVerification:
    """gh's verdict: at least one bundle verifies and satisfies the policy."""
    from assay.verify.claims import STATEMENT_TYPES

    results = []
    for label, document in read_bundles(data, where):
        result = BundleResult(label)
        results.append(result)
        media_type = document.get("mediaType")
        if media_type == V01:
            result.checks.append(
                Check(
                    "bundle.version",
                    False,
                    "a bundle of version 0.2 or later",
                    media_type,
                    "unsupported bundle version (as gh: v0.1 bundles are refused)",
                )
            )
            continue
        sha256 = bytes.fromhex(digest[1]) if digest[0] == "sha256" else None
        try:
            verified = verifier.verify(document, label, artifact_sha256=sha256)
        except VerificationError as error:
            result.checks.append(
                Check("signature", False, "a verified Sigstore bundle", None, str(error))
            )
            continue
        result.signature = verified
        result.checks.append(
            Check("signature", True, "a verified Sigstore bundle", verified.media_type)
        )
        if verified.payload is not None:
            statement = load_json(verified.payload, f"{label}: payload")
            if not isinstance(statement, dict) or statement.get("_type") not in STATEMENT_TYPES:
                result.checks.append(
                    Check(
                        "statement", False, list(STATEMENT_TYPES), None, "not an in-toto statement"
                    )
                )
                continue
            result.statement = statement
            result.predicate_type = statement.get("predicateType")
            result.checks.append(_subject_check(statement, digest))
            result.checks.append(
                Check(
                    "predicateType",
                    result.predicate_type == policy.predicate_type,
                    policy.predicate_type,
                    result.predicate_type,
                )
            )
        elif verified.message_digest is None or verified.message_digest != digest:
            result.checks.append(Check("subject", False, {digest[0]: digest[1]}, None))
        result.checks.extend(identity_checks(verified.identity, policy))
    return BundleVerification(artifact, digest, policy, results)


def parse_regex(pattern: str, flag: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as error:
        raise AttestationError(flag, f"expected a regular expression: {error}") from None


def check_exclusive(values: Sequence[object], names: str) -> None:
    if sum(v is not None for v in values) > 1:
        raise AttestationError(names, "expected at most one of them")
