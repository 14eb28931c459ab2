"""`verify-image`: slsa-verifier's verification of an image's provenance, read from
the registry (or the cache) where it is attached.

    verdict = verify_image(source, parse_reference("ghcr.io/o/r@sha256:..."), options,
                           BundleVerifier(select_roots()))
    verdict.passed, verdict.sources, verdict.result.builder_id

The image digest is the artifact (for a multi-platform image, the index's digest, which
is what the provenance names). Every attestation found (cosign `.att` layers, attached
bundles) is verified with `assay.verify.artifact.verify_artifacts` and the rules of
slsa-github-generator's container workflows (`Options(image=True)`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any

from assay.errors import InputError
from assay.policy.slsa_github import Options
from assay.registry.attestations import ImageAttestations, ImageSource, image_attestations
from assay.registry.reference import Reference
from assay.sigstore.verifier import BundleVerifier
from assay.verify.artifact import ArtifactVerification, verify_artifacts
from assay.verify.verifier import Artifact


@dataclass(slots=True)
class ImageVerification:
    reference: Reference
    digest: str
    sources: list[str]
    result: ArtifactVerification | None
    """None when the registry holds no attestation for the image."""
    fetched: list[dict[str, Any]] = field(default_factory=list)
    key_signed: int = 0
    """cosign attestations signed with a key: not verifiable by a certificate identity."""

    @property
    def reason(self) -> str | None:
        """Why there is no verification at all (None when there is one)."""
        if self.result is not None:
            return None
        tag = self.digest.replace(":", "-") + ".att"
        if self.key_signed:
            return (
                f"the image's {self.key_signed} attestation(s) are signed with a key, not a"
                " Fulcio certificate of slsa-github-generator's workflows (verify them with"
                " a policy naming the key: `assay verify`)"
            )
        return f"no attestation found (looked for the cosign tag {tag} and referrers)"

    @property
    def passed(self) -> bool:
        return self.result is not None and self.result.passed

    def to_dict(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "image": str(self.reference.with_digest(self.digest)),
            "digest": self.digest,
            "attestationSources": self.sources,
            "keySignedAttestations": self.key_signed,
            "reason": self.reason,
            "fetched": self.fetched,
            "verification": self.result.to_dict() if self.result is not None else None,
        }


def verify_image(
    source: ImageSource,
    reference: Reference,
    options: Options,
    verifier: BundleVerifier,
) -> ImageVerification:
    """The verdict for the image `reference` (which must name its digest)."""
    if reference.digest is None:
        raise InputError(
            "IMAGE", f"expected an immutable reference IMAGE@sha256:HEX, got {reference}"
        )
    found = image_attestations(source, reference)
    return verdict_for(found, replace(options, image=True), verifier)


def verdict_for(
    found: ImageAttestations, options: Options, verifier: BundleVerifier
) -> ImageVerification:
    fetched = [{"url": f.url, "digest": f.digest, "mediaType": f.media_type} for f in found.fetched]
    image = ImageVerification(
        found.reference, found.digest, found.sources, None, fetched, len(found.key_signed)
    )
    if not found.bundles:
        return image
    lines = b"\n".join(json.dumps(document).encode() for _, document in found.bundles)
    artifact = Artifact(str(found.reference.with_digest(found.digest)), _digest(found.digest))
    image.result = verify_artifacts([artifact], lines, str(found.reference), options, verifier)
    return image


def _digest(digest: str) -> dict[str, str]:
    algorithm, _, value = digest.partition(":")
    return {algorithm: value}
