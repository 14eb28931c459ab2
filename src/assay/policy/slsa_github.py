"""slsa-verifier's rules for slsa-github-generator builders, as a built-in policy.

`assay verify-artifact` needs no policy file: the trusted builders (the reusable
workflows a Fulcio certificate may name), the buildType each produces, how the builder
must be pinned and the expected source come from here and from the command's flags.
The checks themselves are `assay.verify`'s, the same that a policy file gets.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace
from typing import Final

from assay import protocol
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
from assay.policy.refs import split_ref

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
        """The source the flags ask for (repository, branch or tag, workflow inputs)."""
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
    if family.delegator:
        rule = BuilderRule(None, _TRW_PATTERN, "release-tag", (), (), 3)
        if options.builder_id:
            name, ref = split_ref(options.builder_id)
            versions = (ref.removeprefix("refs/tags/"),) if ref else ()
            rule = BuilderRule(name, None, "release-tag", versions, (), 3)
    else:
        rule = BuilderRule(family.workflow, None, "release-tag", (), (), 3)
        if options.builder_id:
            name, ref = split_ref(options.builder_id)
            if name != family.workflow:
                rule = BuilderRule("(untrusted builder id)", None, "none", (), (), 0)
            elif ref:
                rule = replace(rule, versions=(ref.removeprefix("refs/tags/"),))
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
    source = options.source_rule()
    return Policy(
        uri=BUILTIN_POLICY_URI,
        digest={},
        signers=(signer,),
        build_types=family.build_types,
        predicate_types=family.predicate_types,
        parameters=ParameterRules(allow_unknown=family.allow_unknown),
        source=source,
        minimum_level=3,
    )
