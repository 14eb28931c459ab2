"""Version ordering for CPE version ranges, and an order-preserving byte key for stores.

Pure. NVD does not publish its comparator (spec `nvd-api-behaviour.md` §6.5); this one
follows the spec's recommendation and settles what it leaves open:

1. Backslash escapes are removed first (`7.0\\(2\\)` reads as `7.0(2)`), so a version
   taken from a CPE formatted string and one from a JSON range bound compare alike.
2. The version is split into *pieces* on `.`, `-`, `_` and `+`. Runs of separators count
   as one and leading/trailing separators are ignored (`1..2` = `1.2`, `1.` = `1`);
   which separator was used does not matter (`1-0` = `1.0`).
3. Each piece is split into maximal *runs* of ASCII digits and of other characters:
   `2` → [2], `0a` → [0, "a"], `rc10` → ["rc", 10], `0(33)sxi` → [0, "(", 33, ")sxi"].
4. Pieces compare run by run:
   * digit runs numerically, so leading zeros do not count (`01` = `1`, `1.010` = `1.10`);
   * other runs as lower-cased strings, by code point (`RC1` = `rc1`, `a` < `b`);
   * a text run is smaller than a digit run at the same place, so a piece without a
     leading number sorts before any numeric piece: `1.0.rc1` < `1.0.0`, `1.beta` < `1.0`;
   * a piece that runs out first is smaller (`0` < `0a`, so `1.0.0` < `1.0.0a`), and
     a number inside text compares numerically (`rc2` < `rc10`).
5. Versions compare piece by piece; the one that runs out first is smaller (`1.2` <
   `1.2.1`, and also `2.6.32` < `2.6.32-rc1`: a suffix is never read as a pre-release).

This is a total preorder: distinct strings can be equal (`1.01` = `1.1` = `1_1` =
`1.1.` = `1.1\\.`), and the empty string equals any string made only of separators
(`-`, `...`). The CPE values ANY (`*`) and NA (`-`) are not versions: callers handle
them before comparing.

`version_key(v)` encodes the same order as bytes, so a database can compare versions
with plain `<`/`>=` on BLOB/bytea columns:
`sign(compare_versions(a, b)) == sign(cmp(version_key(a), version_key(b)))`. Encoding:
each piece is `0x01` followed by its runs; a text run is `0x02`, its lower-cased UTF-8
with `0x00` escaped as `0x00 0xFF`, then a `0x00` terminator; a digit run is `0x03`,
the length of the digits without leading zeros (one byte below 255, else `0xFF` and
four big-endian bytes), then those digits. A piece or version that ends is then
followed by `0x01` or nothing, both below the `0x02`/`0x03` of a longer one.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["compare_versions", "version_key"]

_ESCAPE = re.compile(r"\\(.)", re.DOTALL)
_DOTTED = re.compile(r"[0-9]+(?:\.[0-9]+)*")
_SEPARATORS = re.compile(r"[._+\-]+")
_RUN = re.compile(r"[0-9]+|[^0-9]+")

# One run: (0, text) sorts before (1, (length, digits)) — a text run before a digit run.
# Digits are kept as text without leading zeros: int() is slower and caps at 4300 digits.
_Run = tuple[int, str | tuple[int, str]]
_Tokens = tuple[tuple[_Run, ...], ...]

_PIECE = b"\x01"
_TEXT = b"\x02"
_NUMBER = b"\x03"


def _run(run: str) -> _Run:
    if run[0] in "0123456789":
        digits = run.lstrip("0")
        return (1, (len(digits), digits))
    return (0, run)


@lru_cache(maxsize=65536)
def _tokens(version: str) -> _Tokens:
    if "\\" in version:
        version = _ESCAPE.sub(r"\1", version)
    pieces: list[tuple[_Run, ...]] = []
    for piece in _SEPARATORS.split(version.lower()):
        if piece:
            pieces.append(tuple(_run(run) for run in _RUN.findall(piece)))
    return tuple(pieces)


def compare_versions(a: str, b: str) -> int:
    """-1, 0 or 1 as `a` sorts before, with, or after `b` (see module docstring)."""
    ta, tb = _tokens(a), _tokens(b)
    return (ta > tb) - (ta < tb)


def _number(digits: str) -> bytes:
    digits = digits.lstrip("0")
    size = len(digits)
    length = bytes((size,)) if size < 0xFF else b"\xff" + size.to_bytes(4, "big")
    return _NUMBER + length + digits.encode("ascii")


def _text(text: str) -> bytes:
    raw = text.encode("utf-8", "surrogatepass")
    return _TEXT + raw.replace(b"\x00", b"\x00\xff") + b"\x00"


def version_key(version: str) -> bytes:
    """Order-preserving byte encoding of `version` (see module docstring)."""
    return _version_key(version)


@lru_cache(maxsize=65536)
def _version_key(version: str) -> bytes:
    if _DOTTED.fullmatch(version):
        # The common case, `8.83.27`: only digit pieces.
        return b"".join([_PIECE + _number(piece) for piece in version.split(".")])
    if "\\" in version:
        version = _ESCAPE.sub(r"\1", version)
    parts: list[bytes] = []
    for piece in _SEPARATORS.split(version.lower()):
        if not piece:
            continue
        parts.append(_PIECE)
        for run in _RUN.findall(piece):
            parts.append(_number(run) if run[0] in "0123456789" else _text(run))
    return b"".join(parts)
