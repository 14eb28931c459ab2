"""Run the benchmarks: every `bench/bench_*.py` module's `run(args)`, or only those named.

    python -m bench                 all of them
    python -m bench attest dsse     bench_attest.py and bench_dsse.py only

Each benchmark compares assay with the named peers in the same run and prints ratios.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
import time
from pathlib import Path


def available() -> list[str]:
    here = Path(__file__).parent
    return sorted(
        info.name.removeprefix("bench_")
        for info in pkgutil.iter_modules([str(here)])
        if info.name.startswith("bench_")
    )


def main(argv: list[str]) -> int:
    names = argv or available()
    unknown = sorted(set(names) - set(available()))
    if unknown:
        print(f"unknown benchmark(s): {', '.join(unknown)}; available: {', '.join(available())}")
        return 2
    for name in names:
        module = importlib.import_module(f"bench.bench_{name}")
        print(f"== {name} ==", flush=True)
        started = time.perf_counter()
        module.run([])
        print(f"== {name}: {time.perf_counter() - started:.1f} s ==\n", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
