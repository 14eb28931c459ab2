"""Strict JSON parsing: the one grammar every reader of JSON input uses (pure, no I/O).

A document whose object keys repeat can mean two things to two parsers, so readers of
signed documents and of lock files refuse it; nesting past a limit is refused too. This
module finds those problems with their JSON path; each reader raises its own error.

Python's `json` also accepts what RFC 8259 does not: a byte order mark, `NaN` and
`Infinity`, numbers beyond a double's range (read as infinity), lone surrogates
(`"\\ud800"`, a string no UTF-8 writer can write back) and UTF-16/32 bytes. `parse` and
`parse_checked` refuse all of them first (`check_grammar`), so a signed payload means the
same thing to `verify`, `/verify` and `attest validate`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, Final

import orjson


def check_grammar(text: str | bytes) -> None:
    """Refuse text that is not RFC 8259 JSON in UTF-8 (orjson's grammar, which `attest
    validate` reads payloads with), raising `json.JSONDecodeError` with its line and
    column. Nesting too deep for orjson (1024) raises `RecursionError`, as `json` would:
    every reader names its own, lower, depth limit for it."""
    try:
        orjson.loads(text)
    except orjson.JSONDecodeError as error:
        if "depth limit" in error.msg or "recursion" in error.msg:
            raise RecursionError(error.msg) from None
        raise


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

    Raises what `json.loads` raises (`json.JSONDecodeError`, `RecursionError`), and
    `json.JSONDecodeError` for what `check_grammar` refuses.
    """
    check_grammar(text)
    return json.loads(text, object_pairs_hook=_pairs)


def parse_checked(text: str | bytes, max_depth: int) -> tuple[Any, tuple[str, str] | None]:
    """`parse(text)` and its `first_problem(value, max_depth)`, with less work.

    When no object repeated a key and the text has too few opening brackets to nest
    deeper than `max_depth`, there is nothing to walk. Raises what `parse` raises.
    """
    check_grammar(text)
    repeated: list[bool] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        result = dict(items)
        if len(result) == len(items):
            return result
        repeated.append(True)
        return _pairs(items)

    value = json.loads(text, object_pairs_hook=pairs)
    if not repeated and max_depth >= 0 and _openings(text) <= max_depth + 1:
        return value, None  # a container at depth d follows d + 1 opening brackets
    return value, first_problem(value, max_depth)


def _openings(text: str | bytes) -> int:
    """At least the number of `{` and `[` in the text (bytes in any of JSON's encodings:
    each of those characters holds a byte of the same value)."""
    if isinstance(text, str):
        return text.count("{") + text.count("[")
    return text.count(b"{") + text.count(b"[")


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
    A document without a problem is walked once, without building any path; the paths
    are built only to name a problem found.
    """
    if max_depth >= 0 and _clean(value, max_depth):
        return None
    return _locate(value, max_depth, path)


_CONTAINERS: Final = (dict, list)


def _clean(value: Any, max_depth: int) -> bool:
    """True when no container is a `_Duplicated` one or lies deeper than `max_depth`.

    The same containers `_locate` visits, level by level; a problem anywhere makes it
    False, and `_locate` then names the first one in document order.
    """
    level: list[Any] | None = [value] if isinstance(value, _CONTAINERS) else []
    depth = 0
    while level:
        if depth > max_depth:
            return False
        level = _containers_below(level)
        depth += 1
    return level is not None


def _containers_below(level: list[Any]) -> list[Any] | None:
    """The containers one level below `level`'s; None when one of `level` is duplicated."""
    below: list[Any] = []
    for item in level:
        if isinstance(item, _Duplicated):
            return None
        children = item.values() if isinstance(item, dict) else item
        below.extend([child for child in children if isinstance(child, _CONTAINERS)])
    return below


def _locate(value: Any, max_depth: int, path: str) -> tuple[str, str] | None:
    """The first problem in document order, with its JSON path (a depth-first walk)."""
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


def problem_reason(kind: str, max_depth: int) -> str:
    """What a reader says of a `first_problem` kind ("depth" or "duplicate")."""
    if kind == "depth":
        return f"expected nesting at most {max_depth} deep, found more"
    return "duplicate key: each key must occur once, found it twice"


def case_variant(keys: Iterable[str], known: Iterable[str]) -> tuple[str, str] | None:
    """The first key that differs from a known name only in case (`predicatetype`), with
    that name: readers that fold case would take one for the other."""
    folded = {name.lower(): name for name in known}
    for key in keys:
        name = folded.get(key.lower())
        if name is not None and name != key:
            return key, name
    return None


def type_name(value: Any) -> str:
    """The JSON name of a Python value's type, for messages."""
    for types, name in _JSON_TYPES:
        if isinstance(value, types):
            return name
    return type(value).__name__


_JSON_TYPES: Final[tuple[tuple[type | tuple[type, ...], str], ...]] = (
    (type(None), "null"),
    (bool, "boolean"),  # before int: a bool is an int in Python
    (str, "string"),
    ((int, float), "number"),
    (list, "array"),
    (dict, "object"),
)
