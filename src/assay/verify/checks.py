"""Individual policy checks: each returns a `Check` with what was expected and found.

Pure functions over `Claims` and `Policy`; nothing here raises on a failed check.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final

from assay import protocol
from assay.policy.model import BuilderRule, ParameterRules, Policy, Signer, SourceRule
from assay.policy.refs import (
    is_release_tag,
    normalize_repository,
    split_ref,
    tag_name,
    versioned_tag_matches,
)
from assay.results import Check
from assay.verify.claims import Claims, subject_digests
from assay.verify.model import GcbMetadata

ACCEPTED_DIGESTS: Final = {
    name: length
    for name, length in protocol.DIGEST_HEX_LENGTHS.items()
    if name in protocol.STRONG_DIGESTS
}
"""Subject digest algorithms accepted for matching: all at least 256 bits."""


def _empty(value: object) -> bool:
    # Provenance v1: unset, null and empty MUST be read equivalently.
    return value is None or (isinstance(value, str | dict | list) and not value)


# -- builder ----------------------------------------------------------------------------


def builder_rule_matches(rule: BuilderRule, builder_id: str) -> bool:
    """True when `builder_id` (`name@ref`) is the rule's builder, pinned as the rule says."""
    name, ref = split_ref(builder_id)
    if not _names_builder(rule, name):
        return False
    if ref in rule.commits:  # (None never is)
        return True
    pinned = _PINS.get(rule.pin)
    return pinned is not None and pinned(ref, {tag_name(v) for v in rule.versions})


def _names_builder(rule: BuilderRule, name: str) -> bool:
    """The builder's name (before `@`) is the rule's id and matches its pattern whole
    (each when given)."""
    pattern = rule.id_pattern
    return (rule.id is None or name == rule.id) and (
        pattern is None or pattern.fullmatch(name) is not None
    )


def _release_tag(ref: str | None, versions: set[str]) -> bool:
    return ref is not None and is_release_tag(ref) and (not versions or tag_name(ref) in versions)


def _listed_version(ref: str | None, versions: set[str]) -> bool:
    # Listed versions as the builder writes them (Cloud Build: `@v0.2`); the bare
    # `@vX.Y.Z` refusal is for release-tag pins (GitHub builders).
    return ref is not None and tag_name(ref) in versions


_PINS: Final[dict[str, Callable[[str | None, set[str]], bool]]] = {
    "any": lambda _ref, _versions: True,
    "none": lambda ref, _versions: ref is None,
    "release-tag": _release_tag,
    "version": _listed_version,
}
"""How each pin judges the part after `@` (`commit`: only a listed commit, above)."""


def matching_rules(claims: Claims, signers: Sequence[Signer]) -> list[BuilderRule]:
    """The builder rules, among the given signers', that the claimed builder id satisfies."""
    if claims.builder_id is None:
        return []
    return [
        rule
        for signer in signers
        for rule in signer.builders
        if builder_rule_matches(rule, claims.builder_id)
    ]


def check_builder(claims: Claims, signers: Sequence[Signer]) -> tuple[Check, int | None]:
    """Is the builder paired with one of the signers that signed? Returns the trusted level."""
    expected = [f"{s.name}: {r.describe()}" for s in signers for r in s.builders]
    builder_id = claims.builder_id
    if builder_id is None:
        return Check("builder", False, expected, None, "the provenance names no builder id"), None
    levels = [rule.max_level for rule in matching_rules(claims, signers)]
    if not levels:
        detail = (
            "no signer that signed this attestation is paired with this builder"
            if signers
            else "no trusted signer signed this attestation"
        )
        return Check("builder", False, expected, builder_id, detail), None
    return Check("builder", True, expected, builder_id), max(levels)


# -- predicate and build type -------------------------------------------------------------


