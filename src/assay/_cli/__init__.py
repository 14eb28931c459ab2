"""The `assay` command line: a thin shell over the library.

Each command group lives in its own module with a `register(tree)` function; this
module only builds the parser, dispatches, and turns `AssayError` into a clear message
and an exit code. Exit codes: 0 success, 1 a check failed, 2 unusable input or usage.

Start-up is part of the interface: building the parser (`assay --help`) imports every
module in COMMAND_MODULES, so those modules import only argparse, this package and
modules without dependencies at their top level; what a command needs to run (the
store, the NVD client, cryptography, rich, ...) is imported inside its handler.
tests/cli/test_startup.py holds that line.

Conventions every command follows:
- an option that takes several values takes them after one flag and when the flag is
  repeated (`--key A B` and `--key A --key B`): `add_list_option`;
- `--json` prints one JSON document on stdout, shaped as docs/cli.md describes; human
  output goes to stdout for results and stderr for progress and diagnostics;
- every option has a help text.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from assay import __version__
from assay.errors import AssayError

# Modules that contribute commands; each defines `register(tree: CommandTree) -> None`.
COMMAND_MODULES: tuple[str, ...] = (
    "assay._cli.serve",
    "assay._cli.nvd",
    "assay._cli.nvd_sync",
    "assay._cli.sources",
    "assay._cli.osv",
    "assay._cli.keys",
    "assay._cli.attest_signing",
    "assay._cli.verify",
    "assay._cli.attest",
    "assay._cli.attest_provenance",
    "assay._cli.completion",
    "assay._cli.api_keys",
    "assay._cli.policies",
    "assay._cli.scan",
    "assay._cli.verify_artifact",
    "assay._cli.verify_registry",
    "assay._cli.verify_packages",
    "assay._cli.trust",
    "assay._cli.store",
    "assay._cli.vex",
)

Handler = Callable[[argparse.Namespace], int]

# Each group's help in `assay --help`, declared once: several modules add commands to
# one group (`CommandTree.add`).
GROUP_HELP: dict[str, str] = {
    "nvd": "NVD data: import files into a store, or mirror an upstream.",
    "cve": "CVE JSON 5 records (cvelistV5, CISA Vulnrichment).",
    "osv": "OSV records: import files into a store, or mirror osv.dev.",
    "keys": "Create and inspect signing keys.",
    "attest": "Work with attestations.",
    "api-keys": "Create, list and revoke the server's API keys.",
    "policies": "List and show the verification policies shipped with assay.",
    "trust": "Sigstore trusted roots: list them, refresh them.",
    "store": "Export and import signed snapshots of a store.",
    "vex": "Create, merge and apply VEX documents (as vexctl).",
}

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_UNUSABLE = 2


class _UsageError(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class CommandParser(argparse.ArgumentParser):
    """An ArgumentParser whose list options (`add_list_option`) may precede positionals.

    `--key a.pub b.pub ENVELOPE` is ambiguous to argparse, which gives ENVELOPE to --key
    and then misses it. When a parse fails, the last values of a list option are tried
    as the positionals that follow it (as if `--` stood before them); the parse that
    first succeeds wins, and if none does the original error is reported.
    """

    _retrying = False

    def error(self, message: str) -> NoReturn:
        if self._retrying:
            raise _UsageError(message)
        super().error(message)

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        argv = list(sys.argv[1:] if args is None else args)
        flags = self._list_flags()
        if not flags or self._retrying:
            return super().parse_known_args(argv, namespace)
        self._retrying = True
        try:
            parsed, failure = self._parse_retrying(argv, namespace, flags)
        finally:
            self._retrying = False
        return parsed if parsed is not None else self.error(failure)

    def _list_flags(self) -> set[str]:
        return {
            flag
            for action in self._actions
            if getattr(action, "list_option", False)
            for flag in action.option_strings
        }

    def _parse_retrying(
        self, argv: list[str], namespace: argparse.Namespace | None, flags: set[str]
    ) -> tuple[tuple[argparse.Namespace, list[str]] | None, str]:
        """The parse of `argv`, else of the first candidate that parses; else None and
        the first parse's error (reported once retrying is over)."""
        try:
            return super().parse_known_args(argv, _copy(namespace)), ""
        except _UsageError as first:
            failure = first.message
        for candidate in _list_values_as_positionals(argv, flags):
            try:
                return super().parse_known_args(candidate, _copy(namespace)), ""
            except _UsageError:
                continue
        return None, failure


def _copy(namespace: argparse.Namespace | None) -> argparse.Namespace | None:
    return None if namespace is None else argparse.Namespace(**vars(namespace))


