"""The command tree as data, read from the argparse parser: what completion scripts and
the man page are generated from, so that they always match `--help`."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Option:
    flags: tuple[str, ...]
    help: str
    takes_value: bool
    metavar: str
    choices: tuple[str, ...] | None
    repeatable: bool


@dataclass(frozen=True, slots=True)
class Positional:
    name: str
    help: str
    many: bool
    choices: tuple[str, ...] | None


@dataclass(slots=True)
class Command:
    path: tuple[str, ...]
    """Words after `assay`: () for the root, ("nvd", "import") for a sub-command."""
    summary: str
    description: str
    usage: str
    epilog: str
    options: list[Option] = field(default_factory=list)
    positionals: list[Positional] = field(default_factory=list)
    subcommands: list[Command] = field(default_factory=list)

    @property
    def name(self) -> str:
        return " ".join(("assay", *self.path))

    def walk(self) -> list[Command]:
        """This command and every command below it, depth first."""
        found = [self]
        for child in self.subcommands:
            found.extend(child.walk())
        return found


def _help(action: argparse.Action) -> str:
    if not action.help or action.help == argparse.SUPPRESS:
        return ""
    params = {"default": action.default, "prog": "assay"}
    if action.choices is not None:
        params["choices"] = ", ".join(str(c) for c in action.choices)
    try:
        return action.help % params
    except (KeyError, TypeError, ValueError):
        return action.help


def _choices(action: argparse.Action) -> tuple[str, ...] | None:
    return None if action.choices is None else tuple(map(str, action.choices))


def _option(action: argparse.Action) -> Option:
    return Option(
        flags=tuple(action.option_strings),
        help=_help(action),
        takes_value=action.nargs != 0,
        metavar=_metavar(action),
        choices=_choices(action),
        repeatable=isinstance(action, (argparse._AppendAction, argparse._ExtendAction)),
    )


def _positional(action: argparse.Action) -> Positional:
    return Positional(
        name=_metavar(action),
        help=_help(action),
        many=action.nargs in ("*", "+", argparse.REMAINDER),
        choices=_choices(action),
    )


def _subcommands(action: argparse._SubParsersAction[Any], path: tuple[str, ...]) -> list[Command]:
    summaries = {choice.dest: choice.help or "" for choice in action._choices_actions}
    return [
        read(child, (*path, name), summaries.get(name, ""))
        for name, child in action.choices.items()
    ]


def read(parser: argparse.ArgumentParser, path: tuple[str, ...] = (), summary: str = "") -> Command:
    """The command tree below `parser`."""
    command = Command(
        path=path,
        summary=summary or (parser.description or ""),
        description=parser.description or "",
        usage=parser.format_usage().removeprefix("usage: ").strip(),
        epilog=parser.epilog or "",
    )
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            command.subcommands += _subcommands(action, path)
        elif action.option_strings:
            command.options.append(_option(action))
        else:
            command.positionals.append(_positional(action))
    return command


def _metavar(action: argparse.Action) -> str:
    if isinstance(action.metavar, str):
        return action.metavar
    if isinstance(action.metavar, tuple):
        return " ".join(action.metavar)
    return action.dest.upper() if action.option_strings else action.dest