def check_predicate_type(claims: Claims, policy: Policy) -> Check:
    return Check(
        "predicateType",
        claims.predicate_type in policy.predicate_types,
        list(policy.predicate_types),
        claims.predicate_type,
    )


def check_build_type(claims: Claims, policy: Policy, rules: Sequence[BuilderRule] = ()) -> Check:
    """The buildType must be accepted by the policy and, when the matched builder rules
    name buildTypes, by one of them (slsa-verifier's builder/buildType pairs)."""
    accepted = list(policy.build_types)
    # A matching rule without its own list accepts the policy-wide ones.
    if rules and all(rule.build_types for rule in rules):
        paired = {t for rule in rules for t in rule.build_types}
        accepted = [t for t in accepted if t in paired]
    return Check("buildType", claims.build_type in accepted, accepted, claims.build_type)


# -- subject ----------------------------------------------------------------------------


def subject_matches(claims: Claims, artifact: Mapping[str, str]) -> str | None:
    """The name of the first subject sharing an accepted digest with `artifact`, or None."""
    for subject in claims.subjects:
        for algorithm, value in artifact.items():
            if algorithm not in ACCEPTED_DIGESTS:
                continue
            recorded = subject.digest.get(algorithm)
            if recorded is not None and recorded.lower() == value.lower():
                return subject.name or "(unnamed subject)"
    return None


def check_subject(claims: Claims, artifact_name: str, artifact: Mapping[str, str]) -> Check:
    usable = {a: v for a, v in artifact.items() if a in ACCEPTED_DIGESTS}
    found = [{"name": s.name, "digest": s.digest} for s in claims.subjects]
    expected, passed, detail = _subject_verdict(claims, artifact, usable)
    return Check("subject", passed, expected, found, detail, subject=artifact_name)


def _subject_verdict(
    claims: Claims, artifact: Mapping[str, str], usable: dict[str, str]
) -> tuple[dict[str, str], bool, str]:
    """(the digests compared, whether a subject has one of them, why)."""
    if not usable:
        return dict(artifact), False, "no digest of at least 256 bits was given for the artifact"
    bad = [a for a, v in usable.items() if len(v) != ACCEPTED_DIGESTS[a]]
    if bad:
        return dict(usable), False, f"malformed {bad[0]} digest"
    name = subject_matches(claims, usable)
    if name is None:
        return dict(usable), False, "no subject has a matching digest"
    return dict(usable), True, f"matches subject {name}"


# -- parameters ---------------------------------------------------------------------------


def _leaves(value: Any, prefix: str = "") -> Iterable[tuple[str, Any]]:
    if isinstance(value, Mapping) and value:
        for key, item in value.items():
            yield from _leaves(item, f"{prefix}.{key}" if prefix else str(key))
    elif prefix:
        yield prefix, value


def _lookup(parameters: Mapping[str, Any], path: str) -> Any:
    value: Any = parameters
    for part in path.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return None
        value = value[part]
    return value


def _covered(path: str, names: set[str]) -> bool:
    parts = path.split(".")
    return any(".".join(parts[:i]) in names for i in range(1, len(parts) + 1))


def check_parameters(claims: Claims, rules: ParameterRules) -> list[Check]:
    """Exact values, allowed sets and patterns; any other non-empty parameter fails."""
    parameters = claims.external_parameters
    checks = []
    for table, judge in _PARAMETER_RULES:
        for path, want in table(rules).items():
            found = _lookup(parameters, path)
            ok, expected = judge(found, want)
            checks.append(Check(f"externalParameters.{path}", ok, expected, found))
    if "*" not in rules.allow_unknown:
        checks.append(_unknown_parameters(parameters, rules))
    return checks


def _exact(found: Any, want: Any) -> tuple[bool, Any]:
    return found == want or (_empty(found) and _empty(want)), want


def _one_of(found: Any, options: Any) -> tuple[bool, Any]:
    ok = found in options or (_empty(found) and any(_empty(o) for o in options))
    return ok, {"oneOf": list(options)}


