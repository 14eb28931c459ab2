"""JSON reading and writing shared by the attestation modules (bounded, no I/O)."""

from __future__ import annotations

import itertools
import json
import re
from typing import Any

import orjson

from assay._json_strict import case_variant, check_grammar, type_name
from assay.attestation.constants import MAX_DOCUMENT_BYTES
from assay.errors import AttestationError

JSONObject = dict[str, Any]

__all__ = [
    "JSONObject",
    "child",
    "clone",
    "dumps",
    "loads",
    "loads_object",
    "loads_strict",
    "type_name",
]


def loads(data: bytes | str, *, where: str = "$", limit: int = MAX_DOCUMENT_BYTES) -> Any:
    """Parse one JSON document no larger than `limit` bytes."""
    size = len(data)
    if size > limit:
        raise AttestationError(where, f"expected at most {limit} bytes, found {size}")
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as error:
        raise AttestationError(where, f"expected JSON, found invalid JSON ({error})") from None


MAX_DEPTH = 128
"""Nesting deeper than this is refused by `loads_strict` (before any recursion)."""

_STATEMENT_FIELDS = ("_type", "subject", "predicateType", "predicate")


class _Duplicate(Exception):
    def __init__(self, key: str, known: str | None = None) -> None:
        super().__init__(key)
        self.key = key
        self.known = known


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _Duplicate(key)
        result[key] = value
    return result


# A JSON string (an unterminated one runs to the end): its brackets do not nest.
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"?', re.DOTALL)
# Every byte but the four brackets, deleted before counting.
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")


def _depth_ok(data: bytes | str, limit: int) -> bool:
    # Strings dropped, then a running count of the brackets: cheap, and no recursion.
    text = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    brackets = _STRING.sub(b"", text).translate(None, _NOT_BRACKETS)
    steps = (1 if byte in b"[{" else -1 for byte in brackets)
    return max(itertools.accumulate(steps, initial=0)) <= limit


def _parse_pairs(data: bytes | str, where: str) -> Any:
    """JSON's grammar, strictly, with every object key once."""
    try:
        check_grammar(data)  # no BOM, NaN, lone surrogate: what `attest validate` refuses
        return json.loads(data, object_pairs_hook=_pairs)
    except _Duplicate as duplicate:
        raise AttestationError(
            where, f"expected each object key once, found {duplicate.key!r} twice"
        ) from None
    except (ValueError, RecursionError) as error:
        raise AttestationError(where, f"expected JSON, found invalid JSON ({error})") from None


def loads_strict(
    data: bytes | str, *, where: str = "$", limit: int = MAX_DOCUMENT_BYTES, statement: bool = False
) -> Any:
    """Parse JSON whose meaning a signature or a policy depends on.

    Refused, naming `where`: more than `limit` bytes, nesting deeper than `MAX_DEPTH`,
    text outside JSON's grammar (`assay._json_strict.check_grammar`: a byte order mark,
    `NaN`, a lone surrogate), an object key given twice anywhere, and (with `statement`) a top-level key that
    differs only in case from a statement field (`predicatetype`), which readers that
    fold case would take for it.
    """
    size = len(data)
    if size > limit:
        raise AttestationError(where, f"expected at most {limit} bytes, found {size}")
    if not _depth_ok(data, MAX_DEPTH):
        raise AttestationError(where, f"expected JSON nested at most {MAX_DEPTH} deep, found more")
    value = _parse_pairs(data, where)
    variant = (
        case_variant(value, _STATEMENT_FIELDS) if statement and isinstance(value, dict) else None
    )
    if variant is not None:
        key, known = variant
        raise AttestationError(
            f"{where}.{key}",
            f"expected the statement field {known!r}, found {key!r} (differs in case)",
        )
    return value


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


def child(path: str, key: str | int) -> str:
    """The JSON path of a member or element: `$.a.b`, `$.a[0]`, `$.a["x-y"]`."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    if key.isidentifier():
        return f"{path}.{key}"
    return f"{path}[{orjson.dumps(key).decode()}]"
