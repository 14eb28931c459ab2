"""The serving process's allocator setting (`assay.nvd.server._memory`)."""

from __future__ import annotations

import platform
import sys

import pytest

from assay.nvd.server._memory import keep_freed_memory


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc",
    reason="glibc's mallopt only",
)
def test_glibc_takes_the_settings() -> None:
    assert keep_freed_memory() is True
