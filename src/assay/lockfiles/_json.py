"""Strict JSON for lock files: bounded depth, duplicate keys rejected with their JSON path."""

from __future__ import annotations

import json
from typing import Any

from assay.lockfiles._model import MAX_JSON_DEPTH, LockfileError


class _Duplicated(dict[str, Any]):
    """An object in which a key occurred twice (the parser keeps the last, as JSON does)."""

    duplicate: str = ""


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) == len(pairs):
        return result
    seen: set[str] = set()
    marked = _Duplicated(result)
    for key, _ in pairs:
        if key in seen:
            marked.duplicate = key
            break
        seen.add(key)
    return marked


def member(path: str, key: str | int) -> str:
    """The JSON path of a member or element: `$.a`, `$.a[0]`, `$.a["node_modules/x"]`."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    if key.isidentifier():
        return f"{path}.{key}"
    return f"{path}[{json.dumps(key)}]"


def _check(value: Any, path: str, depth: int, filename: str) -> None:
    """Walk the document: report the first duplicate key and any nesting past the limit."""
    if depth > MAX_JSON_DEPTH:
        raise LockfileError(filename, path, f"expected nesting at most {MAX_JSON_DEPTH} deep")
    if isinstance(value, dict):
        if isinstance(value, _Duplicated):
            raise LockfileError(
                filename, member(path, value.duplicate), "duplicate key: each key must occur once"
            )
        for key, item in value.items():
            if isinstance(item, dict | list):
                _check(item, member(path, key), depth + 1, filename)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            if isinstance(item, dict | list):
                _check(item, member(path, index), depth + 1, filename)


def load_object(text: str, filename: str) -> dict[str, Any]:
    """Parse a JSON object; errors name the file and the line or JSON path."""
    try:
        value = json.loads(text, object_pairs_hook=_pairs)
    except json.JSONDecodeError as error:
        raise LockfileError(
            filename, f"line {error.lineno} column {error.colno}", f"expected JSON: {error.msg}"
        ) from None
    except RecursionError:
        raise LockfileError(
            filename, "$", f"expected nesting at most {MAX_JSON_DEPTH} deep"
        ) from None
    if not isinstance(value, dict):
        raise LockfileError(filename, "$", f"expected a JSON object, found {type_name(value)}")
    _check(value, "$", 0, filename)
    return value


def type_name(value: Any) -> str:
    """The JSON name of a value's type, for messages."""
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
