"""A nesting-depth limit for JSON read as a stream or as a whole.

Streaming parsers keep a path for every open level (memory grows with the square of
the depth: 100,000 levels of `[` in 200 kB took 14 GB), and recursive code over a
parsed value overflows Python's stack. NVD records are about ten levels deep, so any
JSON assay reads from a file or an upstream is refused past `MAX_DEPTH` levels, before
a parser sees it.

The check works on the raw bytes with C-speed primitives: escapes are dropped
(`\\\\`, then `\\"`), everything but quotes and brackets is deleted, strings are
removed (two quotes side by side first: dropping them leaves everything else inside
or outside a string as it was), and the depth is the running sum of the brackets left.
What is still open at the end of a piece (a string, an escape, the outer levels) is
carried into the next, so a document may be fed in pieces of any size. Brackets of the
wrong kind are left to the parser, which rejects them.
"""

from __future__ import annotations

import operator
import re
from array import array
from itertools import accumulate
from typing import IO

from assay.errors import InputError

MAX_DEPTH = 64

_DROP = bytes(byte for byte in range(256) if byte not in b'"[]{}')
_STRING = re.compile(rb'"[^"]*"')
_STEPS = bytes.maketrans(b"[]{}", b"\x01\xff\x01\xff")  # +1 and -1 as signed bytes


class TooDeep(InputError):
    """JSON nested deeper than the limit."""


class DepthGauge:
    """Feed a JSON text piece by piece; `feed` raises `TooDeep` past `limit` levels."""

    def __init__(self, where: str, limit: int = MAX_DEPTH) -> None:
        self.where = where
        self.limit = limit
        self.depth = 0  # levels open after what was fed
        self._in_string = False
        self._backslash = b""  # an escape cut in two by the end of a piece

    def feed(self, data: bytes) -> None:
        if self._backslash or b"\\" in data:
            data = self._unescaped(data)
        marks = self._brackets(data.translate(None, _DROP).replace(b'""', b""))
        if not marks:
            return
        steps = array("b", marks.translate(_STEPS))
        if max(accumulate(steps, operator.add, initial=self.depth)) > self.limit:
            raise TooDeep(self.where, f"JSON is nested deeper than {self.limit} levels")
        opened = marks.count(b"[") + marks.count(b"{")
        self.depth = max(0, self.depth + 2 * opened - len(marks))

    def _unescaped(self, data: bytes) -> bytes:
        """The piece without its escaped backslashes and quotes (neither closes a
        string); an escape the piece ends in waits for the next one."""
        data = self._backslash + data
        self._backslash = b""
        if (len(data) - len(data.rstrip(b"\\"))) % 2:
            self._backslash, data = b"\\", data[:-1]
        if b"\\\\" in data:
            data = data.replace(b"\\\\", b"")
        if b'\\"' in data:
            data = data.replace(b'\\"', b"")
        return data

    def _brackets(self, marks: bytes) -> bytes:
        """The brackets of `marks` (the piece's quotes and brackets) outside strings,
        noting a string the piece leaves open."""
        if self._in_string:
            end = marks.find(b'"')
            if end < 0:
                return b""
            marks = marks[end + 1 :]
            self._in_string = False
        if b'"' in marks:
            marks = _STRING.sub(b"", marks)
            quote = marks.find(b'"')
            if quote >= 0:  # a string still open at the end of the piece
                marks, self._in_string = marks[:quote], True
        return marks


def check_depth(data: bytes, where: str, limit: int = MAX_DEPTH) -> None:
    """Raise `TooDeep` when the JSON text `data` nests deeper than `limit` levels."""
    DepthGauge(where, limit).feed(data)


class DepthLimitedReader:
    """A binary stream that checks the depth of the JSON read through it."""

    def __init__(self, stream: IO[bytes], where: str, limit: int = MAX_DEPTH) -> None:
        self._stream = stream
        self._gauge = DepthGauge(where, limit)

    def read(self, size: int = -1) -> bytes:
        data = self._stream.read(size)
        self._gauge.feed(data)
        return data
