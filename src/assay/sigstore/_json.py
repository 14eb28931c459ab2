"""Strict JSON for signed documents: bounded size and depth, duplicate keys refused.

A bundle or envelope whose keys repeat can mean two things to two parsers, so it is an
error, named with its JSON path.
"""

from __future__ import annotations

import json
from typing import Any, Final

from assay.errors import AttestationError

MAX_BUNDLE_BYTES: Final = 16 * 1024 * 1024
MAX_DEPTH: Final = 64


class _Duplicated(dict[str, Any]):
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


def _member(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if key.isidentifier() else f"{path}[{json.dumps(key)}]"


def _check(value: Any, path: str, depth: int, where: str) -> None:
    if depth >= MAX_DEPTH:
        raise AttestationError(f"{where}: {path}", f"expected nesting at most {MAX_DEPTH} deep")
    if isinstance(value, _Duplicated):
        raise AttestationError(
            f"{where}: {_member(path, value.duplicate)}", "duplicate key: each key must occur once"
        )
    items: Any = value.items() if isinstance(value, dict) else enumerate(value)
    for key, item in items:
        if isinstance(item, dict | list):
            _check(item, _member(path, key), depth + 1, where)


def loads(data: bytes | str, where: str) -> Any:
    """One JSON document; errors name `where` and the line or JSON path."""
    if len(data) > MAX_BUNDLE_BYTES:
        raise AttestationError(where, f"expected at most {MAX_BUNDLE_BYTES} bytes, got {len(data)}")
    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
        value = json.loads(text, object_pairs_hook=_pairs)
    except UnicodeDecodeError as error:
        raise AttestationError(where, f"expected UTF-8 text: {error}") from None
    except json.JSONDecodeError as error:
        raise AttestationError(
            f"{where} line {error.lineno} column {error.colno}", f"expected JSON: {error.msg}"
        ) from None
    except RecursionError:
        raise AttestationError(where, f"expected nesting at most {MAX_DEPTH} deep") from None
    if isinstance(value, dict | list):
        _check(value, "$", 0, where)
    return value


def documents(data: bytes, where: str) -> list[tuple[str, Any]]:
    """A JSON document, or JSON lines: each with the label errors should use."""
    if len(data) > MAX_BUNDLE_BYTES:
        raise AttestationError(where, f"expected at most {MAX_BUNDLE_BYTES} bytes, got {len(data)}")
    stripped = data.strip()
    if not stripped:
        raise AttestationError(where, "expected JSON, got an empty file")
    try:
        return [(where, loads(stripped, where))]
    except AttestationError as whole:
        lines = [line for line in stripped.splitlines() if line.strip()]
        if len(lines) < 2:
            raise
        first = whole
    try:
        return [
            (f"{where} line {n}", loads(line, f"{where} line {n}"))
            for n, line in enumerate(lines, 1)
        ]
    except AttestationError:
        if lines[0].strip() == b"{":
            raise first from None  # one pretty-printed document: its own error says more
        raise
