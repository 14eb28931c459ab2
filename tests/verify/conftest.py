from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path

import pytest

import assay._cli

ASSETS = Path(__file__).resolve().parent.parent / "assets" / "verify"


@pytest.fixture
def asset() -> Callable[[str], Path]:
    def find(name: str) -> Path:
        path = ASSETS / name
        assert path.exists(), path
        return path

    return find


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch) -> Callable[..., int]:
    """`assay._cli.main`, limited to command modules that exist in this checkout."""
    present = tuple(m for m in assay._cli.COMMAND_MODULES if importlib.util.find_spec(m))
    monkeypatch.setattr(assay._cli, "COMMAND_MODULES", present)

    def run(*argv: str) -> int:
        try:
            return assay._cli.main(list(argv))
        except SystemExit as exit_:
            return int(exit_.code or 0)

    return run
