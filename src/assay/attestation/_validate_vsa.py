"""Rules of the verification summary (VSA) v1 predicate, VSA 1.0 to 1.2."""

from __future__ import annotations

import re
from typing import Any, Final

from assay.attestation import _checks as c
from assay.attestation._json import child, type_name
from assay.attestation.constants import (
    LEVEL_FAILED,
    RESERVED_LEVEL_PREFIX,
    RESULT_FAILED,
    RESULT_PASSED,
    STANDARD_LEVELS,
    VERIFIED_PROPERTIES,
)
from assay.attestation.findings import Finding
from assay.attestation.vsa import VerificationSummaryV1

_P: Final = "$.predicate"
# `SLSA_<TRACK>_LEVEL_<n>` and `..._UNEVALUATED` are spec values of later minor versions.
_TRACK_LEVEL: Final = re.compile(r"SLSA_([A-Z][A-Z0-9]*)_LEVEL_(?:\d+|UNEVALUATED)")
_VERSION: Final = re.compile(r"\d+\.\d+")


def level_track(out: list[Finding], value: Any, path: str) -> str | None:
    """Checks one LevelResult; returns its track (`BUILD`, `SOURCE`, ...) if it is a level."""
    if not isinstance(value, str):
        c.wrong_type(out, path, "a level string", value)
        return None
    match = _TRACK_LEVEL.fullmatch(value)
    if match is not None:
        return match.group(1)
    if value not in STANDARD_LEVELS and value not in VERIFIED_PROPERTIES:
        _custom_level(out, value, path)
    return None


def _custom_level(out: list[Finding], value: str, path: str) -> None:
    if value.startswith(RESERVED_LEVEL_PREFIX):
        c.add(
            out,
            path,
            "level-reserved-prefix",
            c.ERROR,
            f"expected a spec level or a custom value not beginning with "
            f"{RESERVED_LEVEL_PREFIX}, found {value!r}",
        )
    elif value:
        c.add(
            out,
            path,
            "level-custom",
            c.WARNING,
            f"expected one of {', '.join(sorted(STANDARD_LEVELS))}, found custom value {value!r}",
        )
    else:
        c.missing(out, path, "a level value")


def check_v1(out: list[Finding], predicate: dict[str, Any]) -> None:
    c.extensions(
        out, predicate, VerificationSummaryV1._KNOWN, _P, "uri", where="the summary predicate"
    )
    _verifier(out, predicate.get("verifier"))
    _time_verified(out, predicate)
    c.required_str(out, predicate, "resourceUri", _P, uri=True)
    _policy(out, predicate.get("policy"))
    _input_attestations(out, predicate.get("inputAttestations"))
    result = predicate.get("verificationResult")
    _result(out, result)
    _result_consistency(out, result, _verified_levels(out, predicate.get("verifiedLevels")))
    _dependency_levels(out, predicate.get("dependencyLevels"))
    _slsa_version(out, predicate.get("slsaVersion"))


def _verifier(out: list[Finding], verifier: Any) -> None:
    vpath = child(_P, "verifier")
    if c.present(out, verifier, dict, vpath, expected="an object", what="an object with id"):
        c.required_str(out, verifier, "id", vpath, uri=True)
        c.string_map(out, verifier, "version", vpath)
        c.extensions(out, verifier, frozenset({"id", "version"}), vpath, "uri", where="verifier")


def _time_verified(out: list[Finding], predicate: dict[str, Any]) -> None:
    if predicate.get("timeVerified") is None:
        # Required by VSA 1.0, optional since 1.1: a warning, an error under --strict.
        c.missing(out, child(_P, "timeVerified"), "a timestamp (required by VSA 1.0)", c.WARNING)
    else:
        c.timestamp(out, predicate, "timeVerified", _P)


def _policy(out: list[Finding], policy: Any) -> None:
    ppath = child(_P, "policy")
    if policy is None:
        c.missing(out, ppath, "a resource descriptor with uri")
        return
    if not c.descriptor(out, policy, ppath, "uri"):
        return
    c.unset(
        out,
        policy,
        "uri",
        ppath,
        code="policy-uri-missing",
        severity=c.ERROR,
        what="the policy uri",
    )
    c.unset(
        out,
        policy,
        "digest",
        ppath,
        code="policy-digest-missing",
        severity=c.WARNING,
        what="the policy digest",
    )


