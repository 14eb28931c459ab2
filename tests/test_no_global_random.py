"""The suite's strategies and tests never draw from the global `random` module.

Hypothesis warns when the global `random` state moves during a draw; the warning is
filtered in pyproject.toml because threads of psycopg_pool and uvicorn move it for jitter.
This test keeps that filter honest: a test that wants randomness uses `st.randoms()` or its
own `random.Random(seed)`.
"""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).parent
ALLOWED = {"Random"}  # an instance with its own state is fine


def _global_random_uses(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    uses: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "random":
            uses += [
                f"{path.name}:{node.lineno}: from random import {alias.name}"
                for alias in node.names
                if alias.name not in ALLOWED
            ]
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "random"
            and node.attr not in ALLOWED
        ):
            uses.append(f"{path.name}:{node.lineno}: random.{node.attr}")
    return uses


def test_no_test_draws_from_the_global_random_module() -> None:
    uses = [use for path in sorted(TESTS.rglob("*.py")) for use in _global_random_uses(path)]
    assert uses == []


def test_the_check_sees_a_global_draw(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text("import random\nx = random.choice([1])\nr = random.Random(1)\n")
    assert _global_random_uses(sample) == ["sample.py:2: random.choice"]
