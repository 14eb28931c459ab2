"""`verify-artifact`: slsa-verifier's verification of slsa-github-generator provenance.

    result = verify_artifacts(artifacts, provenance_bytes, "prov.intoto.jsonl", options,
                              BundleVerifier(select_roots()))
    result.passed, result.builder_id, result.commit, [c.to_dict() for c in result.failures()]
    [(r.artifact.name, r.passed) for r in result.results]   # each artifact's own verdict

The command's flags are a built-in policy (`assay.policy.slsa_github.slsa_verifier_policy`)
that the `Verifier` runs on each envelope of the provenance file (Sigstore bundle, or a
legacy envelope with its certificate): the certificate's rules first, then, for a trusted
workflow, the statement against that workflow's claims policy with `assay.verify`'s
checks. Each artifact is judged on its own (`Coverage`): it passes only when a passing
envelope's verified statement names one of its digests as a subject (its name is never
compared), and all artifacts must resolve to one builder.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from assay.errors import AttestationError
from assay.policy.refs import normalize_repository, parse_semver
from assay.policy.slsa_github import Options, slsa_verifier_policy, testing_mode
from assay.results import Check
from assay.sigstore.legacy import is_legacy_envelope
from assay.sigstore.signature import RekorLookup
from assay.sigstore.verifier import BUNDLE_MEDIA_TYPES, BundleVerifier
from assay.verify.certificates import SigstoreTrust
from assay.verify.model import Artifact
from assay.verify.modes import SignedDocument, SignedEvaluation
from assay.verify.pipeline import Coverage
from assay.verify.verifier import Verifier

if TYPE_CHECKING:
    from assay.attestation.files import Record

MAX_ENVELOPES = 64


def envelope_dict(envelope: SignedEvaluation) -> dict[str, Any]:
    """One envelope of the provenance file in the report. Subject checks are not here:
    they belong to each artifact (`Coverage`), so one artifact's miss never fails an
    envelope that covers another."""
    return {
        "provenance": envelope.name,
        "passed": envelope.passed,
        "signature": envelope.signature.to_dict() if envelope.signature else None,
        "builderId": envelope.claims.builder_id if envelope.claims else None,
        "checks": [c.to_dict() for c in envelope.checks],
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
    envelopes: list[SignedEvaluation]

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
        return result + self._builder_consistency()

    def _builder_consistency(self) -> list[Check]:
        """slsa-verifier's refusal of artifacts built by different builders (none: one)."""
        if len(set(self.builder_ids)) <= 1:
            return []
        return [
            Check("builder.consistent", False, "one builder for every artifact", self.builder_ids)
        ]

    def to_dict(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "builderId": self.builder_id,
            "commit": self.commit,
            "transparencyLogWaived": self.tlog_waived,
            "artifacts": [coverage_dict(r) for r in self.results],
            "envelopes": [envelope_dict(e) for e in self.envelopes],
        }


def check_options(options: Options) -> None:
    """Flags slsa-verifier refuses before verifying anything (unusable input here)."""
    _check_source_uri(options.source_uri)
    _check_one_source_ref(options)
    _check_versioned_tag(options.source_versioned_tag)


def _check_source_uri(source_uri: str) -> None:
    parts = normalize_repository(source_uri.strip()).split("/")
    if len(parts) != 3 or parts[0] != "github.com" or not all(parts):
        raise AttestationError("--source-uri", f"expected github.com/ORG/REPO, got {source_uri!r}")


def _check_one_source_ref(options: Options) -> None:
    refs = (options.source_branch, options.source_tag, options.source_versioned_tag)
    if len([ref for ref in refs if ref]) > 1:
        raise AttestationError(
            "--source-branch/--source-tag/--source-versioned-tag", "expected at most one of them"
        )


def _check_versioned_tag(tag: str | None) -> None:
    if tag is not None and parse_semver(tag) is None:
        raise AttestationError("--source-versioned-tag", f"expected vX[.Y[.Z]], got {tag!r}")


def read_envelopes(data: bytes, where: str) -> list[SignedDocument]:
    """The bundles and legacy envelopes of a provenance file, read by the reader every
    command shares (`assay.attestation.files`)."""
    from assay.attestation.files import parse_file

    records = [r for r in parse_file(data, where) if r.kind != "unknown"]
    if len(records) > MAX_ENVELOPES:
        raise AttestationError(
            where, f"expected at most {MAX_ENVELOPES} envelopes, got {len(records)}"
        )
    _require_certified(records)
    if not records:
        raise AttestationError(where, "expected a Sigstore bundle or a signed DSSE envelope")
    return [SignedDocument(record.label, record.document) for record in records]


def _require_certified(records: list[Record]) -> None:
    for record in records:
        if not _certified(record):
            raise AttestationError(
                record.label,
                "expected a Sigstore bundle or a DSSE envelope signed with a certificate",
            )


def _certified(record: Record) -> bool:
    """A Sigstore bundle of a known version, or a legacy envelope carrying its certificate."""
    if record.kind == "sigstore-bundle":
        return record.document.get("mediaType") in BUNDLE_MEDIA_TYPES
    return record.kind == "dsse" and record.certified and is_legacy_envelope(record.document)


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
    """The verdict for `artifacts` given one provenance file's bytes: the flags' built-in
    policy, run by the `Verifier`."""
    check_options(options)
    policy = slsa_verifier_policy(options, testing=testing_mode())
    trust = SigstoreTrust(
        roots=verifier.roots,
        insecure_ignore_tlog=insecure_ignore_tlog,
        rekor=rekor,
        verifier=verifier,
    )
    report = Verifier(policy=policy, trust=trust).verify(
        artifacts, read_envelopes(provenance, where)
    )
    return ArtifactVerification(report.artifacts, report.attestations)
