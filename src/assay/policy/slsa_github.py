"""slsa-verifier's rules for slsa-github-generator builders, as a built-in policy.

    policy = slsa_verifier_policy(Options(source_uri="github.com/o/r"), testing=False)
    Verifier(policy=policy, trust=trust).verify(artifacts, documents)  # assay.verify

`assay verify-artifact` needs no policy file: the trusted builders (the reusable
workflows a Fulcio certificate may name), the buildType each produces, how the builder
must be pinned and the expected source come from here and from the command's flags.
The certificate's rules are `GeneratorIdentity` (checked under slsa-verifier's names,
before anything the certificate signed is read); the claim checks are `assay.verify`'s,
the same that a policy file gets, with one claims policy per trusted workflow.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace
from typing import Final

from assay import protocol
from assay.policy.builtin import ModePolicy, SignatureForm, StatementRules
from assay.policy.identity import IdentityRule
from assay.policy.model import (
    PROVENANCE_V02,
    PROVENANCE_V1,
    BuilderRule,
    ParameterRules,
    Policy,
    Signer,
    SourceRule,
)
from assay.policy.refs import is_release_tag, normalize_repository, split_ref
from assay.results import Check
from assay.sigstore.identity import CertificateIdentity

GITHUB_ISSUER: Final = protocol.GITHUB_ACTIONS_ISSUER
GENERATOR: Final = "https://github.com/slsa-framework/slsa-github-generator/.github/workflows/"
TESTING_ENV: Final = "SLSA_VERIFIER_TESTING"
"""As in slsa-verifier: builders at refs/heads/main (the e2e repositories) are accepted."""

BUILTIN_POLICY_URI: Final = "builtin:slsa-verifier"


@dataclass(frozen=True, slots=True)
class Family:
    """One trusted reusable workflow and what its provenance must look like."""

    workflow: str
    predicate_types: tuple[str, ...]
    build_types: tuple[str, ...]
    allow_unknown: tuple[str, ...]
    delegator: bool = False


_GENERIC_V1: Final = "https://slsa-framework.github.io/github-actions-buildtypes/workflow/v1"
FAMILIES: Final = (
    Family(
        GENERATOR + "generator_generic_slsa3.yml",
        (PROVENANCE_V02, PROVENANCE_V1),
        ("https://github.com/slsa-framework/slsa-github-generator/generic@v1", _GENERIC_V1),
        ("*",),
    ),
    Family(
        GENERATOR + "builder_go_slsa3.yml",
        (PROVENANCE_V02, PROVENANCE_V1),
        ("https://github.com/slsa-framework/slsa-github-generator/go@v1", _GENERIC_V1),
        ("*",),
    ),
    Family(
        GENERATOR + "builder_container-based_slsa3.yml",
        (PROVENANCE_V1,),
        ("https://slsa.dev/container-based-build/v0.1?draft",),
        ("*",),
    ),
    Family(
        GENERATOR + "delegator_generic_slsa3.yml",
        (PROVENANCE_V1,),
        ("https://github.com/slsa-framework/slsa-github-generator/delegator-generic@v0",),
        ("*",),
        delegator=True,
    ),
    Family(
        GENERATOR + "delegator_lowperms-generic_slsa3.yml",
        (PROVENANCE_V1,),
        ("https://github.com/slsa-framework/slsa-github-generator/delegator-generic@v0",),
        ("*",),
        delegator=True,
    ),
)
CONTAINER_GENERATOR: Final = Family(
    GENERATOR + "generator_container_slsa3.yml",
    (PROVENANCE_V02, PROVENANCE_V1),
    ("https://github.com/slsa-framework/slsa-github-generator/container@v1", _GENERIC_V1),
    ("*",),
)
"""Trusted for images only (`verify-image`), as slsa-verifier's container workflows."""
_BY_WORKFLOW: Final = {f.workflow: f for f in FAMILIES}
_BY_WORKFLOW_FOR_IMAGES: Final = {**_BY_WORKFLOW, CONTAINER_GENERATOR.workflow: CONTAINER_GENERATOR}
_TRW_PATTERN: Final = re.compile(re.escape(GENERATOR) + r"[^/@]+\.ya?ml")


@dataclass(frozen=True, slots=True)
class Options:
    """The flags of `verify-artifact`, as data."""

    source_uri: str
    source_branch: str | None = None
    source_tag: str | None = None
    source_versioned_tag: str | None = None
    builder_id: str | None = None
    workflow_inputs: tuple[tuple[str, str], ...] = ()
    image: bool = False
    """The artifact is a container image: the container generator is trusted too."""

    def source_rule(self) -> SourceRule:
        """The expected source, as a policy's `source:` rule."""
        return SourceRule(
            repository=self.source_uri,
            branch=self.source_branch,
            tag=self.source_tag,
            versioned_tag=self.source_versioned_tag,
            workflow_inputs=dict(self.workflow_inputs),
        )