def _list_values_as_positionals(argv: list[str], flags: set[str]) -> list[list[str]]:
    """`[..., --key, a, b, c, rest...]` → the same with c, then b c, moved after `--`."""
    if "--" in argv:
        return []
    starts = [i for i, token in enumerate(argv) if token in flags]
    if not starts:
        return []
    start = starts[-1] + 1
    end = start
    while end < len(argv) and not argv[end].startswith("-"):
        end += 1
    values, rest = argv[start:end], argv[end:]
    return [
        [*argv[:start], *values[:-moved], *rest, "--", *values[-moved:]]
        for moved in range(1, len(values))
    ]


class CommandTree:
    """Lets several modules add sub-commands to the same group (`assay attest ...`)."""

    def __init__(self, parser: argparse.ArgumentParser) -> None:
        self.root = parser
        self._top = parser.add_subparsers(dest="command", metavar="COMMAND")
        self._groups: dict[str, argparse._SubParsersAction[argparse.ArgumentParser]] = {}

    def command(self, name: str, *, help: str, handler: Handler) -> argparse.ArgumentParser:
        """A top-level command (`assay serve`)."""
        parser = self._top.add_parser(name, help=help, description=help)
        parser.set_defaults(handler=handler)
        return parser

    def add(
        self, path: str, *, help: str, handler: Handler, **options: Any
    ) -> argparse.ArgumentParser:
        """A command of a group, named as it is typed (`tree.add("api-keys create", ...)`);
        the group, made on first use, has its help from GROUP_HELP. `add_command` says
        what `options` may be."""
        group_name, name = path.split(" ")
        group = self.group(group_name, help=GROUP_HELP[group_name])
        return add_command(group, name, help=help, handler=handler, **options)

    def group(self, name: str, *, help: str) -> argparse._SubParsersAction[argparse.ArgumentParser]:
        """The sub-command table of a group (`assay nvd ...`), created on first use."""
        if name not in self._groups:
            parser = self._top.add_parser(name, help=help, description=help)
            parser.set_defaults(handler=_group_usage(parser))
            self._groups[name] = parser.add_subparsers(dest=f"{name}_command", metavar="COMMAND")
        return self._groups[name]


def add_list_option(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup, *flags: str, **options: Any
) -> argparse.Action:
    """An option taking one or more values, after one flag or with the flag repeated:
    `--key A B`, `--key A --key B` and `--key A B --key C` all give [A, B, C]; the
    values may be followed by the command's positionals (`CommandParser`)."""
    action = parser.add_argument(*flags, action="extend", nargs="+", **options)
    action.list_option = True  # type: ignore[attr-defined]
    return action


def add_command(
    group: argparse._SubParsersAction[argparse.ArgumentParser],
    name: str,
    *,
    help: str,
    handler: Handler,
    description: str | None = None,
    **options: Any,
) -> argparse.ArgumentParser:
    """A command of a group (`assay attest sign`): its help, also its description unless
    one is given, and its handler."""
    parser = group.add_parser(name, help=help, description=description or help, **options)
    parser.set_defaults(handler=handler)
    return parser


def add_json_option(parser: argparse.ArgumentParser, help: str) -> None:
    """`--json`: one JSON document on stdout, shaped as docs/cli.md describes."""
    parser.add_argument("--json", action="store_true", help=help)


def _group_usage(parser: argparse.ArgumentParser) -> Handler:
    def show(_: argparse.Namespace) -> int:
        parser.print_help(sys.stderr)
        return EXIT_UNUSABLE

    return show


def build_parser() -> argparse.ArgumentParser:
    parser = CommandParser(
        prog="assay",
        description="Supply-chain evidence: SLSA attestations and an NVD API 2.0 mirror.",
    )
    parser.add_argument("--version", action="version", version=f"assay {__version__}")
    parser.set_defaults(handler=_group_usage(parser))
    tree = CommandTree(parser)
    for module_name in COMMAND_MODULES:
        importlib.import_module(module_name).register(tree)
    return parser


def fatal(message: str, code: int = EXIT_UNUSABLE) -> NoReturn:
    """Print an error for a person and exit."""
    print(f"assay: error: {message}", file=sys.stderr)
    raise SystemExit(code)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    import logging  # after parsing: `--help` and usage errors do not need it

    logging.basicConfig(
        level=os.environ.get("ASSAY_LOG_LEVEL", "WARNING").upper(),
        format="%(levelname)s %(name)s: %(message)s",
    )
    handler: Handler = args.handler
    try:
        return handler(args)
    except AssayError as error:
        fatal(error.diagnostics())
    except KeyboardInterrupt:
        fatal("interrupted", 130)
    except SystemExit as stop:
        # A library that exits on its own (uvicorn exits 3 when it cannot bind) still
        # ends with one of the documented codes: it could not do what it was asked.
        if isinstance(stop.code, int) and stop.code not in (EXIT_OK, EXIT_FAILED, 130):
            raise SystemExit(EXIT_UNUSABLE) from None
        raise
