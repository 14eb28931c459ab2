"""`verify-bundle`: `gh attestation verify`'s checks on local Sigstore bundles.

    policy = GhPolicy(owner="sigstore", repo=None, ...)     # assay.policy.gh_attestation
    result = verify_bundles(artifact_digest, bundle_bytes, "att.jsonl", policy, verifier)
    result.passed, [r.to_dict() for r in result.results]

As gh: every bundle of the file is tried; the artifact passes when at least one bundle
verifies, names the artifact's digest as a subject, has the expected predicate type and a
certificate identity the policy accepts (owner or repository, signer identity, OIDC
issuer, optional pins). The predicate's content is not checked (gh does not either).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from assay import protocol
from assay.errors import AttestationError, VerificationError
from assay.policy.gh_attestation import GhPolicy, identity_checks
from assay.results import Check
from assay.sigstore.verifier import BundleVerifier, VerifiedSignature
from assay.verify.model import Artifact
from assay.verify.pipeline import Coverage, Evaluation, cover, read_payload

MAX_BUNDLES: Final = 256


@dataclass(slots=True)
class BundleResult(Evaluation):
    """One bundle through the pipeline, with its signature."""

    signature: VerifiedSignature | None = None

    @property
    def predicate_type(self) -> str | None:
        return self.claims.predicate_type if self.claims is not None else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "bundle": self.name,
            "passed": self.passed,
            "predicateType": self.predicate_type,
            "signature": self.signature.to_dict() if self.signature else None,
            "checks": [c.to_dict() for c in self.checks],
        }


@dataclass(slots=True)
class BundleVerification:
    """gh's verdict for one artifact: at least one bundle verifies and covers it."""

    coverage: Coverage
    policy: GhPolicy
    results: list[BundleResult]

    @property
    def artifact(self) -> str:
        return self.coverage.artifact.name

    @property
    def passed(self) -> bool:
        return self.coverage.passed

    @property
    def verified(self) -> list[BundleResult]:
        covering = {id(r) for r in self.coverage.covering}
        return [r for r in self.results if id(r) in covering]

    def to_dict(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "artifact": {"name": self.artifact, "digest": self.coverage.artifact.digest},
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
    results = [
        _evaluate_bundle(label, document, digest, policy, verifier)
        for label, document in read_bundles(data, where)
    ]
    coverage = cover(Artifact(artifact, {digest[0]: digest[1]}), results)
    judged = [r for r in results if r.claims is not None or r.signed_digest is not None]
    for result, check in zip(judged, coverage.checks, strict=True):
        # Shown with each bundle: gh judges a bundle for the artifact asked about.
        result.checks.insert(_subject_position(result), check)
    return BundleVerification(coverage, policy, results)


def _subject_position(result: BundleResult) -> int:
    # Where gh reports it: after the statement (or the signature of a message).
    names = [check.name for check in result.checks]
    after = "statement" if "statement" in names else "signature"
    return len(names) - names[::-1].index(after)


def _evaluate_bundle(
    label: str,
    document: dict[str, Any],
    digest: tuple[str, str],
    policy: GhPolicy,
    verifier: BundleVerifier,
) -> BundleResult:
    """gh's signature step (bundle version, signature, certificate identity), then the
    pipeline's payload type, statement and predicate type."""
    result = BundleResult(label)
    media_type = document.get("mediaType")
    if media_type == protocol.BUNDLE_V01:
        result.checks.append(
            Check(
                "bundle.version",
                False,
                "a bundle of version 0.2 or later",
                media_type,
                "unsupported bundle version (as gh: v0.1 bundles are refused)",
            )
        )
        return result
    sha256 = bytes.fromhex(digest[1]) if digest[0] == "sha256" else None
    try:
        verified = verifier.verify(document, label, artifact_sha256=sha256)
    except VerificationError as error:
        result.checks.append(
            Check("signature", False, "a verified Sigstore bundle", None, str(error))
        )
        return result
    result.signature = verified
    result.checks.append(
        Check("signature", True, "a verified Sigstore bundle", verified.media_type)
    )
    if verified.payload is None:
        result.signed_digest = verified.message_digest
    elif read_payload(result, verified.payload_type, verified.payload, where=f"{label}: payload"):
        result.checks.append(
            Check(
                "predicateType",
                result.predicate_type == policy.predicate_type,
                policy.predicate_type,
                result.predicate_type,
            )
        )
    else:
        return result
    result.checks.extend(identity_checks(verified.identity, policy))
    return result
