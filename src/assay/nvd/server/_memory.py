"""Let a serving process reuse the memory of its large answers.

By default glibc serves allocations of 128 KiB and more with `mmap` and hands freed
memory at the top of the heap back to the kernel past a small threshold, so every large
page answered touches fresh memory, and each fresh 4 KiB page costs a page fault. On the
2-core VM of the benchmarks that is ~1.8 us a page: decoding a 40 MB page of records
took 26 ms with fresh memory and 9 ms with reused memory. A long-running server keeps
what it freed for the next answer instead (bounded by `trim_threshold`).
"""

from __future__ import annotations

import ctypes
import sys

# mallopt(3) parameters (glibc's malloc.h).
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
# Larger allocations than this (far above any record or answer piece) still get their
# own mapping, returned to the kernel when freed.
MMAP_THRESHOLD = 32 * 2**20


def keep_freed_memory(
    *, mmap_threshold: int = MMAP_THRESHOLD, trim_threshold: int = 512 * 2**20
) -> bool:
    """Tune glibc's allocator for this process; False where that is not possible
    (another C library or platform), which changes nothing but speed."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    # mallopt answers 1 when it took the setting (musl's stub answers 0).
    return bool(mallopt(M_MMAP_THRESHOLD, mmap_threshold)) and bool(
        mallopt(M_TRIM_THRESHOLD, trim_threshold)
    )