def _pattern(found: Any, pattern: Any) -> tuple[bool, Any]:
    return isinstance(found, str) and pattern.fullmatch(found) is not None, {
        "pattern": pattern.pattern
    }


_PARAMETER_RULES: Final[
    tuple[
        tuple[
            Callable[[ParameterRules], Mapping[str, Any]],
            Callable[[Any, Any], tuple[bool, Any]],
        ],
        ...,
    ]
] = (
    (lambda rules: rules.exact, _exact),
    (lambda rules: rules.allowed, _one_of),
    (lambda rules: rules.patterns, _pattern),
)
"""Each kind of expectation on a parameter path, and how a found value meets it."""


def _unknown_parameters(parameters: Mapping[str, Any], rules: ParameterRules) -> Check:
    known = rules.expected_paths() | set(rules.allow_unknown)
    unknown = [
        path
        for path, value in _leaves(parameters)
        if not _empty(value) and not _covered(path, known)
    ]
    return Check(
        "externalParameters (unknown)",
        not unknown,
        sorted(known),
        unknown,
        "parameters without an expectation or allow-list entry" if unknown else "",
    )


# -- source and ref -----------------------------------------------------------------------

_SCHEME: Final = re.compile(r"^([a-z][a-z0-9+.-]*)://")


def _scheme(uri: str) -> str | None:
    match = _SCHEME.match(uri.removeprefix("git+"))
    return match.group(1) if match else None


def recorded_repository(uri: str) -> str:
    """The repository in a recorded source URI, without ref, commit path or fragment."""
    text = uri.removeprefix("git+").split("#", 1)[0]
    text = re.sub(r"/commit/[0-9a-f]{7,64}$", "", text)
    return normalize_repository(text)


def _recorded_ref(uri: str) -> str | None:
    body = _SCHEME.sub("", uri.removeprefix("git+")).split("#", 1)[0]
    repository, sep, ref = body.partition("@")
    return ref if sep and "/" in repository else None


def repository_matches(expected: str, recorded: str) -> bool:
    """Compare a policy repository with a recorded URI.

    The scheme matters when the policy gives one (`https://` never matches `http://`);
    a ref in the recorded URI is ignored unless the expectation carries one (`@ref`),
    which must then be the recorded ref exactly.
    """
    scheme = _scheme(expected)
    if scheme is not None and scheme != _scheme(recorded):
        return False
    want_ref = _recorded_ref(expected)
    if want_ref is not None and want_ref != _recorded_ref(recorded):
        return False
    return normalize_repository(expected) == recorded_repository(recorded)


def check_source(claims: Claims, rule: SourceRule) -> list[Check]:
    if rule.repository is None:
        return []
    recorded = [u for u in (claims.trigger_uri, claims.source_uri) if u]
    if not recorded:
        return [Check("source", False, rule.repository, None, "the provenance records no source")]
    source = _source_check(rule.repository, recorded)
    if not source.passed:
        return [source]
    return [source, *_consistency_checks(claims.trigger_uri, claims.source_uri)]


def _source_check(repository: str, recorded: list[str]) -> Check:
    """Every recorded source URI (trigger, then source) is from the expected repository."""
    mismatched = [u for u in recorded if not repository_matches(repository, u)]
    return Check(
        "source",
        not mismatched,
        repository,
        recorded if len(recorded) > 1 else recorded[0],
        f"{mismatched[0]} is not from the expected repository" if mismatched else "",
    )


def _consistency_checks(trigger: str | None, source: str | None) -> list[Check]:
    """The repository that triggered the build must be the one whose code was built."""
    if not trigger or not source or "@" not in trigger or "@" not in source:
        return []
    if trigger.removeprefix("git+") == source.removeprefix("git+"):
        return []
    return [Check("source.consistency", False, trigger, source, "trigger and source differ")]


