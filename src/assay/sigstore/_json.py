"""Strict JSON for signed documents: bounded size and depth, duplicate keys refused.

A bundle or envelope whose keys repeat can mean two things to two parsers, so it is an
error, named with its JSON path.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Final

from assay._json_strict import parse_checked, problem_reason
from assay.errors import AttestationError

MAX_BUNDLE_BYTES: Final = 16 * 1024 * 1024
MAX_DEPTH: Final = 64


def _check_size(data: bytes | str, where: str) -> None:
    if len(data) > MAX_BUNDLE_BYTES:
        raise AttestationError(where, f"expected at most {MAX_BUNDLE_BYTES} bytes, got {len(data)}")


def loads(data: bytes | str, where: str) -> Any:
    """One JSON document; errors name `where` and the line or JSON path."""
    _check_size(data, where)
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
    _check_size(data, where)
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
    return _json_lines(lines, where, first)


def _json_lines(lines: list[bytes], where: str, whole: AttestationError) -> list[tuple[str, Any]]:
    """Each line a document; `whole` is the error of reading them as one document."""
    try:
        return [
            (f"{where} line {n}", loads(line, f"{where} line {n}"))
            for n, line in enumerate(lines, 1)
        ]
    except AttestationError:
        if lines[0].strip() == b"{":
            raise whole from None  # one pretty-printed document: its own error says more
        raise


_EXPECTED: Final = {
    "missing": "a value (the field is required)",
    "extra_forbidden": "no such field (unknown to the bundle format)",
    "string_type": "a string",
    "int_type": "an integer",
    "int_parsing": "an integer (or a string of digits)",
    "bool_type": "a boolean",
    "list_type": "an array",
    "dict_type": "an object",
    "model_type": "an object",
    "model_attributes_type": "an object",
    "base64_decode": "base64 data",
    "bytes_type": "base64 data",
    "enum": "one of the format's enumerated names",
    "literal_error": "one of the format's enumerated names",
    "too_short": "more items",
    "too_long": "fewer items",
}


_VALUE_ERRORS: Final = (
    ("Expected protobuf bytes", "base64 data"),
    ("Value exceeds uint64", "an unsigned 64-bit integer"),
    ("Value exceeds int64", "a signed 64-bit integer"),
)


def _json_path(location: Sequence[int | str]) -> str:
    path = "$"
    for part in location:
        if isinstance(part, int):
            path += f"[{part}]"
        elif not str(part).startswith(("function-", "union[", "tagged-union[")):
            path += f".{part}"
    return path


def schema_error(
    error: Any, where: str, what: str = "the Sigstore bundle format"
) -> tuple[str, str]:
    """(where: JSON path, "expected ...") for a pydantic refusal of a Sigstore document,
    in assay's words: the first field it names, never pydantic's message."""
    problem = _shallowest_problem(error)
    path = _json_path(problem.get("loc", ()))
    expected = _expected(problem, what)
    if problem.get("type") == "missing":
        return f"{where}: {path}", f"expected {expected}"
    return f"{where}: {path}", f"expected {expected}, found {_shown(problem.get('input'))}"


def _shallowest_problem(error: Any) -> dict[str, Any]:
    """The refusal at the shortest path (the first field it names)."""
    problems: list[dict[str, Any]] = sorted(error.errors(), key=lambda e: len(e.get("loc", ())))
    return problems[0] if problems else {"loc": (), "type": ""}


def _expected(problem: dict[str, Any], what: str) -> str:
    """What the format expected where the problem is, in assay's words."""
    reason = (problem.get("ctx") or {}).get("error")
    if problem.get("type") == "value_error" and isinstance(reason, ValueError):
        # the models' rule, by field names ("Exactly one of publicKey, ... must be set")
        text = str(reason)
        known = (phrase for start, phrase in _VALUE_ERRORS if text.startswith(start))
        return next(known, f"a valid value ({text[:160]})")
    return _EXPECTED.get(str(problem.get("type")), f"a value of {what}")


def _shown(found: object) -> str:
    """A found value as an error shows it: containers by their type, others by repr."""
    return type(found).__name__ if isinstance(found, (dict, list)) else repr(found)[:80]
