"""Command-line start-up: `assay --help` and `assay attest validate FILE` as processes.

Each contender is a fresh process, as a user or a script starts it; wall time from
spawn to exit and the process's CPU time (user + system, from wait4), alternating the
contenders run by run so each sees the same load; the median (and the minimum wall
time) over the runs are reported. On a shared machine CPU time moves much less with
the load than wall time does:

- `python -c pass`                          the floor: the interpreter alone
- `assay --help`                            target <= 150 ms
- `assay attest validate FILE`              one real provenance statement, target <= 300 ms
- `assay nvd import --help`, `assay verify --help`  (for the record)

`assay` is the script pip installs (`python -m assay` where there is none).

Ratios are over `python -c pass` in the same run. The modules each command imports are
listed with `python -X importtime -m assay ...`; tests/cli/test_startup.py holds the
line on which heavy modules `--help` may not import.

    python -m bench cli             (or: python -m bench.bench_cli --runs 40)
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# A real in-toto statement (SLSA provenance v0.2 from slsa-github-generator, 13.7 KB).
STATEMENT = ROOT / "tests/assets/slsa/slsa-github-generator/attestation1.intoto"
TARGETS_MS = {"assay --help": 150.0, "assay attest validate FILE": 300.0}


def contenders() -> dict[str, list[str]]:
    python = sys.executable
    # The `assay` script pip installed beside this interpreter, as a user runs it;
    # `python -m assay` where there is none (runpy adds ~10 ms of imports).
    script = Path(python).with_name("assay")
    assay = [str(script)] if script.exists() else [python, "-m", "assay"]
    return {
        "python -c pass": [python, "-c", "pass"],
        "assay --help": [*assay, "--help"],
        "assay attest validate FILE": [*assay, "attest", "validate", str(STATEMENT)],
        "assay nvd import --help": [*assay, "nvd", "import", "--help"],
        "assay verify --help": [*assay, "verify", "--help"],
    }


# As installed: pip compiles every module to bytecode at install time, so the children
# may write and reuse __pycache__ even where the environment says not to.
_ENV = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}


def _once(command: list[str]) -> tuple[float, float]:
    """Wall time and CPU time (user + system) of one process, in ms."""
    started = time.perf_counter()
    child = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=_ENV
    )
    _, status, usage = os.wait4(child.pid, 0)
    elapsed = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise SystemExit(f"{' '.join(command)} exited {child.returncode}")
    return elapsed * 1000, (usage.ru_utime + usage.ru_stime) * 1000


def measure(runs: int) -> dict[str, list[tuple[float, float]]]:
    commands = contenders()
    times: dict[str, list[tuple[float, float]]] = {label: [] for label in commands}
    for command in commands.values():
        _once(command)  # warm the file cache and the bytecode
    for _ in range(runs):
        for label, command in commands.items():
            times[label].append(_once(command))
    return times


def run(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="bench_cli")
    parser.add_argument("--runs", type=int, default=30, help="processes per contender")
    args = parser.parse_args(argv)
    times = measure(args.runs)
    wall = {label: [w for w, _ in values] for label, values in times.items()}
    cpu = {label: [c for _, c in values] for label, values in times.items()}
    floor = statistics.median(wall["python -c pass"])
    cpu_floor = statistics.median(cpu["python -c pass"])
    print(
        f"{'command':<30} {'wall ms':>8} {'min ms':>7} {'x pass':>7} "
        f"{'cpu ms':>7} {'x pass':>7} {'target':>8}"
    )
    for label in times:
        median = statistics.median(wall[label])
        cpu_median = statistics.median(cpu[label])
        target = TARGETS_MS.get(label)
        verdict = "" if target is None else ("ok" if median <= target else "OVER")
        shown = "" if target is None else f"{target:.0f} {verdict}"
        print(
            f"{label:<30} {median:>8.1f} {min(wall[label]):>7.1f} {median / floor:>7.2f} "
            f"{cpu_median:>7.1f} {cpu_median / cpu_floor:>7.2f} {shown:>8}"
        )


if __name__ == "__main__":
    run(sys.argv[1:])
