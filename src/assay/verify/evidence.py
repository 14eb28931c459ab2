"""Evidence for dependencies: verified provenance and trusted VSAs, indexed by digest.

Built from attestations already read into memory (the CLI reads an attestation
directory); every envelope is verified against the policy before it counts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from assay import dsse
from assay.errors import AttestationError
from assay.policy.model import PROVENANCE_V01, PROVENANCE_V02, PROVENANCE_V1, VSA_V1, Policy
from assay.verify import checks as c
from assay.verify.claims import Dependency, parse_statement, read_claims
from assay.verify.levels import Evidence
from assay.verify.verifier import Attestation, signers_that_signed
from assay.verify.vsa import LEVEL_PATTERN

_PROVENANCE = (PROVENANCE_V1, PROVENANCE_V02, PROVENANCE_V01)


class EvidenceIndex:
    """Callable resolver for `resolve_dependencies`: digest -> verified evidence."""

    def __init__(self, policy: Policy, attestations: Sequence[Attestation]) -> None:
        self._by_digest: dict[tuple[str, str], list[Evidence]] = {}
        self.rejected: list[str] = []
        """Attestations that did not verify (reported, never used)."""
        for attestation in attestations:
            try:
                self._add(policy, attestation)
            except AttestationError as error:
                self.rejected.append(f"{attestation.name}: {error}")

    def __call__(self, dependency: Dependency) -> list[Evidence]:
        found: list[Evidence] = []
        for algorithm, value in dependency.digest.items():
            for evidence in self._by_digest.get((algorithm, value.lower()), []):
                if evidence not in found:
                    found.append(evidence)
        return found

    def _index(self, statement: Mapping[str, Any], evidence: Evidence) -> None:
        subjects = statement.get("subject")
        for subject in subjects if isinstance(subjects, list) else []:
            digest = subject.get("digest") if isinstance(subject, Mapping) else None
            for algorithm, value in (digest or {}).items():
                if isinstance(value, str):
                    self._by_digest.setdefault((str(algorithm), value.lower()), []).append(evidence)

    def _add(self, policy: Policy, attestation: Attestation) -> None:
        envelope = attestation.envelope
        if envelope.payload_type != dsse.INTOTO_PAYLOAD_TYPE:
            self.rejected.append(f"{attestation.name}: payloadType {envelope.payload_type!r}")
            return
        signed = signers_that_signed(envelope, policy.signers)
        vsa_ids = [
            vid
            for signer in policy.vsa_signers
            if dsse.check_signatures(envelope, signer.keys, signer.threshold)
            for vid in signer.verifier_ids
        ]
        if not signed and not vsa_ids:
            self.rejected.append(f"{attestation.name}: no trusted signer")
            return
        statement = parse_statement(envelope.payload, where=attestation.name)
        predicate_type = statement.get("predicateType")
        if signed and predicate_type in _PROVENANCE:
            claims = read_claims(statement)
            _, level = c.check_builder(claims, signed)
            if level is None:
                self.rejected.append(f"{attestation.name}: builder not trusted by its signer")
                return
            self._index(
                statement,
                Evidence("provenance", level, attestation.name, claims.dependencies),
            )
        elif vsa_ids and predicate_type == VSA_V1:
            self._add_vsa(statement, attestation.name, vsa_ids)
        else:
            self.rejected.append(f"{attestation.name}: predicateType {predicate_type!r}")

    def _add_vsa(self, statement: Mapping[str, Any], name: str, verifier_ids: list[str]) -> None:
        predicate = statement.get("predicate")
        predicate = predicate if isinstance(predicate, Mapping) else {}
        verifier = predicate.get("verifier")
        verifier_id = verifier.get("id") if isinstance(verifier, Mapping) else None
        if verifier_id not in verifier_ids:
            # The key must be trusted for the verifier the VSA names.
            self.rejected.append(f"{name}: verifier {verifier_id!r} not bound to the signing key")
            return
        if predicate.get("verificationResult") != "PASSED":
            self.rejected.append(f"{name}: verificationResult is not PASSED")
            return
        levels = predicate.get("verifiedLevels")
        build = [
            int(m.group(2))
            for v in (levels if isinstance(levels, list) else [])
            if isinstance(v, str)
            and (m := LEVEL_PATTERN.match(v))
            and m.group(1) == "BUILD"
            and m.group(2).isdigit()
        ]
        counts = predicate.get("dependencyLevels")
        dependency_levels = (
            {str(k): v for k, v in counts.items() if isinstance(v, int) and not isinstance(v, bool)}
            if isinstance(counts, Mapping)
            else None
        )
        resource = predicate.get("resourceUri")
        self._index(
            statement,
            Evidence(
                "vsa",
                max(build) if build else 0,
                name,
                dependency_levels=dependency_levels,
                resource_uri=resource if isinstance(resource, str) else None,
            ),
        )
