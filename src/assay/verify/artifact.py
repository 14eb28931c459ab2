"""`verify-artifact`: slsa-verifier's verification of slsa-github-generator provenance.

    result = verify_artifacts(artifacts, provenance_bytes, "prov.intoto.jsonl", options,
                              BundleVerifier(select_roots()))
    result.passed, result.builder_id, result.commit, [c.to_dict() for c in result.failures()]
    [(r.artifact.name, r.passed) for r in result.results]   # each artifact's own verdict

Each envelope of the provenance file is verified (Sigstore bundle, or a legacy envelope
with its certificate), then its certificate identity and its verified statement are
checked against the built-in policy (`assay.policy.slsa_github`) with
`assay.verify`'s checks. Each artifact is judged on its own (`ArtifactCoverage`): it
passes only when a passing envelope's verified statement names one of its digests as a
subject (its name is never compared), and all artifacts must resolve to one builder.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from assay.errors import AttestationError
from assay.policy.refs import is_release_tag, normalize_repository, parse_semver, split_ref
from assay.policy.slsa_github import (
    GITHUB_ISSUER,
    Options,
    builtin_policy,
    family_for,
    testing_mode,
)
from assay.results import Check
from assay.sigstore.identity import CertificateIdentity
from assay.sigstore.legacy import is_legacy_envelope
from assay.sigstore.signature import RekorLookup, verify_signed_document
from assay.sigstore.verifier import BUNDLE_MEDIA_TYPES, BundleVerifier, VerifiedSignature
from assay.verify.claims import Claims
from assay.verify.model import Artifact
from assay.verify.pipeline import (
    Coverage,
    Evaluation,
    cover,
    judge_claims,
    payload_type_check,
    read_payload,
)

MAX_ENVELOPES = 64


@dataclass(slots=True)
class EnvelopeResult(Evaluation):
    """One envelope of the provenance file through the pipeline, with its signature.

    Subject checks are not here: they belong to each artifact (`Coverage`), so one
    artifact's miss never fails an envelope that covers another.
    """

    signature: VerifiedSignature | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "provenance": self.name,
            "passed": self.passed,
            "signature": self.signature.to_dict() if self.signature else None,
            "builderId": self.claims.builder_id if self.claims else None,
            "checks": [c.to_dict() for c in self.checks],
        }


def coverage_dict(coverage: Coverage) -> dict[str, Any]:
    return {
        "name": coverage.artifact.name,
        "digest": coverage.artifact.digest,
        "passed": coverage.passed,
        "provenance": coverage.attestations,
        "checks": [c.to_dict() for c in coverage.checks],
    }


@dataclass(slots=True)
class ArtifactVerification:
    """The verdict of `verify-artifact` and everything it rests on."""

    results: list[Coverage]
    """One per artifact, in the order given: each judged on its own digests."""
    envelopes: list[EnvelopeResult]

    @property
    def artifacts(self) -> list[Artifact]:
        return [r.artifact for r in self.results]

    @property
    def covered(self) -> list[Coverage]:
        """The artifacts a passing envelope covers, in the order given (each artifact its
        own entry: two of one name are two entries)."""
        return [r for r in self.results if r.passed]

    @property
    def builder_ids(self) -> list[str]:
        return [b for r in self.results for b in r.builder_ids]

    @property
    def passed(self) -> bool:
        return (
            bool(self.results)
            and all(r.passed for r in self.results)
            and len(set(self.builder_ids)) == 1
        )

    @property
    def builder_id(self) -> str | None:
        return self.builder_ids[0] if len(set(self.builder_ids)) == 1 else None

    @property
    def commit(self) -> str | None:
        for envelope in self.envelopes:
            if envelope.passed and envelope.signature is not None:
                identity = envelope.signature.identity
                return identity.source_repository_digest or identity.github_workflow_sha
        return None

    @property
    def tlog_waived(self) -> bool:
        return any(e.signature is not None and not e.signature.tlog_checked for e in self.envelopes)

    @property
    def statements(self) -> list[bytes]:
        return [
            e.signature.payload
            for e in self.envelopes
            if e.passed and e.signature is not None and e.signature.payload is not None
        ]

    def failures(self) -> list[Check]:
        result = [c for e in self.envelopes for c in e.checks if not c.passed]
        result.extend(c for r in self.results if not r.passed for c in r.checks if not c.passed)
        if len(set(self.builder_ids)) > 1:
            result.append(
                Check(
                    "builder.consistent", False, "one builder for every artifact", self.builder_ids
                )
            )
        return result

    def to_dict(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "builderId": self.builder_id,
            "commit": self.commit,
            "transparencyLogWaived": self.tlog_waived,
            "artifacts": [coverage_dict(r) for r in self.results],
            "envelopes": [e.to_dict() for e in self.envelopes],
        }


def check_options(options: Options) -> None:
    """Flags slsa-verifier refuses before verifying anything (unusable input here)."""
    source = options.source_uri.strip()
    normalized = normalize_repository(source)
    parts = normalized.split("/")
    if len(parts) != 3 or parts[0] != "github.com" or not all(parts):
        raise AttestationError(
            "--source-uri", f"expected github.com/ORG/REPO, got {options.source_uri!r}"
        )
    given = [
        x for x in (options.source_branch, options.source_tag, options.source_versioned_tag) if x
    ]
    if len(given) > 1:
        raise AttestationError(
            "--source-branch/--source-tag/--source-versioned-tag", "expected at most one of them"
        )
    if (
        options.source_versioned_tag is not None
        and parse_semver(options.source_versioned_tag) is None
    ):
        raise AttestationError(
            "--source-versioned-tag",
            f"expected vX[.Y[.Z]], got {options.source_versioned_tag!r}",
        )


def read_envelopes(data: bytes, where: str) -> list[tuple[str, dict[str, Any]]]:
    """The bundles and legacy envelopes of a provenance file, read by the reader every
    command shares (`assay.attestation.files`)."""
    from assay.attestation.files import parse_file

    records = [r for r in parse_file(data, where) if r.kind != "unknown"]
    if len(records) > MAX_ENVELOPES:
        raise AttestationError(
            where, f"expected at most {MAX_ENVELOPES} envelopes, got {len(records)}"
        )
    result = []
    for record in records:
        document = record.document
        if (
            record.kind == "sigstore-bundle" and document.get("mediaType") in BUNDLE_MEDIA_TYPES
        ) or (record.kind == "dsse" and record.certified and is_legacy_envelope(document)):
            result.append((record.label, document))
        else:
            raise AttestationError(
                record.label,
                "expected a Sigstore bundle or a DSSE envelope signed with a certificate",
            )
    if not result:
        raise AttestationError(where, "expected a Sigstore bundle or a signed DSSE envelope")
    return result


def _workflow(san: str | None) -> tuple[str, str | None]:
    return split_ref(san or "")


def identity_checks(verified: VerifiedSignature, options: Options, testing: bool) -> list[Check]:
    """slsa-verifier's rules for the certificate: GitHub's issuer, a trusted reusable
    workflow at a release tag, and the expected source repository."""
    identity = verified.identity
    workflow, ref = _workflow(identity.san)
    return [
        Check(
            "certificate.issuer", identity.issuer == GITHUB_ISSUER, GITHUB_ISSUER, identity.issuer
        ),
        _trusted_builder_check(workflow, options),
        _builder_ref_check(ref, testing),
        _source_repository_check(identity, options),
    ]


def _trusted_builder_check(workflow: str, options: Options) -> Check:
    family = family_for(workflow, image=options.image)
    trusted = family is not None
    if options.builder_id and family is not None and not family.delegator:
        trusted = split_ref(options.builder_id)[0] == workflow
    return Check(
        "certificate.builder",
        trusted,
        "a trusted slsa-github-generator reusable workflow",
        workflow or None,
        "" if trusted else "untrusted reusable workflow",
    )


def _builder_ref_check(ref: str | None, testing: bool) -> Check:
    ok = ref is not None and is_release_tag(ref) and ref.startswith("refs/tags/")
    ok = ok or (testing and ref == "refs/heads/main")
    return Check(
        "certificate.builderRef",
        ok,
        "refs/tags/vX.Y.Z",
        ref,
        "" if ok else "the builder must be referenced by a release tag",
    )


def _source_repository_check(identity: CertificateIdentity, options: Options) -> Check:
    repository = identity.github_workflow_repository
    source = identity.source_repository_uri or (
        f"https://github.com/{repository}" if repository else None
    )
    want = normalize_repository(options.source_uri)
    return Check(
        "certificate.sourceRepository",
        source is not None and normalize_repository(source) == want,
        want,
        source,
    )


def _builder_matches_certificate(claims: Claims, san: str | None) -> Check:
    workflow, ref = _workflow(san)
    name, found = split_ref(claims.builder_id or "")
    same = name == workflow and found is not None and ref is not None
    same = same and (found or "").removeprefix("refs/tags/") == (ref or "").removeprefix(
        "refs/tags/"
    )
    return Check("builder.certificate", same, san, claims.builder_id)


def evaluate_envelope(
    label: str,
    document: dict[str, Any],
    options: Options,
    verifier: BundleVerifier,
    *,
    insecure_ignore_tlog: bool = False,
    rekor: RekorLookup | None = None,
) -> EnvelopeResult:
    """slsa-verifier's signature step (the certificate, and the identity of a trusted
    slsa-github-generator workflow), then the pipeline with the family's built-in policy."""
    result = EnvelopeResult(label)
    verified, checks = verify_signed_document(
        label, document, verifier, insecure_ignore_tlog=insecure_ignore_tlog, rekor=rekor
    )
    result.checks.extend(checks)
    if verified is None:
        return result
    result.signature = verified
    testing = testing_mode()
    result.checks.extend(identity_checks(verified, options, testing))
    family = family_for(_workflow(verified.identity.san)[0], image=options.image)
    if family is None or not result.passed or verified.payload is None:
        # Only the payload type is reported: nothing unsigned by a trusted builder is read.
        result.checks.append(payload_type_check(verified.payload_type))
        return result
    if not read_payload(result, verified.payload_type, verified.payload, where=f"{label}: payload"):
        return result
    assert result.claims is not None
    policy = builtin_policy(family, options, testing=testing)
    if not family.delegator:
        result.checks.append(_builder_matches_certificate(result.claims, verified.identity.san))
    judge_claims(result, policy, policy.signers)
    return result


def verify_artifacts(
    artifacts: Sequence[Artifact],
    provenance: bytes,
    where: str,
    options: Options,
    verifier: BundleVerifier,
    *,
    insecure_ignore_tlog: bool = False,
    rekor: RekorLookup | None = None,
) -> ArtifactVerification:
    """The verdict for `artifacts` given one provenance file's bytes."""
    check_options(options)
    envelopes = [
        evaluate_envelope(
            label,
            document,
            options,
            verifier,
            insecure_ignore_tlog=insecure_ignore_tlog,
            rekor=rekor,
        )
        for label, document in read_envelopes(provenance, where)
    ]
    return ArtifactVerification([cover(a, envelopes) for a in artifacts], envelopes)
