"""TOML lock files (poetry.lock, uv.lock): parsing and the positions errors name."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable
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


class _Nesting:
    """Follows the tokens of a TOML text: how deep brackets nest, how many dotted parts
    the current key has, and the line."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.closers: list[str] = []
        self.in_key = True  # at the start of a line, after `{` or `,` in an inline table
        self.parts = 0
        self.line = 1
        self._handlers: dict[str, Callable[[str], bool]] = {
            '"': self._string, "'": self._string, "\n": self._newline,
            "[": self._open, "{": self._open, "]": self._close, "}": self._close,
            "=": self._equals, ",": self._comma, ".": self._dot,
        }  # fmt: skip

    def too_deep(self, token: str) -> bool:
        """Take a token; True once nesting or a key goes past the limit."""
        handler = self._handlers.get(token[0])
        return handler is not None and handler(token)

    def _string(self, token: str) -> bool:
        self.line += token.count("\n")
        return False

    def _newline(self, _: str) -> bool:
        self.line += 1
        if not self.closers:
            self.in_key, self.parts = True, 0
        return False

    def _open(self, bracket: str) -> bool:
        header = self.in_key and not self.closers  # `[table]` or `[[array]]` at a line's start
        self.closers.append("]" if bracket == "[" else "}")
        self.in_key, self.parts = bracket == "{" or header, 0
        return len(self.closers) > self.limit

    def _close(self, _: str) -> bool:
        if self.closers:
            self.closers.pop()
        return False

    def _equals(self, _: str) -> bool:
        self.in_key = False
        return False

    def _comma(self, _: str) -> bool:
        if self.closers[-1:] == ["}"]:
            self.in_key, self.parts = True, 0
        return False

    def _dot(self, _: str) -> bool:
        if not self.in_key:
            return False
        self.parts += 1
        return self.parts >= self.limit


def _too_deep_at(text: str, limit: int) -> int | None:
    """The line where brackets (`[`, `{`) nest deeper than `limit`, or a key has more
    than `limit` dotted parts, outside strings and comments; None when neither happens.
    (An unterminated string is no token: its quote is skipped and tomllib names it.)"""
    nesting = _Nesting(limit)
    for match in _TOKEN.finditer(text):
        if nesting.too_deep(match.group()):
            return nesting.line
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