def testing_mode() -> bool:
    return os.environ.get(TESTING_ENV, "").lower() in {"1", "true", "yes"}


def family_for(workflow: str, *, image: bool = False) -> Family | None:
    return (_BY_WORKFLOW_FOR_IMAGES if image else _BY_WORKFLOW).get(workflow)


def builtin_policy(family: Family, options: Options, *, testing: bool = False) -> Policy:
    """The policy slsa-verifier's flags and its builder tables amount to."""
    rule = _delegator_rule(options) if family.delegator else _workflow_rule(family, options)
    rules: tuple[BuilderRule, ...] = (rule,)
    if testing and rule.pin == "release-tag":
        rules = (rule, replace(rule, pin="version", versions=("refs/heads/main",)))
    signer = Signer(
        "github-actions-oidc",
        (),
        rules,
        identity=IdentityRule(
            issuer=GITHUB_ISSUER, subject_pattern=re.compile(re.escape(family.workflow) + "@.+")
        ),
    )
    return Policy(
        uri=BUILTIN_POLICY_URI,
        digest={},
        signers=(signer,),
        build_types=family.build_types,
        predicate_types=family.predicate_types,
        parameters=ParameterRules(allow_unknown=family.allow_unknown),
        source=options.source_rule(),
        minimum_level=3,
    )


def _delegator_rule(options: Options) -> BuilderRule:
    """A delegator workflow (the trusted reusable workflow), or the builder id asked for."""
    if not options.builder_id:
        return BuilderRule(None, _TRW_PATTERN, "release-tag", (), (), 3)
    name, ref = split_ref(options.builder_id)
    versions = (ref.removeprefix("refs/tags/"),) if ref else ()
    return BuilderRule(name, None, "release-tag", versions, (), 3)


def _workflow_rule(family: Family, options: Options) -> BuilderRule:
    """The family's own workflow at a release tag; a builder id asked for must name it
    (at that version), or nothing is trusted."""
    rule = BuilderRule(family.workflow, None, "release-tag", (), (), 3)
    if not options.builder_id:
        return rule
    name, ref = split_ref(options.builder_id)
    if name != family.workflow:
        return BuilderRule("(untrusted builder id)", None, "none", (), (), 0)
    return replace(rule, versions=(ref.removeprefix("refs/tags/"),)) if ref else rule


@dataclass(frozen=True, slots=True)
class GeneratorIdentity:
    """slsa-verifier's rules for the certificate: GitHub's issuer, a trusted reusable
    workflow at a release tag, and the expected source repository."""

    options: Options
    testing: bool = False

    def checks(self, identity: CertificateIdentity) -> list[Check]:
        workflow, ref = split_ref(identity.san or "")
        return [
            Check(
                "certificate.issuer",
                identity.issuer == GITHUB_ISSUER,
                GITHUB_ISSUER,
                identity.issuer,
            ),
            self._trusted_builder_check(workflow),
            self._builder_ref_check(ref),
            self._source_repository_check(identity),
        ]

    def _trusted_builder_check(self, workflow: str) -> Check:
        family = family_for(workflow, image=self.options.image)
        trusted = family is not None
        if self.options.builder_id and family is not None and not family.delegator:
            trusted = split_ref(self.options.builder_id)[0] == workflow
        return Check(
            "certificate.builder",
            trusted,
            "a trusted slsa-github-generator reusable workflow",
            workflow or None,
            "" if trusted else "untrusted reusable workflow",
        )

    def _builder_ref_check(self, ref: str | None) -> Check:
        ok = ref is not None and is_release_tag(ref) and ref.startswith("refs/tags/")
        ok = ok or (self.testing and ref == "refs/heads/main")
        return Check(
            "certificate.builderRef",
            ok,
            "refs/tags/vX.Y.Z",
            ref,
            "" if ok else "the builder must be referenced by a release tag",
        )

    def _source_repository_check(self, identity: CertificateIdentity) -> Check:
        repository = identity.github_workflow_repository
        source = identity.source_repository_uri or (
            f"https://github.com/{repository}" if repository else None
        )
        want = normalize_repository(self.options.source_uri)
        return Check(
            "certificate.sourceRepository",
            source is not None and normalize_repository(source) == want,
            want,
            source,
        )


def slsa_verifier_policy(options: Options, *, testing: bool = False) -> ModePolicy:
    """The built-in policy `verify-artifact`'s (and `verify-image`'s) flags amount to: the
    certificate's rules, then one claims policy per trusted reusable workflow."""
    families = (*FAMILIES, CONTAINER_GENERATOR) if options.image else FAMILIES
    statements = {
        family.workflow: StatementRules(
            policy=builtin_policy(family, options, testing=testing),
            builder_is_signer=not family.delegator,
        )
        for family in families
    }
    return ModePolicy(
        uri=BUILTIN_POLICY_URI,
        signature=SignatureForm.CERTIFIED_ENVELOPE,
        certificate=GeneratorIdentity(options, testing),
        statements=statements,
    )
