"""TOML lock files (poetry.lock, uv.lock): parsing and the positions errors name."""

from __future__ import annotations

import re
import tomllib
from typing import Any

from assay._json_strict import first_problem
from assay.lockfiles._model import MAX_JSON_DEPTH, LockfileError

_PACKAGE_HEADER = re.compile(r"^[ \t]*\[\[[ \t]*package[ \t]*\]\]", re.MULTILINE)
_DEEPER = f"expected nesting at most {MAX_JSON_DEPTH} deep, found more"


def load(text: str, filename: str) -> dict[str, Any]:
    """Parse TOML (tomllib rejects duplicate keys); errors keep tomllib's line and column.

    Nesting is bounded as for JSON lock files (`MAX_JSON_DEPTH`): tomllib recurses once
    per nested array or inline table, and a key of thousands of dotted parts costs it
    quadratic time, so both are counted in the text first; the parsed tables are then
    walked for the depth they build (headers and dotted keys together).
    """
    line = _too_deep_at(text, MAX_JSON_DEPTH)
    if line is not None:
        raise LockfileError(filename, f"line {line}", _DEEPER)
    try:
        value = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise LockfileError(filename, "", f"expected TOML: {error}") from None
    except RecursionError:  # not reached past the scan; never a traceback
        raise LockfileError(filename, "", _DEEPER) from None
    problem = first_problem(value, MAX_JSON_DEPTH)
    if problem is not None and problem[1] == "depth":
        raise LockfileError(filename, problem[0], _DEEPER)
    return value


# The tokens the scan reads: whole strings (a multi-line one may end with up to two
# quotes of content), comments, and the characters that nest or split keys.
_TOKEN = re.compile(
    r'"""(?:[^"\\]|\\.|"(?!""))*"{3,5}'
    r"|'''(?:[^']|'(?!''))*'{3,5}"
    r'|"(?:[^"\\\n]|\\.)*"'
    r"|'[^'\n]*'"
    r"|#[^\n]*"
    r"|[\n\[\]{}=,.]",
    re.DOTALL,
)


def _too_deep_at(text: str, limit: int) -> int | None:
    """The line where brackets (`[`, `{`) nest deeper than `limit`, or a key has more
    than `limit` dotted parts, outside strings and comments; None when neither happens.
    (An unterminated string is no token: its quote is skipped and tomllib names it.)"""
    closers: list[str] = []
    in_key = True  # at the start of a line, after `{` or `,` in an inline table
    parts = 0
    line = 1
    for match in _TOKEN.finditer(text):
        token = match.group()
        char = token[0]
        if char in "\"'":
            line += token.count("\n")
        elif char == "\n":
            line += 1
            if not closers:
                in_key, parts = True, 0
        elif char in "[{":
            header = in_key and not closers  # `[table]` or `[[array]]` at a line's start
            closers.append("]" if char == "[" else "}")
            if len(closers) > limit:
                return line
            in_key, parts = char == "{" or header, 0
        elif char in "]}":
            if closers:
                closers.pop()
        elif char == "=":
            in_key = False
        elif char == ",":
            if closers[-1:] == ["}"]:
                in_key, parts = True, 0
        elif char == "." and in_key:
            parts += 1
            if parts >= limit:
                return line
    return None


class Positions:
    """Names a `[[package]]` entry by its line, found once from the text."""

    def __init__(self, text: str) -> None:
        self._lines = [text.count("\n", 0, m.start()) + 1 for m in _PACKAGE_HEADER.finditer(text)]

    def of(self, index: int, key: str = "") -> str:
        path = f"package[{index}]" + (f".{key}" if key else "")
        if index < len(self._lines):
            return f"line {self._lines[index]} ({path})"
        return path


def packages(data: dict[str, Any], filename: str) -> list[dict[str, Any]]:
    """The `[[package]]` tables (none is an empty lock, which is valid)."""
    value = data.get("package", [])
    if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
        raise LockfileError(filename, "package", "expected an array of [[package]] tables")
    return value


def text_field(entry: dict[str, Any], key: str, filename: str, position: str) -> str:
    value = entry.get(key)
    if not isinstance(value, str) or not value:
        found = "nothing" if value is None else repr(value)
        raise LockfileError(
            filename, position, f"expected {key} as a non-empty string, found {found}"
        )
    return value
