"""Let a serving process reuse the memory of its large answers.

By default glibc serves allocations of 128 KiB and more with `mmap`, gives each thread an
arena of its own and hands freed memory at the top of a heap back to the kernel past a
small threshold, so large answers keep touching fresh memory, and each fresh 4 KiB page
costs a page fault. On the 2-core VM of the benchmarks that is ~1.8 us a page: decoding
a 40 MB page of records took 26 ms with fresh memory and 9 ms with reused memory. A
long-running server instead keeps what it freed for the next answer, in one arena shared
by its threads, and touches a working reserve once at start, so that its first large
answers find memory already mapped (its resident size starts that much higher).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

from assay.errors import InputError

# mallopt(3) parameters (glibc's malloc.h).
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
M_ARENA_MAX = -8
# Larger allocations than this (far above any record or answer piece) still get their
# own mapping, returned to the kernel when freed.
MMAP_THRESHOLD = 32 * 2**20
TRIM_THRESHOLD = 512 * 2**20
RESERVE_ENV = "ASSAY_SERVE_RESERVE_MIB"
# A 40 MB answer needs its decoded records, its pieces and the decoded-record cache
# (64 MiB): measured, 128 MiB left the first large answers faulting, 256 MiB did not.
DEFAULT_RESERVE_MIB = 256
MAX_RESERVE_MIB = 16 * 1024
RESERVE_BLOCK = 8 * 2**20


def keep_freed_memory(
    *, mmap_threshold: int = MMAP_THRESHOLD, trim_threshold: int = TRIM_THRESHOLD
) -> bool:
    """Tune glibc's allocator for this process; False where that is not possible
    (another C library or platform), which changes nothing but speed."""
    mallopt = _mallopt()
    if mallopt is None:
        return False
    # mallopt answers 1 when it took the setting (musl's stub answers 0).
    return all(
        mallopt(parameter, value)
        for parameter, value in (
            (M_MMAP_THRESHOLD, mmap_threshold),
            (M_TRIM_THRESHOLD, trim_threshold),
            (M_ARENA_MAX, 1),
        )
    )


def reserve_memory(mebibytes: int) -> None:
    """Touch `mebibytes` of heap and free it again: with `keep_freed_memory` in force it
    stays mapped for the answers to come."""
    blocks = [bytearray(RESERVE_BLOCK) for _ in range(mebibytes * 2**20 // RESERVE_BLOCK)]
    del blocks


def prepare_serving_process() -> None:
    """What a serving process does before it takes requests (`RESERVE_ENV` MiB)."""
    mebibytes = reserve_from_text(os.environ.get(RESERVE_ENV), RESERVE_ENV)
    # Freed memory up to twice the reserve stays mapped, at least TRIM_THRESHOLD.
    kept = max(TRIM_THRESHOLD, 2 * mebibytes * 2**20)
    if keep_freed_memory(trim_threshold=kept) and mebibytes:
        reserve_memory(mebibytes)


def reserve_from_text(text: str | None, where: str) -> int:
    """The reserve in MiB that `text` asks for (the default when None); `where` names the
    option or variable in the error."""
    if text is None:
        return DEFAULT_RESERVE_MIB
    stripped = text.strip()
    if not (stripped.isascii() and stripped.isdigit()) or int(stripped) > MAX_RESERVE_MIB:
        raise InputError(
            where,
            f"expected a whole number of MiB from 0 (none) to {MAX_RESERVE_MIB}, found {text!r}",
        )
    return int(stripped)


def _mallopt() -> Callable[[int, int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    import ctypes  # here: `assay serve --help` reads this module's defaults

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return None
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return mallopt
