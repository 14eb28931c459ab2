"""The typed JSON views every attestation model is made of: `JSONView` (a thin typed
view over parsed JSON that gives back exactly what was parsed), `DigestSet` and
`ResourceDescriptor`. The Statement and the predicate models build on these; keeping
them apart lets the predicate modules import them without importing the Statement,
which returns the predicates as their models."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, TypeVar

from assay.attestation import _json
from assay.errors import AttestationError

__all__ = ["DigestSet", "JSONView", "ResourceDescriptor", "SupportsToDict", "digest_set"]

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
