"""Reading a file or standard input with a size limit (pure I/O, no parsing)."""

from __future__ import annotations

import sys
from pathlib import Path

from assay.errors import InputError


def read_bounded(path: str | Path, limit: int, error: type[InputError] = InputError) -> bytes:
    """At most `limit` bytes of `path` (`-` is standard input), else `error` naming it.
    The limit is on what is read, not on what the file system says, so pipes and
    /dev/stdin are bounded too."""
    name = str(path)
    try:
        if name == "-":
            data = sys.stdin.buffer.read(limit + 1)
        else:
            with Path(path).open("rb") as handle:
                data = handle.read(limit + 1)
    except OSError as failure:
        raise error(name, f"cannot read: {failure.strerror or failure}") from None
    if len(data) > limit:
        raise error(name, f"expected at most {limit} bytes, found more")
    return data
