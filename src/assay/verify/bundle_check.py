"""`verify-bundle`: `gh attestation verify`'s checks on local Sigstore bundles.

    policy = GhPolicy(owner="sigstore", repo=None, ...)     # assay.policy.gh_attestation
    result = verify_bundles(artifact_digest, bundle_bytes, "att.jsonl", policy, verifier)
    result.passed, [r.to_dict() for r in result.results]

As gh: every bundle of the file is tried; the artifact passes when at least one bundle
verifies, names the artifact's digest as a subject, has the expected predicate type and a
certificate identity the policy accepts (owner or repository, signer identity, OIDC
issuer, optional pins). The predicate's content is not checked (gh does not either). The
flags are a built-in policy (`GhPolicy.mode_policy`) that the `Verifier` runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from assay.errors import AttestationError
from assay.policy.gh_attestation import GhPolicy
from assay.sigstore.verifier import BundleVerifier
from assay.verify.certificates import SigstoreTrust
from assay.verify.model import Artifact
from assay.verify.modes import SignedDocument, SignedEvaluation
from assay.verify.pipeline import Coverage
from assay.verify.verifier import Verifier

MAX_BUNDLES: Final = 256


def bundle_dict(bundle: SignedEvaluation) -> dict[str, Any]:
    """One bundle in the report, with its signature and checks."""
    return {
        "bundle": bundle.name,
        "passed": bundle.passed,
        "predicateType": bundle.predicate_type,
        "signature": bundle.signature.to_dict() if bundle.signature else None,
        "checks": [c.to_dict() for c in bundle.checks],
    }


@dataclass(slots=True)
class BundleVerification:
    """gh's verdict for one artifact: at least one bundle verifies and covers it."""

    coverage: Coverage
    policy: GhPolicy
    results: list[SignedEvaluation]

    @property
    def artifact(self) -> str:
        return self.coverage.artifact.name

    @property
    def passed(self) -> bool:
        return self.coverage.passed

    @property
    def verified(self) -> list[SignedEvaluation]:
        covering = {id(r) for r in self.coverage.covering}
        return [r for r in self.results if id(r) in covering]

    def to_dict(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "artifact": {"name": self.artifact, "digest": self.coverage.artifact.digest},
            "verified": len(self.verified),
            "bundles": [bundle_dict(r) for r in self.results],
        }


def read_bundles(data: bytes, where: str) -> list[SignedDocument]:
    """Bundles of a file (one bundle, JSON lines of bundles, npm's attestations document,
    PEP 740 attestations or a PyPI provenance file), read by the reader every command
    shares (`assay.attestation.files`)."""
    from assay.attestation.files import parse_file

    result: list[SignedDocument] = []
    for record in parse_file(data, where):
        if record.kind == "unknown":
            continue
        if record.kind != "sigstore-bundle":
            raise AttestationError(
                record.label, f"expected a Sigstore bundle, found {_KINDS[record.kind]}"
            )
        result.append(SignedDocument(record.label, record.document))
    if len(result) > MAX_BUNDLES:
        raise AttestationError(where, f"expected at most {MAX_BUNDLES} bundles, got {len(result)}")
    if not result:
        raise AttestationError(where, "expected at least one Sigstore bundle")
    return result


_KINDS: Final = {"statement": "an unsigned in-toto statement", "dsse": "a DSSE envelope"}


def verify_bundles(
    artifact: str,
    digest: tuple[str, str],
    data: bytes,
    where: str,
    *,
    policy: GhPolicy,
    verifier: BundleVerifier,
) -> BundleVerification:
    """gh's verdict: at least one bundle verifies, satisfies the policy and names the
    artifact's digest."""
    trust = SigstoreTrust(roots=verifier.roots, verifier=verifier)
    report = Verifier(policy=policy.mode_policy(), trust=trust).verify(
        [Artifact(artifact, {digest[0]: digest[1]})], read_bundles(data, where)
    )
    (coverage,) = report.artifacts
    judged = [r for r in report.attestations if r.claims is not None or r.signed_digest is not None]
    for result, check in zip(judged, coverage.checks, strict=True):
        # Shown with each bundle: gh judges a bundle for the artifact asked about.
        result.checks.insert(_subject_position(result), check)
    return BundleVerification(coverage, policy, report.attestations)


def _subject_position(result: SignedEvaluation) -> int:
    # Where gh reports it: after the statement (or the signature of a message).
    names = [check.name for check in result.checks]
    after = "statement" if "statement" in names else "signature"
    return len(names) - names[::-1].index(after)
