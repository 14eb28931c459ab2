"""Strict JSON parsing shared by readers outside the attestation layer (pure, no I/O).

A document whose object keys repeat can mean two things to two parsers, so readers of
signed documents and of lock files refuse it; nesting past a limit is refused too. This
module finds those problems with their JSON path; each reader raises its own error.
"""

from __future__ import annotations

import json
from typing import Any


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


def parse(text: str | bytes) -> Any:
    """`json.loads` that marks objects with a repeated key for `first_problem`.

    Raises what `json.loads` raises (`json.JSONDecodeError`, `RecursionError`).
    """
    return json.loads(text, object_pairs_hook=_pairs)


def member(path: str, key: str | int) -> str:
    """The JSON path of a member or element: `$.a`, `$.a[0]`, `$.a["node_modules/x"]`."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    if key.isidentifier():
        return f"{path}.{key}"
    return f"{path}[{json.dumps(key)}]"


def first_problem(value: Any, max_depth: int, path: str = "$") -> tuple[str, str] | None:
    """The first (JSON path, "depth" | "duplicate") in a parsed value, or None.

    Containers nested more than `max_depth` levels below `value` are a depth problem.
    """
    stack: list[tuple[Any, str, int]] = [(value, path, 0)]
    while stack:
        item, where, depth = stack.pop()
        if depth > max_depth:
            return where, "depth"
        if isinstance(item, _Duplicated):
            return member(where, item.duplicate), "duplicate"
        if not isinstance(item, dict | list):
            continue  # a scalar document has nothing to walk
        children: Any = item.items() if isinstance(item, dict) else enumerate(item)
        nested = [
            (child, member(where, key), depth + 1)
            for key, child in children
            if isinstance(child, dict | list)
        ]
        stack.extend(reversed(nested))  # document order, as a recursive walk reports
    return None


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
