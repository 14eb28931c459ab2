"""Every option and positional has a help text, and every command a description."""

from __future__ import annotations

from assay._cli import build_parser
from assay._cli._tree import read

# The verification commands' texts come with their own rework (their --json documents).
ELSEWHERE = {
    "assay verify",
    "assay verify-vsa",
    "assay attest sign",
    "assay attest verify-signature",
}


def test_every_option_and_argument_is_explained() -> None:
    missing = []
    for command in read(build_parser()).walk():
        if command.name in ELSEWHERE:
            continue
        if command.path and not command.description:
            missing.append(f"{command.name}: description")
        missing += [f"{command.name} {o.flags[-1]}" for o in command.options if not o.help]
        if not command.subcommands:
            missing += [f"{command.name} {p.name}" for p in command.positionals if not p.help]
    assert missing == []
