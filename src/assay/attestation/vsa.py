"""SLSA verification summary (VSA) v1 predicate: read it, or build one to sign.

Covers VSA 1.0 to 1.2: `verifier.version` (1.1), `timeVerified` optional after 1.0,
verified properties such as `SLSA_BUILD_REPRODUCED` (1.2).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from assay.attestation.views import (
    JSONView,
    Member,
    ResourceDescriptor,
    _put,
    array,
    digests,
    text,
    view,
    views,
)

VerificationResult = Literal["PASSED", "FAILED"]


def format_timestamp(moment: dt.datetime) -> str:
    """`<YYYY>-<MM>-<DD>T<hh>:<mm>:<ss>Z` in UTC; naive datetimes are taken as UTC."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _strings(value: Any) -> tuple[str, ...]:
    return tuple(item for item in array(value) if isinstance(item, str))


def _levels(value: Any) -> dict[str, int] | None:
    if not isinstance(value, dict):
        return None
    return {k: v for k, v in value.items() if isinstance(v, int) and not isinstance(v, bool)}


class Verifier(JSONView):
    """`verifier`: who verified (`id`) and with which component versions (1.1)."""

    __slots__ = ()

    id = text("id")
    version = digests("version")


class VerificationSummaryV1(JSONView):
    """Predicate of `https://slsa.dev/verification_summary/v1`."""

    __slots__ = ()

    def __init__(
        self,
        *,
        verifier_id: str,
        resource_uri: str,
        policy: ResourceDescriptor,
        verification_result: VerificationResult,
        verified_levels: Iterable[str],
        time_verified: dt.datetime | str | None = None,
        verifier_version: Mapping[str, str] | None = None,
        input_attestations: Iterable[ResourceDescriptor] | None = None,
        dependency_levels: Mapping[str, int] | None = None,
        slsa_version: str | None = None,
    ) -> None:
        verifier: dict[str, Any] = {"id": verifier_id}
        _put(verifier, "version", verifier_version)
        raw: dict[str, Any] = {"verifier": verifier}
        if isinstance(time_verified, dt.datetime):
            time_verified = format_timestamp(time_verified)
        _put(raw, "timeVerified", time_verified)
        raw["resourceUri"] = resource_uri
        raw["policy"] = policy.to_dict()
        if input_attestations is not None:
            _put(raw, "inputAttestations", list(input_attestations))
        raw["verificationResult"] = verification_result
        raw["verifiedLevels"] = list(verified_levels)
        # `{}` means "no dependencies", unset means "no claim": keep the distinction.
        _put(raw, "dependencyLevels", dependency_levels)
        _put(raw, "slsaVersion", slsa_version)
        self._raw = raw

    verifier = view("verifier", Verifier)
    time_verified = text("timeVerified")
    resource_uri = text("resourceUri")
    policy = view("policy", ResourceDescriptor)
    input_attestations = views("inputAttestations", ResourceDescriptor)
    verification_result = text("verificationResult")
    verified_levels = Member("verifiedLevels", _strings)
    dependency_levels = Member(
        "dependencyLevels",
        _levels,
        "None when unset (no claim); `{}` when the artifact has no dependencies.",
    )
    slsa_version = text("slsaVersion")

    @property
    def verifier_id(self) -> str | None:
        return self.verifier.id
