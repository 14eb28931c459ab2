"""The hash-checked locks pin every requirement pyproject.toml declares, within its range.

`make install` and `.ci/run` install only what requirements/dev.lock pins (with
`--require-hashes --no-deps`), so a dependency added to pyproject.toml without `make lock`
would be missing on a fresh machine: this test fails first.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).parent.parent
PIN = re.compile(r"^([A-Za-z0-9._-]+)==([^\s;\\]+)")


def _pins(lock: str) -> dict[str, str]:
    text = (ROOT / "requirements" / lock).read_text(encoding="utf-8")
    return {
        canonicalize_name(m.group(1)): m.group(2) for m in map(PIN.match, text.splitlines()) if m
    }


def _declared(*extras: str) -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    found = [Requirement(text) for text in project["dependencies"]]
    for extra in extras:
        found += [Requirement(text) for text in project["optional-dependencies"][extra]]
    return [r for r in found if canonicalize_name(r.name) != "assay"]


@pytest.mark.parametrize(
    ("lock", "extras"),
    [("dev.lock", ("dev", "postgres", "redis")), ("runtime.lock", ("postgres", "redis"))],
)
def test_every_declared_requirement_is_pinned_within_its_range(
    lock: str, extras: tuple[str, ...]
) -> None:
    pins = _pins(lock)
    problems = []
    for requirement in _declared(*extras):
        pinned = pins.get(canonicalize_name(requirement.name))
        if pinned is None:
            problems.append(f"{requirement}: not in requirements/{lock} (run `make lock`)")
        elif not requirement.specifier.contains(pinned, prereleases=True):
            problems.append(f"{requirement}: requirements/{lock} pins {pinned}")
    assert problems == []


@pytest.mark.parametrize("lock", ["dev.lock", "runtime.lock"])
def test_every_pin_carries_a_hash(lock: str) -> None:
    text = (ROOT / "requirements" / lock).read_text(encoding="utf-8")
    blocks = re.split(r"\n(?=[A-Za-z0-9])", text.strip())
    unhashed = [block.split()[0] for block in blocks if "--hash=sha256:" not in block]
    assert unhashed == []
    assert len(blocks) == len(_pins(lock))


def test_the_wheel_keeps_ranges_not_pins() -> None:
    assert all(not str(r.specifier).startswith("==") for r in _declared("postgres", "redis"))
