"""The peak resident set of a benchmarked command and the processes it starts.

`ru_maxrss` from `wait4` is no use here: a child started by a large benchmark process
inherits the parent's high-water mark at `exec` (Linux records the old address space's
peak, which a vfork-style spawn shares with the parent), so an import started right after
the benchmark generated its corpus reported the generator's 1 GB. Each process's own
`VmHWM` (peak since its `exec`) is read from /proc instead, while it runs.
"""

from __future__ import annotations

import subprocess
import threading
from pathlib import Path

POLL_SECONDS = 0.2


class PeakRss:
    """Polls `process` and its descendants; `peak_mib` is the largest one seen."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self._root = process.pid
        self._peaks: dict[int, int] = {}
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._poll, name="peak-rss", daemon=True)
        self._thread.start()

    @property
    def peak_mib(self) -> int:
        self._done.set()
        self._thread.join()
        return round(max(self._peaks.values(), default=0) / 1024)

    def _poll(self) -> None:
        while not self._done.is_set():
            for pid in [self._root, *_descendants(self._root)]:
                peak = _vm_hwm_kib(pid)
                if peak is not None:
                    self._peaks[pid] = max(peak, self._peaks.get(pid, 0))
            self._done.wait(POLL_SECONDS)


def _vm_hwm_kib(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        return None
    return None


def _descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found: list[int] = []
    pending = [root]
    while pending:
        for child in children.get(pending.pop(), []):
            found.append(child)
            pending.append(child)
    return found
