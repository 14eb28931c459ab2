"""Evidence for dependencies: verified provenance and trusted VSAs, indexed by digest.

Built from attestations already read into memory (an attestation directory); every
envelope is verified against the policy before it counts. Provenance must be signed by
a policy signer for a builder it is paired with; a VSA must pass the very checks of
`assay verify-vsa` (`assay.verify.vsa.accept_vsa`) with the dependency's digest and URI
as the expected subject and resource. Only digests of at least 256 bits match.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from assay import dsse
from assay.errors import AttestationError
from assay.policy.model import PROVENANCE_V01, PROVENANCE_V02, PROVENANCE_V1, VSA_V1, Policy, Signer
from assay.results import Check
from assay.verify import checks as c
from assay.verify.claims import Dependency, parse_statement, read_claims, subject_digests
from assay.verify.levels import Evidence, parse_build_level
from assay.verify.model import Attestation
from assay.verify.signers import signers_that_signed
from assay.verify.vsa import accept_vsa, track_level

_PROVENANCE = (PROVENANCE_V1, PROVENANCE_V02, PROVENANCE_V01)


def strong_digests(digest: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The (algorithm, lowercase hex) pairs of at least 256 bits, well formed."""
    return [
        (algorithm, value.lower())
        for algorithm, value in digest.items()
        if algorithm in c.ACCEPTED_DIGESTS
        and isinstance(value, str)
        and len(value) == c.ACCEPTED_DIGESTS[algorithm]
    ]


class EvidenceIndex:
    """Callable resolver for `resolve_dependencies`: digest -> verified evidence."""

    def __init__(self, policy: Policy, attestations: Sequence[Attestation]) -> None:
        self._by_digest: dict[tuple[str, str], list[Evidence]] = {}
        self._vsas: dict[tuple[str, str], list[tuple[Attestation, list[str]]]] = {}
        self.rejected: list[str] = []
        """Attestations that did not verify (reported, never used)."""
        for attestation in attestations:
            try:
                self._add(policy, attestation)
            except AttestationError as error:
                self.rejected.append(f"{attestation.name}: {error}")

    def __call__(self, dependency: Dependency) -> list[Evidence]:
        found: list[Evidence] = []
        for key in strong_digests(dependency.digest):
            found += self._by_digest.get(key, [])
            found += self._accepted_vsas(key, dependency)
        return _unique(found)

    def _accepted_vsas(self, key: tuple[str, str], dependency: Dependency) -> list[Evidence]:
        """The VSAs about the digest that are accepted for this dependency."""
        accepted = (
            self._accept_vsa(attestation, signed_for, key, dependency)
            for attestation, signed_for in self._vsas.get(key, [])
        )
        return [evidence for evidence in accepted if evidence is not None]

    def _index(self, statement: Mapping[str, Any], evidence: Evidence) -> None:
        for key in _subject_keys(statement):
            self._by_digest.setdefault(key, []).append(evidence)

    def _add(self, policy: Policy, attestation: Attestation) -> None:
        envelope = attestation.envelope
        if envelope.payload_type != dsse.INTOTO_PAYLOAD_TYPE:
            self.rejected.append(f"{attestation.name}: payloadType {envelope.payload_type!r}")
            return
        signed = signers_that_signed(attestation, policy.signers)
        vsa_ids = _vsa_verifier_ids(policy, envelope)
        if not signed and not vsa_ids:
            self.rejected.append(f"{attestation.name}: no trusted signer")
            return
        statement = parse_statement(envelope.payload, where=attestation.name)
        predicate_type = statement.get("predicateType")
        if signed and predicate_type in _PROVENANCE:
            self._add_provenance(attestation, statement, signed)
        elif vsa_ids and predicate_type == VSA_V1:
            self._add_vsa(attestation, statement, vsa_ids)
        else:
            self.rejected.append(f"{attestation.name}: predicateType {predicate_type!r}")

    def _add_provenance(
        self, attestation: Attestation, statement: Mapping[str, Any], signed: Sequence[Signer]
    ) -> None:
        """Provenance counts at the level its signer trusts its builder to (none: rejected)."""
        claims = read_claims(statement)
        _, level = c.check_builder(claims, signed)
        if level is None:
            self.rejected.append(f"{attestation.name}: builder not trusted by its signer")
            return
        self._index(statement, Evidence("provenance", level, attestation.name, claims.dependencies))

    def _add_vsa(
        self, attestation: Attestation, statement: Mapping[str, Any], vsa_ids: list[str]
    ) -> None:
        """Kept by subject: judged per dependency, whose subject and resource it must name."""
        for key in _subject_keys(statement):
            self._vsas.setdefault(key, []).append((attestation, vsa_ids))

    def _accept_vsa(
        self,
        attestation: Attestation,
        signed_for: list[str],
        key: tuple[str, str],
        dependency: Dependency,
    ) -> Evidence | None:
        result = accept_vsa(
            attestation.envelope,
            signed_for,
            subject_digests=[key],
            verifier_id=None,
            resource_uri=dependency.uri,
        )
        if not result.passed or result.statement is None:
            self._reject_vsa(attestation, result.checks)
            return None
        predicate = _mapping(result.statement.get("predicate"))
        resource = predicate.get("resourceUri")
        return Evidence(
            "vsa",
            _build_level(predicate.get("verifiedLevels")),
            attestation.name,
            dependency_levels=_dependency_levels(predicate.get("dependencyLevels")),
            resource_uri=resource if isinstance(resource, str) else None,
        )

    def _reject_vsa(self, attestation: Attestation, checks: Sequence[Check]) -> None:
        failed = next((check for check in checks if not check.passed), None)
        if failed is None:
            return
        message = f"{attestation.name}: not accepted as a VSA ({failed.summary()})"
        if message not in self.rejected:
            self.rejected.append(message)


def _unique(found: list[Evidence]) -> list[Evidence]:
    """Each piece of evidence once, in the order first found."""
    unique: list[Evidence] = []
    for evidence in found:
        if evidence not in unique:
            unique.append(evidence)
    return unique


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _build_level(levels: object) -> int:
    """The highest SLSA_BUILD_LEVEL_N among a VSA's verified levels (0: none)."""
    found = [
        track_level(v) for v in (levels if isinstance(levels, list) else []) if isinstance(v, str)
    ]
    return max((level for track, level in filter(None, found) if track == "BUILD"), default=0)


def _dependency_levels(counts: object) -> dict[int, int] | None:
    """A VSA's `dependencyLevels`, the well-formed entries (None: not given)."""
    if not isinstance(counts, Mapping):
        return None
    result: dict[int, int] = {}
    for name, count in counts.items():
        level = parse_build_level(str(name))
        if level is not None and isinstance(count, int) and not isinstance(count, bool):
            result[level] = count
    return result


def _subject_keys(statement: Mapping[str, Any]) -> list[tuple[str, str]]:
    return [key for digest in subject_digests(statement) for key in strong_digests(digest)]


def _vsa_verifier_ids(policy: Policy, envelope: dsse.Envelope) -> list[str]:
    """The verifier ids of every VSA signer whose keys signed the envelope."""
    return [
        vid
        for signer in policy.vsa_signers
        if dsse.check_signatures(envelope, signer.keys, signer.threshold)
        for vid in signer.verifier_ids
    ]
