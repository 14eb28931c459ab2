"""Reading a file or standard input, or copying a download, with a size limit (pure I/O,
no parsing)."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path
from typing import IO

from assay.errors import InputError


def copy_bounded(chunks: Iterable[bytes], out: IO[bytes], limit: int) -> bool:
    """Write the chunks to `out` while they stay within `limit` bytes in all: False, with
    the chunk that passes it left unwritten, as soon as they do not."""
    written = 0
    for chunk in chunks:
        written += len(chunk)
        if written > limit:
            return False
        out.write(chunk)
    return True


def _read_at_most(path: str | Path, limit: int) -> bytes:
    if str(path) == "-":
        return sys.stdin.buffer.read(limit + 1)
    with Path(path).open("rb") as handle:
        return handle.read(limit + 1)


def _within(data: bytes, limit: int, name: str, error: type[InputError]) -> bytes:
    if len(data) > limit:
        raise error(name, f"expected at most {limit} bytes, found more")
    return data


def read_bounded(path: str | Path, limit: int, error: type[InputError] = InputError) -> bytes:
    """At most `limit` bytes of `path` (`-` is standard input), else `error` naming it.
    The limit is on what is read, not on what the file system says, so pipes and
    /dev/stdin are bounded too."""
    try:
        data = _read_at_most(path, limit)
    except OSError as failure:
        raise error(str(path), f"cannot read: {failure.strerror or failure}") from None
    return _within(data, limit, str(path), error)


def read_if_present(
    path: str | Path, limit: int, error: type[InputError] = InputError
) -> bytes | None:
    """`read_bounded`, but None when the file does not exist."""
    try:
        data = _read_at_most(path, limit)
    except FileNotFoundError:
        return None
    except OSError as failure:
        raise error(str(path), f"cannot read: {failure.strerror or failure}") from None
    return _within(data, limit, str(path), error)
