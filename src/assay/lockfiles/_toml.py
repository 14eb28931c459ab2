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


_QUOTES = ('"""', "'''", '"', "'")
_INTERESTING = re.compile(r"[\n#\"'\[\]{}=,.]")


def _too_deep_at(text: str, limit: int) -> int | None:
    """The line where brackets (`[`, `{`) nest deeper than `limit`, or a key has more
    than `limit` dotted parts, outside strings and comments; None when neither happens."""
    closers: list[str] = []
    in_key = True  # at the start of a line, after `{` or `,` in an inline table
    parts = 0
    line = 1
    index, size = 0, len(text)
    while True:
        found = _INTERESTING.search(text, index)
        if found is None:
            return None
        index = found.start()
        char = text[index]
        if char == "\n":
            line += 1
            if not closers:
                in_key, parts = True, 0
        elif char == "#":
            end = text.find("\n", index)
            index = size if end < 0 else end
            continue
        elif char in "\"'":
            quote = next(q for q in _QUOTES if text.startswith(q, index))
            end = _string_end(text, index + len(quote), quote)
            line += text.count("\n", index, end)
            index = end
            continue
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
        elif char == "," and closers and closers[-1] == "}":
            in_key, parts = True, 0
        elif char == "." and in_key:
            parts += 1
            if parts >= limit:
                return line
        index += 1


def _string_end(text: str, start: int, quote: str) -> int:
    """The index just past the string that opened with `quote` before `start`."""
    index = start
    escapes = not quote.startswith("'")
    while True:
        end = text.find(quote, index)
        if end < 0:
            return len(text)  # unterminated: tomllib names it
        if escapes and _run(text, end) % 2:
            index = end + 1
            continue
        if len(quote) == 3:
            while text.startswith(quote[0], end + 3):
                end += 1  # up to two quotes may end a multi-line string's content
        return end + len(quote)


def _run(text: str, end: int) -> int:
    """How many backslashes come just before `end`."""
    count = 0
    while end - count - 1 >= 0 and text[end - count - 1] == "\\":
        count += 1
    return count


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
