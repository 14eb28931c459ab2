"""Strict JSON for lock files: bounded depth, duplicate keys rejected with their JSON path."""

from __future__ import annotations

import json
from typing import Any

from assay._json_strict import first_problem, member, parse, problem_reason, type_name
from assay.lockfiles._model import MAX_JSON_DEPTH, LockfileError

__all__ = ["load_object", "member", "type_name"]


def load_object(text: str, filename: str) -> dict[str, Any]:
    """Parse a JSON object; errors name the file and the line or JSON path."""
    try:
        value = parse(text)
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
    problem = first_problem(value, MAX_JSON_DEPTH)
    if problem is not None:
        path, kind = problem
        raise LockfileError(filename, path, problem_reason(kind, MAX_JSON_DEPTH))
    return value
