"""JSON reading and writing shared by the attestation modules (bounded, no I/O)."""

from __future__ import annotations

from typing import Any

import orjson

from assay.attestation.constants import MAX_DOCUMENT_BYTES
from assay.errors import AttestationError

JSONObject = dict[str, Any]


def loads(data: bytes | str, *, where: str = "$", limit: int = MAX_DOCUMENT_BYTES) -> Any:
    """Parse one JSON document no larger than `limit` bytes."""
    size = len(data)
    if size > limit:
        raise AttestationError(where, f"expected at most {limit} bytes, found {size}")
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as error:
        raise AttestationError(where, f"expected JSON, found invalid JSON ({error})") from None


def loads_object(
    data: bytes | str, *, where: str = "$", limit: int = MAX_DOCUMENT_BYTES
) -> JSONObject:
    value = loads(data, where=where, limit=limit)
    if not isinstance(value, dict):
        raise AttestationError(where, f"expected a JSON object, found {type_name(value)}")
    return value


def dumps(value: Any, *, pretty: bool = False) -> bytes:
    """Compact JSON (or indented with `pretty`), keys in their original order."""
    option = orjson.OPT_INDENT_2 if pretty else 0
    return orjson.dumps(value, option=option)


def clone(value: Any) -> Any:
    """A deep copy of a JSON value (fast: one orjson round trip)."""
    return orjson.loads(orjson.dumps(value))


def type_name(value: Any) -> str:
    """The JSON name of a Python value's type, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, str):
        return "string"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def child(path: str, key: str | int) -> str:
    """The JSON path of a member or element: `$.a.b`, `$.a[0]`, `$.a["x-y"]`."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    if key.isidentifier():
        return f"{path}.{key}"
    return f"{path}[{orjson.dumps(key).decode()}]"