def _result_consistency(out: list[Finding], result: Any, failed: bool | None) -> None:
    """A FAILED verification lists the FAILED level; a PASSED one does not."""
    lpath = child(_P, "verifiedLevels")
    if result == RESULT_FAILED and failed is False:
        c.add(
            out,
            lpath,
            "result-inconsistent",
            c.ERROR,
            f"expected {LEVEL_FAILED!r} among the levels of a FAILED verification, found none",
        )
    elif result == RESULT_PASSED and failed:
        c.add(
            out,
            lpath,
            "result-inconsistent",
            c.ERROR,
            f"expected no {LEVEL_FAILED!r} level in a PASSED verification, found one",
        )


def _slsa_version(out: list[Finding], version: Any) -> None:
    if version is None:
        return
    vp = child(_P, "slsaVersion")
    if not isinstance(version, str):
        c.wrong_type(out, vp, "a <MAJOR>.<MINOR> string", version)
    elif _VERSION.fullmatch(version) is None:
        c.add(out, vp, "version-format", c.ERROR, f"expected <MAJOR>.<MINOR>, found {version!r}")


def _result(out: list[Finding], result: Any) -> None:
    path = child(_P, "verificationResult")
    if result in (None, ""):
        c.missing(out, path, "PASSED or FAILED")
    elif result not in (RESULT_PASSED, RESULT_FAILED):
        found = repr(result) if isinstance(result, str) else type_name(result)
        c.add(out, path, "result-value", c.ERROR, f"expected PASSED or FAILED, found {found}")


def _verified_levels(out: list[Finding], levels: Any) -> bool | None:
    """Checks verifiedLevels; returns whether FAILED is among them (None if unreadable)."""
    path = child(_P, "verifiedLevels")
    if levels is None:
        c.missing(out, path, "an array of levels")
        return None
    if not isinstance(levels, list):
        c.wrong_type(out, path, "an array of levels", levels)
        return None
    _one_level_per_track(out, levels, path)
    return LEVEL_FAILED in levels


def _one_level_per_track(out: list[Finding], levels: list[Any], path: str) -> None:
    """Each level is well formed, and no track has two."""
    tracks: dict[str, str] = {}
    for index, value in enumerate(levels):
        where = f"{path}[{index}]"
        track = level_track(out, value, where)
        if track is None:
            continue
        if track in tracks:
            c.add(
                out,
                where,
                "level-duplicate-track",
                c.ERROR,
                f"expected at most one {track} level, found {tracks[track]!r} and {value!r}",
            )
        else:
            tracks[track] = value


def _input_attestations(out: list[Finding], value: Any) -> None:
    path = child(_P, "inputAttestations")
    if value is None:
        return
    if not isinstance(value, list):
        c.wrong_type(out, path, "an array of resource descriptors", value)
        return
    for index, item in enumerate(value):
        where = f"{path}[{index}]"
        if c.descriptor(out, item, where, "uri", require_digest="input-attestation-digest"):
            c.unset(
                out,
                item,
                "uri",
                where,
                code="input-attestation-uri",
                severity=c.WARNING,
                what="a fetchable uri for the input attestation",
            )


def _dependency_levels(out: list[Finding], value: Any) -> None:
    path = child(_P, "dependencyLevels")
    if value is None:
        return  # unset means "no claim"; {} means "no dependencies"
    if not isinstance(value, dict):
        c.wrong_type(out, path, "an object of level to count", value)
        return
    for level, count in value.items():
        where = child(path, level)
        level_track(out, level, where)
        _dependency_count(out, count, where)


def _dependency_count(out: list[Finding], count: Any, where: str) -> None:
    if not _is_count(count):
        found = repr(count) if isinstance(count, int | float) else type_name(count)
        c.add(
            out,
            where,
            "dependency-count",
            c.ERROR,
            f"expected a non-negative integer count, found {found}",
        )


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0
