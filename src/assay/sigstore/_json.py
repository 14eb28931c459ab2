"""Strict JSON for signed documents: bounded size and depth, duplicate keys refused.

A bundle or envelope whose keys repeat can mean two things to two parsers, so it is an
error, named with its JSON path.
"""

from __future__ import annotations

import json
from typing import Any, Final

from assay._json_strict import parse_checked, problem_reason
from assay.errors import AttestationError

MAX_BUNDLE_BYTES: Final = 16 * 1024 * 1024
MAX_DEPTH: Final = 64


def loads(data: bytes | str, where: str) -> Any:
    """One JSON document; errors name `where` and the line or JSON path."""
    if len(data) > MAX_BUNDLE_BYTES:
        raise AttestationError(where, f"expected at most {MAX_BUNDLE_BYTES} bytes, got {len(data)}")
    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
        value, problem = parse_checked(text, MAX_DEPTH - 1)
    except UnicodeDecodeError as error:
        raise AttestationError(where, f"expected UTF-8 text: {error}") from None
    except json.JSONDecodeError as error:
        raise AttestationError(
            f"{where} line {error.lineno} column {error.colno}", f"expected JSON: {error.msg}"
        ) from None
    except RecursionError:
        raise AttestationError(where, f"expected nesting at most {MAX_DEPTH} deep") from None
    # Containers at depth MAX_DEPTH (the document being depth 0) are refused.
    if problem is not None:
        path, kind = problem
        raise AttestationError(f"{where}: {path}", problem_reason(kind, MAX_DEPTH))
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
