"""SLSA verification summary (VSA) v1 predicate: read it, or build one to sign.

Covers VSA 1.0 to 1.2: `verifier.version` (1.1), `timeVerified` optional after 1.0,
verified properties such as `SLSA_BUILD_REPRODUCED` (1.2).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from assay.attestation.views import JSONView, ResourceDescriptor, _put, digest_set

VerificationResult = Literal["PASSED", "FAILED"]


def format_timestamp(moment: dt.datetime) -> str:
    """`<YYYY>-<MM>-<DD>T<hh>:<mm>:<ss>Z` in UTC; naive datetimes are taken as UTC."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class Verifier(JSONView):
    """`verifier`: who verified (`id`) and with which component versions (1.1)."""

    __slots__ = ()
    _KNOWN = frozenset({"id", "version"})

    @property
    def id(self) -> str | None:
        return self._str("id")

    @property
    def version(self) -> dict[str, str]:
        return digest_set(self._raw.get("version"))


class VerificationSummaryV1(JSONView):
    """Predicate of `https://slsa.dev/verification_summary/v1`."""

    __slots__ = ()
    _KNOWN = frozenset(
        {
            "verifier",
            "timeVerified",
            "resourceUri",
            "policy",
            "inputAttestations",
            "verificationResult",
            "verifiedLevels",
            "dependencyLevels",
            "slsaVersion",
        }
    )

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

    @property
    def verifier(self) -> Verifier:
        return self._view("verifier", Verifier) or Verifier._wrap({})

    @property
    def verifier_id(self) -> str | None:
        return self.verifier.id

    @property
    def time_verified(self) -> str | None:
        return self._str("timeVerified")

    @property
    def resource_uri(self) -> str | None:
        return self._str("resourceUri")

    @property
    def policy(self) -> ResourceDescriptor:
        return self._view("policy", ResourceDescriptor) or ResourceDescriptor._wrap({})

    @property
    def input_attestations(self) -> tuple[ResourceDescriptor, ...]:
        return self._views("inputAttestations", ResourceDescriptor)

    @property
    def verification_result(self) -> str | None:
        return self._str("verificationResult")

    @property
    def verified_levels(self) -> tuple[str, ...]:
        return tuple(v for v in self._list("verifiedLevels") if isinstance(v, str))

    @property
    def dependency_levels(self) -> dict[str, int] | None:
        """None when unset (no claim); `{}` when the artifact has no dependencies."""
        value = self._raw.get("dependencyLevels")
        if not isinstance(value, dict):
            return None
        return {k: v for k, v in value.items() if isinstance(v, int) and not isinstance(v, bool)}

    @property
    def slsa_version(self) -> str | None:
        return self._str("slsaVersion")
