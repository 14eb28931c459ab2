"""The typed JSON views every attestation model is made of: `JSONView` (a thin typed
view over parsed JSON that gives back exactly what was parsed), `DigestSet` and
`ResourceDescriptor`. The Statement and the predicate models build on these; keeping
them apart lets the predicate modules import them without importing the Statement,
which returns the predicates as their models."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Generic, Protocol, TypeVar, overload

from assay.attestation import _json
from assay.errors import AttestationError

__all__ = [
    "DigestSet",
    "JSONView",
    "Member",
    "ResourceDescriptor",
    "SupportsToDict",
    "array",
    "digest_set",
    "digests",
    "flag",
    "obj",
    "optional_view",
    "text",
    "view",
    "views",
]

DigestSet = dict[str, str]
"""Digest algorithm name to digest value, e.g. `{"sha256": "ab12..."}`."""

_V = TypeVar("_V", bound="JSONView")
_T = TypeVar("_T")


class SupportsToDict(Protocol):
    def to_dict(self) -> dict[str, Any]: ...


class JSONView:
    """Base of every model: wraps one JSON object and reads it lazily."""

    __slots__ = ("_raw",)
    _raw: dict[str, Any]
    _KNOWN: frozenset[str] = frozenset()  # the keys of its members, set per subclass

    def __init__(self, **fields: Any) -> None:
        # Subclasses build `_raw` from snake_case keyword arguments.
        raise TypeError(f"{type(self).__name__} is read-only: use {type(self).__name__}.from_dict")

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # The wire fields a view knows are the members it declares (its bases' included).
        members = (value for base in cls.__mro__ for value in vars(base).values())
        cls._KNOWN = frozenset(m.key for m in members if isinstance(m, Member))

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


class Member(Generic[_T]):
    """A wire field read as a typed, read-only attribute: `uri = text("uri")`.

    Each view declares its fields once, in a table of members; how a wire value is read
    (wrong types read as absent, which `validate()` reports) is written once, in the
    readers below."""

    def __init__(self, key: str, read: Callable[[Any], _T], doc: str | None = None) -> None:
        self.key = key
        self.read = read
        self.__doc__ = doc

    @overload
    def __get__(self, instance: None, owner: type[Any]) -> Member[_T]: ...

    @overload
    def __get__(self, instance: JSONView, owner: type[Any]) -> _T: ...

    def __get__(self, instance: JSONView | None, owner: type[Any]) -> Member[_T] | _T:
        if instance is None:
            return self
        return self.read(instance._raw.get(self.key))


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _flag(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


def array(value: Any) -> list[Any]:
    """A wire value as a list (empty when it is not one)."""
    return value if isinstance(value, list) else []


def text(key: str, doc: str | None = None) -> Member[str | None]:
    """A string field (None when absent or not a string)."""
    return Member(key, _text, doc)


def obj(key: str, doc: str | None = None) -> Member[dict[str, Any]]:
    """An object field (`{}` when absent or not an object)."""
    return Member(key, _object, doc)


def flag(key: str, doc: str | None = None) -> Member[bool | None]:
    """A boolean field (None when absent or not a boolean)."""
    return Member(key, _flag, doc)


def digests(key: str, doc: str | None = None) -> Member[DigestSet]:
    """A DigestSet field (its string entries)."""
    return Member(key, digest_set, doc)


def view(key: str, cls: type[_V], doc: str | None = None) -> Member[_V]:
    """A nested object as its view (an empty one when absent or not an object)."""
    return Member(key, lambda value: cls._wrap(_object(value)), doc)


def optional_view(key: str, cls: type[_V], doc: str | None = None) -> Member[_V | None]:
    """A nested object as its view (None when absent or not an object)."""
    return Member(key, lambda value: cls._wrap(value) if isinstance(value, dict) else None, doc)


def views(key: str, cls: type[_V], doc: str | None = None) -> Member[tuple[_V, ...]]:
    """An array of objects as their views (items that are not objects left out)."""
    return Member(
        key, lambda value: tuple(cls._wrap(i) for i in array(value) if isinstance(i, dict)), doc
    )


def _put(raw: dict[str, Any], key: str, value: Any) -> None:
    """Set a wire field, leaving unset (None) values out."""
    if value is not None:
        raw[key] = _wire(value)


def _wire(value: Any) -> Any:
    """A value in its wire form: views as their objects, mappings as copies."""
    if isinstance(value, JSONView):
        return value.to_dict()
    if isinstance(value, list | tuple):
        return [item.to_dict() if isinstance(item, JSONView) else item for item in value]
    if isinstance(value, Mapping):
        return _json.clone(dict(value))
    return value


def digest_set(value: Any) -> DigestSet:
    """The string entries of a DigestSet-shaped value."""
    if not isinstance(value, dict):
        return {}
    return {k: v for k, v in value.items() if isinstance(v, str)}


class ResourceDescriptor(JSONView):
    """An artifact or resource: `uri`, `digest`, `name`, `content`, ... (all optional)."""

    __slots__ = ()

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

    uri = text("uri")
    digest = digests("digest")
    name = text("name")
    download_location = text("downloadLocation")
    media_type = text("mediaType")
    content = text("content", "Base64 text, as on the wire.")
    annotations = obj("annotations")
