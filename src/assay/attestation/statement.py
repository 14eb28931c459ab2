"""The in-toto Statement (v1 and v0.1), ResourceDescriptor and DigestSet.

Models are thin typed views over the parsed JSON: reading a field gives a typed
value (or None when it is absent or of the wrong type, which `validate()` reports),
and `to_dict()` gives back exactly what was parsed, unknown and extension fields
included. Keeping the parsed document as the single source of truth is what makes
round trips lossless and parsing cheap.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import orjson

from assay.attestation import _json
from assay.attestation.constants import (
    MAX_PAYLOAD_BYTES,
    PROVENANCE_V01,
    PROVENANCE_V02,
    PROVENANCE_V1,
    STATEMENT_V1,
    VSA_V1,
)
from assay.attestation.views import (
    DigestSet,
    JSONView,
    ResourceDescriptor,
    SupportsToDict,
    _put,
    digest_set,
    obj,
    text,
    views,
)
from assay.errors import AttestationError

if TYPE_CHECKING:
    from assay.attestation.provenance import ProvenanceV01, ProvenanceV02, ProvenanceV1
    from assay.attestation.vsa import VerificationSummaryV1

__all__ = [
    "DigestSet",
    "JSONView",
    "ResourceDescriptor",
    "Statement",
    "build_vsa_statement",
    "digest_set",
    "parse_statement",
]


class Statement(JSONView):
    """An in-toto Statement: `_type`, `subject`, `predicateType`, `predicate`."""

    __slots__ = ()

    def __init__(
        self,
        *,
        subject: Iterable[ResourceDescriptor | Mapping[str, Any]],
        predicate_type: str,
        predicate: SupportsToDict | Mapping[str, Any] | None = None,
        type: str = STATEMENT_V1,  # the wire name is `_type`
    ) -> None:
        raw: dict[str, Any] = {"_type": type, "subject": [], "predicateType": predicate_type}
        _put(raw, "subject", list(subject))
        if predicate is not None:
            raw["predicate"] = (
                _json.clone(dict(predicate))
                if isinstance(predicate, Mapping)
                else predicate.to_dict()
            )
        self._raw = raw

    type = text("_type", "The `_type` field.")
    subject = views("subject", ResourceDescriptor)
    predicate_type = text("predicateType")
    predicate = obj("predicate", "The raw predicate object (empty when unset).")

    def subject_digests(self) -> list[DigestSet]:
        """The digest set of every subject, in order."""
        return [s.digest for s in self.subject]

    def provenance_v1(self) -> ProvenanceV1:
        """The predicate as SLSA provenance v1 (raises if `predicateType` differs)."""
        # Imported here: the predicate modules import this one.
        from assay.attestation.provenance import ProvenanceV1

        return ProvenanceV1._wrap(self._predicate_for(PROVENANCE_V1))

    def provenance_v02(self) -> ProvenanceV02:
        """The predicate as SLSA provenance v0.2 (raises if `predicateType` differs)."""
        from assay.attestation.provenance import ProvenanceV02

        return ProvenanceV02._wrap(self._predicate_for(PROVENANCE_V02))

    def provenance_v01(self) -> ProvenanceV01:
        """The predicate as SLSA provenance v0.1 (raises if `predicateType` differs)."""
        from assay.attestation.provenance import ProvenanceV01

        return ProvenanceV01._wrap(self._predicate_for(PROVENANCE_V01))

    def verification_summary_v1(self) -> VerificationSummaryV1:
        """The predicate as a verification summary v1 (raises if `predicateType` differs)."""
        from assay.attestation.vsa import VerificationSummaryV1

        return VerificationSummaryV1._wrap(self._predicate_for(VSA_V1))

    def typed_predicate(
        self,
    ) -> ProvenanceV1 | ProvenanceV02 | ProvenanceV01 | VerificationSummaryV1 | None:
        """The predicate as its model, or None for a predicate type not modelled here."""
        predicate_type = self.predicate_type
        if predicate_type == PROVENANCE_V1:
            return self.provenance_v1()
        if predicate_type == PROVENANCE_V02:
            return self.provenance_v02()
        if predicate_type == PROVENANCE_V01:
            return self.provenance_v01()
        if predicate_type == VSA_V1:
            return self.verification_summary_v1()
        return None

    def _predicate_for(self, expected: str) -> dict[str, Any]:
        found = self._raw.get("predicateType")
        if found != expected:
            raise AttestationError("$.predicateType", f"expected {expected!r}, found {found!r}")
        predicate = self._raw.get("predicate")
        if predicate is None:
            # Unset reads as empty (in-toto: predicate is optional).
            predicate = {}
        if not isinstance(predicate, dict):
            raise AttestationError(
                "$.predicate", f"expected an object, found {_json.type_name(predicate)}"
            )
        return predicate


def parse_statement(data: bytes | str) -> Statement:
    """Parse statement bytes (e.g. a verified DSSE payload) without validating them.

    Raises `AttestationError` if the bytes are too large, not JSON, or not a JSON
    object. Call `validate()` on the result to check it against the spec.
    """
    if len(data) <= MAX_PAYLOAD_BYTES:
        # Inlined happy path: this runs once per statement read.
        try:
            value = orjson.loads(data)
        except orjson.JSONDecodeError:
            value = None
        if value.__class__ is dict:
            statement = object.__new__(Statement)
            statement._raw = value
            return statement
    # Anything else: let the general reader raise with the reason.
    return Statement._wrap(_json.loads_object(data, limit=MAX_PAYLOAD_BYTES))


def build_vsa_statement(
    subject: Iterable[ResourceDescriptor | Mapping[str, Any]],
    summary: VerificationSummaryV1,
) -> Statement:
    """A Statement v1 carrying `summary`; serialize it with `.to_json()` before signing."""
    return Statement(subject=subject, predicate_type=VSA_V1, predicate=summary)
