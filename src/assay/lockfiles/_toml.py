"""TOML lock files (poetry.lock, uv.lock): parsing and the positions errors name."""

from __future__ import annotations

import re
import tomllib
from typing import Any

from assay.lockfiles._model import LockfileError

_PACKAGE_HEADER = re.compile(r"^[ \t]*\[\[[ \t]*package[ \t]*\]\]", re.MULTILINE)


def load(text: str, filename: str) -> dict[str, Any]:
    """Parse TOML (tomllib rejects duplicate keys); errors keep tomllib's line and column."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise LockfileError(filename, "", f"expected TOML: {error}") from None


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
