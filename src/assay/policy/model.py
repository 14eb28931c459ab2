"""The verification policy: who is trusted for what, and what the provenance must say.

A policy is plain, immutable data; `assay.policy.loader` builds it from YAML or JSON and
`assay.verify` evaluates attestations against it. See docs/verification.md for the file
format.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from assay import protocol
from assay.keys import PublicKey
from assay.policy.vulnerabilities import VulnerabilityRule

if TYPE_CHECKING:
    from assay.policy.identity import IdentityRule

PROVENANCE_V1: Final = protocol.PROVENANCE_V1
PROVENANCE_V02: Final = protocol.PROVENANCE_V02
PROVENANCE_V01: Final = protocol.PROVENANCE_V01
VSA_V1: Final = protocol.VSA_V1

DEFAULT_LEVEL: Final = 1
"""The spec's default when a trusted builder's level is not stated."""

MAX_LEVEL: Final = 3


@dataclass(frozen=True, slots=True)
class BuilderRule:
    """A builder a signer may vouch for, how its version must be pinned, and its level.

    `id` is the builder id without its `@ref` part (or `id_pattern` a regex over it).
    `pin` says what the part after `@` must be: `any`, `none` (no `@ref`),
    `release-tag` (`refs/tags/vX.Y.Z`), `version` (one of `versions`) or `commit`
    (one of `commits`, full digests). `versions` and `commits` may also be combined
    with `release-tag` to restrict the set.
    """

    id: str | None
    id_pattern: re.Pattern[str] | None = None
    pin: str = "any"
    versions: tuple[str, ...] = ()
    commits: tuple[str, ...] = ()
    max_level: int = DEFAULT_LEVEL
    build_types: tuple[str, ...] = ()
    """buildTypes this builder may produce (empty: the policy-wide list applies)."""

    def describe(self) -> str:
        name = (
            self.id
            if self.id is not None
            else f"/{self.id_pattern.pattern if self.id_pattern else ''}/"
        )
        return f"{name} (pin {self.pin}, level {self.max_level})"


@dataclass(frozen=True, slots=True)
class Signer:
    """Public keys, or a Sigstore certificate identity, vouching for the listed `builders`."""

    name: str
    keys: tuple[PublicKey, ...]
    builders: tuple[BuilderRule, ...]
    threshold: int = 1
    legacy_raw_payload: bool = False
    """Also accept signatures over the bare payload instead of PAE (old GCB regional keys)."""
    identity: IdentityRule | None = None
    """A Sigstore signer: the certificate identity (issuer, SAN, Fulcio extension pins)
    a verified certificate must show. Keys and an identity are exclusive."""


@dataclass(frozen=True, slots=True)
class VsaSigner:
    """Public keys trusted to sign verification summaries for the listed verifier ids."""

    name: str
    keys: tuple[PublicKey, ...]
    verifier_ids: tuple[str, ...]
    threshold: int = 1


@dataclass(frozen=True, slots=True)
class ParameterRules:
    """Expectations on `externalParameters`, keyed by dotted paths (`workflow.ref`)."""

    exact: dict[str, Any] = field(default_factory=dict)
    allowed: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    patterns: dict[str, re.Pattern[str]] = field(default_factory=dict)
    allow_unknown: tuple[str, ...] = ()
    """Paths that may be present without an expectation; `*` allows every unknown path."""

    def expected_paths(self) -> set[str]:
        return set(self.exact) | set(self.allowed) | set(self.patterns)


@dataclass(frozen=True, slots=True)
class SourceRule:
    """The expected source repository and, at most one each, branch, tag, versioned tag."""

    repository: str | None = None
    branch: str | None = None
    tag: str | None = None
    versioned_tag: str | None = None
    workflow_inputs: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class DependencyRule:
    """Minimum build level of every non-source dependency, with exceptions.

    An exception is a URI prefix (`pkg:npm/`) or a digest (`sha256:abc…`).
    """

    minimum_level: int = 0
    exceptions: tuple[str, ...] = ()

    def excepts(self, uri: str | None, digests: dict[str, str]) -> bool:
        return any(_exception_covers(item, uri, digests) for item in self.exceptions)


def _exception_covers(exception: str, uri: str | None, digests: dict[str, str]) -> bool:
    """An exception names a dependency by a digest (`alg:value`) or a prefix of its URI."""
    alg, sep, value = exception.partition(":")
    by_digest = bool(sep) and digests.get(alg) == value
    return by_digest or bool(uri and uri.startswith(exception))


@dataclass(frozen=True, slots=True)
class Policy:
    """Everything `assay verify` checks an artifact's attestations against."""

    uri: str
    digest: dict[str, str]
    signers: tuple[Signer, ...]
    build_types: tuple[str, ...]
    predicate_types: tuple[str, ...] = (PROVENANCE_V1, PROVENANCE_V02)
    parameters: ParameterRules = field(default_factory=ParameterRules)
    source: SourceRule = field(default_factory=SourceRule)
    minimum_level: int = DEFAULT_LEVEL
    dependencies: DependencyRule | None = None
    vsa_signers: tuple[VsaSigner, ...] = ()
    resource_uri: str | None = None
    vulnerabilities: VulnerabilityRule | None = None
    """Known vulnerabilities of the dependencies that fail verification (checked by
    `assay.audit.VulnerabilityCheck` against a vulnerability store)."""
    arguments: Mapping[str, str] = field(default_factory=dict)
    """The values of the parameters the policy declares, as applied (defaults included)."""
