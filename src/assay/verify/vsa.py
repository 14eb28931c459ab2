"""Verification summary attestations: issue one from a report, and check one.

Checking follows the VSA spec's seven MUST steps, in order:

1. the DSSE signature, with preconfigured keys;
2. every expected subject digest is among the subjects' digests;
3. `predicateType` is `https://slsa.dev/verification_summary/v1`;
4. `verifier.id` is one the signing key is trusted for (the key is *bound* to its
   verifier ids, which slsa-verifier does not do) and the expected one;
5. `resourceUri` equals the expected value;
6. `verificationResult` is `PASSED`;
7. `verifiedLevels` holds every expected value, a level implying the lower levels of
   its track (`SLSA_BUILD_LEVEL_3` satisfies `SLSA_BUILD_LEVEL_2`). `…_UNEVALUATED` and
   verified properties (`SLSA_BUILD_REPRODUCED`) are accepted and match exactly. A
   time-bounded level (`ASSAY_VULN_SCANNED_1D`: a vulnerability scan at most that old)
   is held by a shorter or equal one, and only while `timeVerified` is at most that old.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import filterfalse
from typing import Any, Final

from assay import __version__, attestation, dsse, protocol
from assay.attestation.constants import VERIFIED_PROPERTIES
from assay.errors import AttestationError, InputError
from assay.policy.model import VSA_V1
from assay.policy.vulnerabilities import parse_scanned_level
from assay.results import Check
from assay.verify.claims import parse_statement, subject_digests
from assay.verify.levels import parse_build_level
from assay.verify.pipeline import payload_type_check, validation_check

_VERIFIED_PROPERTIES: Final = VERIFIED_PROPERTIES

STATEMENT_V1: Final = protocol.STATEMENT_V1
SLSA_VERSION: Final = "1.0"
LEVEL_PATTERN: Final = re.compile(r"^SLSA_([A-Z0-9]+)_LEVEL_(\d+|UNEVALUATED)$")
MAX_EXPECTED_DIGESTS: Final = 100


def build_level(level: int) -> str:
    return f"SLSA_BUILD_LEVEL_{level}"


def implies(verified: str, requested: str) -> bool:
    """True when holding `verified` satisfies a requirement of `requested`."""
    if verified == requested:
        return True  # UNEVALUATED only matches itself
    want, have = track_level(requested), track_level(verified)
    return want is not None and have is not None and want[0] == have[0] and have[1] >= want[1]


def track_level(value: str) -> tuple[str, int] | None:
    """(track, level) of a numbered `SLSA_<TRACK>_LEVEL_<N>`; None for any other value,
    `SLSA_<TRACK>_LEVEL_UNEVALUATED` included."""
    match = LEVEL_PATTERN.match(value)
    if match is None or not match.group(2).isdigit():
        return None
    return match.group(1), int(match.group(2))


def highest_levels(values: Sequence[str]) -> list[str]:
    """At most one level per track (the highest), other values unchanged and in order."""
    levels = [track_level(value) for value in values]
    best = _highest_per_track(levels)
    result = []
    for value, level in zip(values, levels, strict=True):
        if level is None:
            if value not in result:
                result.append(value)
        elif level[0] in best:
            result.append(f"SLSA_{level[0]}_LEVEL_{best.pop(level[0])}")
    return result


def _highest_per_track(levels: Sequence[tuple[str, int] | None]) -> dict[str, int]:
    best: dict[str, int] = {}
    for track, level in filter(None, levels):
        best[track] = max(best.get(track, level), level)
    return best


# -- issuing -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class VsaInput:
    """Everything a VSA states, as plain data (the verifier's report reduced)."""

    subjects: Sequence[tuple[str, Mapping[str, str]]]
    verifier_id: str
    resource_uri: str
    policy_uri: str
    policy_digest: Mapping[str, str]
    passed: bool
    level: int | None
    input_attestations: Sequence[tuple[str, Mapping[str, str]]] = ()
    dependency_levels: Mapping[int, int] | None = None
    """Build level -> count (level 0: unverified dependencies); None: not evaluated."""
    verified_levels: Sequence[str] | None = None
    """`verifiedLevels` when passed (default: the build level alone)."""
    time_verified: dt.datetime | None = None


def build_vsa(data: VsaInput) -> dict[str, Any]:
    """A VSA v1 in-toto statement (`verifiedLevels` is `["FAILED"]` when the policy failed).

    Built with the attestation models (`assay.attestation`), so the wire form is theirs.
    """
    moment = (data.time_verified or dt.datetime.now(dt.UTC)).astimezone(dt.UTC)
    summary = attestation.VerificationSummaryV1(
        verifier_id=data.verifier_id,
        verifier_version={"assay": __version__},
        time_verified=moment,
        resource_uri=data.resource_uri,
        policy=attestation.ResourceDescriptor(uri=data.policy_uri, digest=dict(data.policy_digest)),
        input_attestations=[
            attestation.ResourceDescriptor(uri=uri, digest=dict(digest))
            for uri, digest in data.input_attestations
        ],
        verification_result="PASSED" if data.passed else "FAILED",
        verified_levels=_verified_levels(data),
        dependency_levels=_dependency_level_names(data.dependency_levels),
        slsa_version=SLSA_VERSION,
    )
    subjects = [
        attestation.ResourceDescriptor(name=name, digest=dict(digest))
        for name, digest in data.subjects
    ]
    return attestation.build_vsa_statement(subjects, summary).to_dict()


def _verified_levels(data: VsaInput) -> list[str]:
    """What the VSA says was verified: `["FAILED"]` unless the policy passed at a level."""
    if data.passed and data.level is not None:
        return list(data.verified_levels or [build_level(data.level)])
    return ["FAILED"]


def _dependency_level_names(counts: Mapping[int, int] | None) -> dict[str, int] | None:
    """`dependencyLevels` by level name. `{}` (no dependencies at all) and None (not
    evaluated) stay distinct; unverified dependencies are counted at SLSA_BUILD_LEVEL_0,
    never left out."""
    if counts is None:
        return None
    return {build_level(k): v for k, v in sorted(counts.items())}


def serialize(statement: Mapping[str, Any]) -> bytes:
    return json.dumps(statement, separators=(",", ":")).encode("utf-8")


# -- checking ------------------------------------------------------------------------------


@dataclass(slots=True)
class VsaResult:
    checks: list[Check]
    statement: dict[str, Any] | None = None
    signed_for: list[str] = field(default_factory=list)
    """Verifier ids whose trusted keys signed the envelope."""

    @property
    def passed(self) -> bool:
        return bool(self.checks) and all(c.passed for c in self.checks)

    def to_dict(self) -> dict[str, Any]:
        return {"passed": self.passed, "checks": [c.to_dict() for c in self.checks]}


def parse_digest(text: str) -> tuple[str, str]:
    """`ALG:VALUE` from the command line."""
    algorithm, sep, value = text.partition(":")
    if not sep or not algorithm or not value:
        raise InputError("subject digest", f"expected ALG:VALUE (sha256:abc…), got {text!r}")
    return algorithm, value


def _subject_digests(statement: Mapping[str, Any]) -> set[tuple[str, str]]:
    return {
        (str(k), str(v).lower()) for digest in subject_digests(statement) for k, v in digest.items()
    }


MAX_CLOCK_SKEW: Final = dt.timedelta(minutes=5)
"""A VSA verified later than now by more than this is refused."""


def check_vsa(
    envelope: dsse.Envelope,
    *,
    trusted: Mapping[str, Sequence[dsse.Verifier]],
    subject_digests: Sequence[tuple[str, str]],
    verifier_id: str,
    resource_uri: str,
    levels: Sequence[str] = (),
    now: dt.datetime | None = None,
) -> VsaResult:
    """Run the seven steps; `trusted` maps each verifier id to the keys that may sign for it."""
    if not subject_digests:
        raise InputError("subject_digests", "expected at least one subject digest, got none")
    if len(subject_digests) > MAX_EXPECTED_DIGESTS:
        raise InputError("subject_digests", f"expected at most {MAX_EXPECTED_DIGESTS} digests")
    # (1) signature, remembering which verifier ids the signing keys are bound to.
    signed_for = [
        vid for vid, keys in trusted.items() if keys and dsse.check_signatures(envelope, keys)
    ]
    return accept_vsa(
        envelope,
        signed_for,
        subject_digests=subject_digests,
        verifier_id=verifier_id,
        resource_uri=resource_uri,
        levels=levels,
        now=now,
    )


def accept_vsa(
    envelope: dsse.Envelope,
    signed_for: Sequence[str],
    *,
    subject_digests: Sequence[tuple[str, str]],
    verifier_id: str | None,
    resource_uri: str | None,
    levels: Sequence[str] = (),
    now: dt.datetime | None = None,
) -> VsaResult:
    """The rules for accepting a VSA, given the verifier ids whose keys signed it.

    `assay verify-vsa` and VSAs used as dependency evidence both come here. A None
    `verifier_id` accepts any verifier the signing key is bound to; a None
    `resource_uri` is only for evidence about a dependency that names no URI.
    """
    result = VsaResult([], signed_for=list(signed_for))
    result.checks.append(
        Check(
            "signature",
            bool(result.signed_for),
            "a signature by a key trusted for a verifier",
            result.signed_for,
        )
    )
    if not result.signed_for:
        return result
    result.checks.append(payload_type_check(envelope.payload_type))
    try:
        statement = parse_statement(envelope.payload)
    except AttestationError as error:
        result.checks.append(Check("statement", False, "an in-toto statement", None, str(error)))
        return result
    result.statement = statement
    result.checks.append(validation_check(statement))
    predicate = _mapping(statement.get("predicate"))
    verified = _level_names(predicate)
    result.checks += [
        *_subject_checks(statement, subject_digests),  # (2)
        Check(  # (3)
            "predicateType",
            statement.get("predicateType") == VSA_V1,
            VSA_V1,
            statement.get("predicateType"),
        ),
        _verifier_check(predicate, result.signed_for, verifier_id),  # (4)
        *_resource_checks(predicate, resource_uri),  # (5)
        _policy_check(predicate),
        _time_check(predicate.get("timeVerified"), now),
        Check(  # (6)
            "verificationResult",
            predicate.get("verificationResult") == "PASSED",
            "PASSED",
            predicate.get("verificationResult"),
        ),
        _levels_check(verified),  # (7)
        *_dependency_levels_checks(predicate),
        *(_asked_level_check(level, verified, predicate, now) for level in levels),
    ]
    return result


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _subject_checks(
    statement: Mapping[str, Any], subject_digests: Sequence[tuple[str, str]]
) -> list[Check]:
    found = _subject_digests(statement)
    return [
        Check(
            "subject",
            (algorithm, value.lower()) in found,
            f"{algorithm}:{value}",
            sorted(f"{a}:{v}" for a, v in found),
            subject=f"{algorithm}:{value}",
        )
        for algorithm, value in subject_digests
    ]


def _verifier_check(
    predicate: Mapping[str, Any], signed_for: Sequence[str], verifier_id: str | None
) -> Check:
    """The verifier, bound to the key that signed."""
    found_id = _mapping(predicate.get("verifier")).get("id")
    bound = found_id in signed_for
    return Check(
        "verifier.id",
        bound and (verifier_id is None or found_id == verifier_id),
        verifier_id if verifier_id is not None else list(signed_for),
        found_id,
        "" if bound else "the signing key is not trusted for this verifier",
    )


def _resource_checks(predicate: Mapping[str, Any], resource_uri: str | None) -> list[Check]:
    if resource_uri is None:
        return []
    found = predicate.get("resourceUri")
    return [Check("resourceUri", found == resource_uri, resource_uri, found)]


def _policy_check(predicate: Mapping[str, Any]) -> Check:
    """The policy the verifier applied must be named."""
    policy_uri = _mapping(predicate.get("policy")).get("uri")
    return Check(
        "policy",
        isinstance(policy_uri, str) and bool(policy_uri),
        "a policy with a URI",
        policy_uri,
    )


def _level_names(predicate: Mapping[str, Any]) -> list[str]:
    verified = predicate.get("verifiedLevels")
    return [v for v in verified if isinstance(v, str)] if isinstance(verified, list) else []


def _levels_check(verified: list[str]) -> Check:
    """Real level names, at most one level per track."""
    problem = _levels_problem(verified)
    return Check(
        "verifiedLevels",
        not problem,
        "real level names, at most one level per track",
        verified,
        problem,
    )


def _levels_problem(verified: list[str]) -> str:
    """What is wrong with the verified levels ("" when nothing is)."""
    tracks = [level[0] for level in map(track_level, verified) if level is not None]
    duplicated = sorted({t for t in tracks if tracks.count(t) > 1})
    if duplicated:
        return f"several levels for track {duplicated[0]}"
    unreal = next(filterfalse(real_level_name, verified), None)
    return "" if unreal is None else f"not a level: {unreal}"


def _dependency_levels_checks(predicate: Mapping[str, Any]) -> list[Check]:
    counts = predicate.get("dependencyLevels")
    if counts is None:
        return []
    if not isinstance(counts, Mapping):
        bad, found = ["(not an object)"], counts
    else:
        bad, found = [str(k) for k in counts if parse_build_level(str(k)) is None], sorted(counts)
    return [
        Check(
            "dependencyLevels",
            not bad,
            "SLSA_BUILD_LEVEL_0..3 keys",
            found,
            f"not a build level: {bad[0]}" if bad else "",
        )
    ]


def _asked_level_check(
    level: str, verified: list[str], predicate: Mapping[str, Any], now: dt.datetime | None
) -> Check:
    """A level the caller requires: implied by a verified level (a scan level, also fresh)."""
    wanted_age = parse_scanned_level(level)
    if wanted_age is not None:
        return _scanned_check(level, wanted_age, verified, predicate.get("timeVerified"), now)
    return Check(
        "verifiedLevels",
        any(implies(v, level) for v in verified),
        level,
        verified,
        subject=level,
    )


def _scanned_check(
    level: str,
    wanted: dt.timedelta,
    verified: list[str],
    time_verified: object,
    now: dt.datetime | None,
) -> Check:
    """`ASSAY_VULN_SCANNED_<AGE>` asked of a VSA: it must hold a scan level of at most that
    age, and have been verified at most that long ago (its `timeVerified`): a scan at
    most a day old when verified a week ago is not a scan at most a day old now."""
    held = [
        (age, value)
        for value in verified
        if (age := parse_scanned_level(value)) is not None and age <= wanted
    ]
    since = _age(time_verified, now)
    fresh = since is not None and since <= wanted
    detail = _first_problem(
        (not held, f"no scan level of at most {wanted} among the VSA's verifiedLevels"),
        (since is None, "timeVerified is missing or unreadable"),
        (not fresh, f"verified {since} ago, more than {wanted}: the scan may be older now"),
    )
    return Check(
        "verifiedLevels",
        bool(held) and fresh,
        f"{level}: a scan level of at most {wanted}, verified at most {wanted} ago",
        {"levels": [v for _, v in held] or verified, "timeVerified": time_verified},
        detail,
        subject=level,
    )


def _first_problem(*requirements: tuple[bool, str]) -> str:
    """The message of the first requirement that failed, in order (empty: none did)."""
    return next((message for failed, message in requirements if failed), "")


def _age(time_verified: object, now: dt.datetime | None) -> dt.timedelta | None:
    """How long ago `timeVerified` was (None: missing, unreadable or without a zone)."""
    verified_at = _zoned_time(time_verified)
    if verified_at is None:
        return None
    return (now or dt.datetime.now(dt.UTC)) - verified_at


def _zoned_time(value: object) -> dt.datetime | None:
    """An RFC 3339 time with its zone (None: not a string, unreadable or without a zone)."""
    if not isinstance(value, str):
        return None
    try:
        parsed = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else None


def real_level_name(value: str) -> bool:
    """A value `verifiedLevels` may hold: a track level SLSA defines, `…_UNEVALUATED`, a
    verified property, or a custom value outside the reserved `SLSA_` prefix."""
    match = LEVEL_PATTERN.match(value)
    if match is not None:
        if match.group(1) == "BUILD" and match.group(2).isdigit():
            return int(match.group(2)) <= 3
        return True
    if value in _VERIFIED_PROPERTIES:
        return True
    return value == "FAILED" or not value.startswith("SLSA_")


def _time_check(value: object, now: dt.datetime | None) -> Check:
    moment = now or dt.datetime.now(dt.UTC)
    parsed = _zoned_time(value)
    ok = parsed is not None and parsed <= moment + MAX_CLOCK_SKEW
    return Check(
        "timeVerified",
        ok,
        "a UTC time, not in the future",
        value,
        "" if ok else ("in the future" if parsed is not None else "missing or unreadable"),
    )