def _branch(claims: Claims) -> str | None:
    if claims.ref_type == "branch" and claims.ref:
        return claims.ref
    return claims.base_ref


def check_refs(claims: Claims, rule: SourceRule) -> list[Check]:
    """The branch, tag, versioned tag and workflow inputs the rule expects."""
    return [
        *_branch_checks(claims, rule),
        *_tag_checks(claims, rule),
        *_workflow_input_checks(claims, rule),
    ]


def _branch_checks(claims: Claims, rule: SourceRule) -> list[Check]:
    if rule.branch is None:
        return []
    want = rule.branch if rule.branch.startswith("refs/") else f"refs/heads/{rule.branch}"
    found = _branch(claims)
    detail = "" if found else "the provenance records no branch"
    return [Check("source.branch", found == want, want, found, detail)]


def _recorded_tag(claims: Claims) -> str | None:
    """The tag the provenance records as built, if it was a tag build."""
    ref = claims.ref or ""
    tagged = claims.ref_type == "tag" or ref.startswith("refs/tags/")
    return tag_name(ref) if tagged and ref else None


def _tag_checks(claims: Claims, rule: SourceRule) -> list[Check]:
    found = _recorded_tag(claims)
    checks = []
    if rule.tag is not None:
        checks.append(Check("source.tag", found == tag_name(rule.tag), tag_name(rule.tag), found))
    if rule.versioned_tag is not None:
        ok = found is not None and versioned_tag_matches(rule.versioned_tag, found)
        checks.append(Check("source.versionedTag", ok, rule.versioned_tag, found))
    return checks


def _workflow_input_checks(claims: Claims, rule: SourceRule) -> list[Check]:
    inputs = claims.workflow_inputs
    detail = "" if inputs is not None else "not a workflow_dispatch build"
    checks = []
    for key, want in rule.workflow_inputs.items():
        found = None if inputs is None else inputs.get(key)
        found_text = found if found is None or isinstance(found, str) else _text(found)
        checks.append(Check(f"workflowInputs.{key}", found_text == want, want, found_text, detail))
    return checks


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def check_level(level: int | None, policy: Policy) -> Check:
    """The build level the trusted builder reaches (an int) against the policy minimum."""
    return Check(
        "level",
        level is not None and level >= policy.minimum_level,
        policy.minimum_level,
        level,
        f"SLSA build level {policy.minimum_level} or higher",
    )


def check_gcb_context(gcb: GcbMetadata, statement: Mapping[str, Any]) -> list[Check]:
    """Google Cloud Build: the unsigned metadata printed beside the envelope must agree
    with the signed statement (as slsa-verifier requires), or the output was tampered with.
    """
    checks = [
        Check("gcb.kind", gcb.kind == "BUILD", "BUILD", gcb.kind),
        _gcb_image_check(gcb, statement),
    ]
    text = gcb.text
    if text is not None:
        differing = sorted(str(k) for k in text if text[k] != statement.get(k))
        checks.append(
            Check(
                "gcb.textProvenance",
                not differing,
                "equal to the signed statement",
                differing or "equal",
                f"fields differ: {', '.join(differing)}" if differing else "",
            )
        )
    return checks


def _gcb_image_check(gcb: GcbMetadata, statement: Mapping[str, Any]) -> Check:
    """The image summary names a subject's sha256, and so do the other digests printed."""
    digests = {f"sha256:{d['sha256']}" for d in subject_digests(statement) if "sha256" in d}
    image, qualified, resource = gcb.image_digest, gcb.fully_qualified_digest, gcb.resource_uri
    consistent = (
        isinstance(image, str)
        and image in digests
        and all(not isinstance(x, str) or x.endswith(f"@{image}") for x in (qualified, resource))
    )
    return Check(
        "gcb.imageSummary",
        consistent,
        sorted(digests),
        {"digest": image, "fullyQualifiedDigest": qualified, "resourceUri": resource},
    )
