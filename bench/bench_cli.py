"""Command-line start-up: `assay --help` and `assay attest validate FILE` as processes.

Each contender is a fresh process, as a user or a script starts it; wall time from
spawn to exit, alternating the contenders run by run so each sees the same load, and
the median and the minimum over the runs are reported:

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


def _once(command: list[str]) -> float:
    started = time.perf_counter()
    completed = subprocess.run(
        command, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=_ENV
    )
    elapsed = time.perf_counter() - started
    if completed.returncode != 0:
        raise SystemExit(f"{' '.join(command)} exited {completed.returncode}: {completed.stderr!r}")
    return elapsed * 1000


def measure(runs: int) -> dict[str, list[float]]:
    commands = contenders()
    times: dict[str, list[float]] = {label: [] for label in commands}
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
    floor = statistics.median(times["python -c pass"])
    print(f"{'command':<30} {'median ms':>10} {'min ms':>8} {'x pass':>7} {'target':>8}")
    for label, values in times.items():
        median = statistics.median(values)
        target = TARGETS_MS.get(label)
        verdict = "" if target is None else ("ok" if median <= target else "OVER")
        shown = "" if target is None else f"{target:.0f} {verdict}"
        print(f"{label:<30} {median:>10.1f} {min(values):>8.1f} {median / floor:>7.2f} {shown:>8}")


if __name__ == "__main__":
    run(sys.argv[1:])
