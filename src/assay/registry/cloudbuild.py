"""`verify-image --provenance-path`: a Cloud Build image's provenance, as slsa-verifier
verifies it.

The provenance is what `gcloud artifacts docker images describe --show-provenance`
prints for the image; it is verified with the shipped Cloud Build policy
(`builtin:gcb`: Google's signing keys, the hosted worker's builder ids and buildTypes)
with slsa-verifier's flags as policy expectations: the source repository, branch, tag
or versioned tag, and `--builder-id` narrowing the trusted builders (a version pins
it; an id no rule trusts leaves none). The image digest is the artifact.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from assay.errors import InputError
from assay.registry.reference import Reference

if TYPE_CHECKING:
    from assay.policy import BuilderRule, Policy
    from assay.policy.slsa_github import Options
    from assay.verify.verifier import VerificationReport

POLICY = "builtin:gcb"


def cloud_build_policy(options: Options) -> Policy:
    from assay.policy import load_policy

    if not options.builder_id:
        raise InputError("builder_id", "expected the builder id Cloud Build provenance names")
    policy = load_policy(POLICY)
    source = options.source_rule()
    signers = tuple(
        dataclasses.replace(s, builders=narrow(s.builders, options.builder_id))
        for s in policy.signers
    )
    return dataclasses.replace(policy, source=source, signers=signers)


def _names_builder(rule: BuilderRule, name: str) -> bool:
    """Whether the rule trusts the builder `name` (its id, or its id pattern)."""
    return rule.id == name or bool(rule.id_pattern and rule.id_pattern.fullmatch(name))


def _narrowed(rule: BuilderRule, name: str, versions: tuple[str, ...]) -> BuilderRule | None:
    """The rule narrowed to the builder `name` (at `versions`), or None if it cannot be."""
    if not _names_builder(rule, name):
        return None
    if not versions:
        return rule
    if rule.pin == "none" or (rule.pin == "version" and not set(versions) & set(rule.versions)):
        return None
    return dataclasses.replace(rule, versions=versions)


def narrow(rules: tuple[BuilderRule, ...], builder_id: str) -> tuple[BuilderRule, ...]:
    """slsa-verifier's `--builder-id`: narrows the trusted builders; a version pins it."""
    from assay.policy import BuilderRule
    from assay.policy.refs import split_ref

    name, ref = split_ref(builder_id)
    versions = (ref.removeprefix("refs/tags/"),) if ref else ()
    narrowed = [n for n in (_narrowed(rule, name, versions) for rule in rules) if n is not None]
    # An id no rule trusts leaves none: nothing can match.
    return tuple(narrowed) or (BuilderRule("(untrusted builder id)", None, "none", (), (), 0),)


def verify_cloud_build(
    reference: Reference, data: bytes, where: str, options: Options
) -> VerificationReport:
    """The verdict for the image (its digest) given gcloud's provenance output."""
    from assay.verify.inputs import read_attestations
    from assay.verify.verifier import Artifact, evaluate

    if reference.digest is None:
        raise InputError(
            "image", f"expected an immutable reference IMAGE@sha256:HEX, got {reference}"
        )
    algorithm, _, value = reference.digest.partition(":")
    policy = cloud_build_policy(options)
    artifact = Artifact(reference.digest, {algorithm: value})
    return evaluate(policy, [artifact], read_attestations(data, where))
