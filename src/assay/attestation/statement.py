"""The in-toto Statement (v1 and v0.1), ResourceDescriptor and DigestSet.

Models are thin typed views over the parsed JSON: reading a field gives a typed
value (or None when it is absent or of the wrong type, which `validate()` reports),
and `to_dict()` gives back exactly what was parsed, unknown and extension fields
included. Keeping the parsed document as the single source of truth is what makes
round trips lossless and parsing cheap.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

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
from assay.errors import AttestationError

if TYPE_CHECKING:
    from assay.attestation.provenance import ProvenanceV01, ProvenanceV02, ProvenanceV1
    from assay.attestation.vsa import VerificationSummaryV1

DigestSet = dict[str, str]
"""Digest algorithm name to digest value, e.g. `{"sha256": "ab12..."}`."""

_V = TypeVar("_V", bound="JSONView")


class SupportsToDict(Protocol):
    def to_dict(self) -> dict[str, Any]: ...


class JSONView:
    """Base of every model: wraps one JSON object and reads it lazily."""

    __slots__ = ("_raw",)
    _raw: dict[str, Any]
    _KNOWN: frozenset[str] = frozenset()

    def __init__(self, **fields: Any) -> None:
        # Subclasses build `_raw` from snake_case keyword arguments.
        raise TypeError(f"{type(self).__name__} is read-only: use {type(self).__name__}.from_dict")

    @classmethod
    def from_dict(cls: type[_V], data: Mapping[str, Any]) -> _V:
        """Wrap a copy of `data` (a JSON object with wire names)."""
        if not isinstance(data, Mapping):
            raise AttestationError("$", f"expected a JSON object, found {_json.type_name(data)}")
        return cls._wrap(_json.clone(dict(data)))

    @classmethod
    def _wrap(cls: type[_V], raw: dict[str, Any]) -> _V:
        view = object.__new__(cls)
        view._raw = raw
        return view

    def to_dict(self) -> dict[str, Any]:
        """A deep copy of the wire form, unknown and extension fields included."""
        result: dict[str, Any] = _json.clone(self._raw)
        return result

    def to_json(self, *, pretty: bool = False) -> bytes:
        """Serialize with wire names, keys in their original order."""
        return _json.dumps(self._raw, pretty=pretty)

    @property
    def unknown_fields(self) -> dict[str, Any]:
        """Fields this model does not define (extensions and anything else), by wire name."""
        return {k: v for k, v in self._raw.items() if k not in self._KNOWN}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, JSONView) and type(other) is type(self) and other._raw == self._raw

    def __hash__(self) -> int:
        return hash(_json.dumps(self._raw))

    def __repr__(self) -> str:
        return f"{type(self).__name__}.from_dict({self._raw!r})"

    # Typed readers: wrong types read as absent; validate() is what reports them.
    def _str(self, key: str) -> str | None:
        value = self._raw.get(key)
        return value if isinstance(value, str) else None

    def _obj(self, key: str) -> dict[str, Any]:
        value = self._raw.get(key)
        return value if isinstance(value, dict) else {}

    def _list(self, key: str) -> list[Any]:
        value = self._raw.get(key)
        return value if isinstance(value, list) else []

    def _view(self, key: str, cls: type[_V]) -> _V | None:
        value = self._raw.get(key)
        return cls._wrap(value) if isinstance(value, dict) else None

    def _views(self, key: str, cls: type[_V]) -> tuple[_V, ...]:
        return tuple(cls._wrap(item) for item in self._list(key) if isinstance(item, dict))


def _put(raw: dict[str, Any], key: str, value: Any) -> None:
    """Set a wire field, leaving unset (None) values out."""
    if value is None:
        return
    if isinstance(value, JSONView):
        raw[key] = value.to_dict()
    elif isinstance(value, list | tuple):
        raw[key] = [item.to_dict() if isinstance(item, JSONView) else item for item in value]
    elif isinstance(value, Mapping):
        raw[key] = _json.clone(dict(value))
    else:
        raw[key] = value


def digest_set(value: Any) -> DigestSet:
    """The string entries of a DigestSet-shaped value."""
    if not isinstance(value, dict):
        return {}
    return {k: v for k, v in value.items() if isinstance(v, str)}


class ResourceDescriptor(JSONView):
    """An artifact or resource: `uri`, `digest`, `name`, `content`, ... (all optional)."""

    __slots__ = ()
    _KNOWN = frozenset(
        {"uri", "digest", "name", "downloadLocation", "mediaType", "content", "annotations"}
    )

    def __init__(
        self,
        *,
        uri: str | None = None,
        digest: Mapping[str, str] | None = None,
        name: str | None = None,
        download_location: str | None = None,
        media_type: str | None = None,
        content: str | None = None,
        annotations: Mapping[str, Any] | None = None,
        extensions: Mapping[str, Any] | None = None,
    ) -> None:
        raw: dict[str, Any] = {}
        _put(raw, "uri", uri)
        _put(raw, "digest", digest)
        _put(raw, "name", name)
        _put(raw, "downloadLocation", download_location)
        _put(raw, "mediaType", media_type)
        _put(raw, "content", content)
        _put(raw, "annotations", annotations)
        raw.update(_json.clone(dict(extensions or {})))
        self._raw = raw

    @property
    def uri(self) -> str | None:
        return self._str("uri")

    @property
    def digest(self) -> DigestSet:
        return digest_set(self._raw.get("digest"))

    @property
    def name(self) -> str | None:
        return self._str("name")

    @property
    def download_location(self) -> str | None:
        return self._str("downloadLocation")

    @property
    def media_type(self) -> str | None:
        return self._str("mediaType")

    @property
    def content(self) -> str | None:
        """Base64 text, as on the wire."""
        return self._str("content")

    @property
    def annotations(self) -> dict[str, Any]:
        return self._obj("annotations")


class Statement(JSONView):
    """An in-toto Statement: `_type`, `subject`, `predicateType`, `predicate`."""

    __slots__ = ()
    _KNOWN = frozenset({"_type", "subject", "predicateType", "predicate"})

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

    @property
    def type(self) -> str | None:
        """The `_type` field."""
        return self._str("_type")

    @property
    def subject(self) -> tuple[ResourceDescriptor, ...]:
        return self._views("subject", ResourceDescriptor)

    @property
    def predicate_type(self) -> str | None:
        return self._str("predicateType")

    @property
    def predicate(self) -> dict[str, Any]:
        """The raw predicate object (empty when unset)."""
        return self._obj("predicate")

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
