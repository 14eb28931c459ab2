"""The serving process's allocator settings (`assay.nvd.server.memory`)."""

from __future__ import annotations

import platform
import subprocess
import sys
from pathlib import Path

import pytest

from assay._cli import main
from assay.errors import InputError
from assay.nvd.server.memory import DEFAULT_RESERVE_MIB, RESERVE_ENV, reserve_from_text

GLIBC = sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"

# In a process of its own: the settings are process-wide.
PROBE = """
from pathlib import Path
from assay.nvd.server.memory import keep_freed_memory, reserve_memory

def rss_mib():
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) // 1024

before = rss_mib()
assert keep_freed_memory() is True
reserve_memory(64)
print(rss_mib() - before)
"""


@pytest.mark.skipif(not GLIBC, reason="glibc's mallopt only")
def test_the_reserve_stays_mapped_after_it_is_freed() -> None:
    grown = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True
    ).stdout
    assert int(grown) >= 56  # (64 MiB touched and freed, still resident)


def test_reserve_sizes_are_whole_mebibytes() -> None:
    assert reserve_from_text(None, RESERVE_ENV) == DEFAULT_RESERVE_MIB
    assert reserve_from_text("0", RESERVE_ENV) == 0
    assert reserve_from_text(" 512 ", RESERVE_ENV) == 512
    for bad in ("-1", "1.5", "lots", "", "99999999", "\u0661\u0662"):
        with pytest.raises(InputError, match=RESERVE_ENV) as caught:
            reserve_from_text(bad, RESERVE_ENV)
        assert "whole number of MiB" in str(caught.value)


def test_serve_refuses_a_bad_reserve_naming_the_option(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = f"sqlite:///{tmp_path / 'store.db'}"
    try:
        code = main(["serve", "--store", store, "--reserve-memory", "lots"])
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    assert code == 2
    err = capsys.readouterr().err
    assert "--reserve-memory" in err
    assert "Traceback" not in err
