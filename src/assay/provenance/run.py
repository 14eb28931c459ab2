"""Running a build command and timing it (the one module here that starts a process)."""

from __future__ import annotations

import datetime as dt
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from assay.errors import InputError

_STDERR_FD = 2


@dataclass(frozen=True, slots=True)
class CommandRun:
    """A finished command: its argv, exit status and UTC start and finish."""

    argv: tuple[str, ...]
    exit_code: int
    started_on: dt.datetime
    finished_on: dt.datetime

    @property
    def succeeded(self) -> bool:
        return self.exit_code == 0


def run_command(
    argv: Sequence[str], *, cwd: Path | None = None, output_to_stderr: bool = False
) -> CommandRun:
    """Run `argv` (no shell), its output going to this process's stdout and stderr.

    With `output_to_stderr` the command's stdout goes to stderr too, leaving stdout to
    whatever the caller writes there (the provenance).
    """
    if not argv:
        raise InputError("CMD", "expected a build command after --, found none")
    started = dt.datetime.now(dt.UTC)
    try:
        done = subprocess.run(  # noqa: S603 - argv as the user gave it, no shell
            list(argv), cwd=cwd, check=False, stdout=_STDERR_FD if output_to_stderr else None
        )
    except FileNotFoundError:
        raise InputError(
            "CMD", f"expected a command to run, found no program {argv[0]!r}"
        ) from None
    except PermissionError:
        raise InputError("CMD", f"cannot execute {argv[0]!r}: permission denied") from None
    finished = dt.datetime.now(dt.UTC)
    return CommandRun(tuple(argv), done.returncode, started, finished)
