"""The `assay` command line: a thin shell over the library.

Each command group lives in its own module with a `register(tree)` function; this
module only builds the parser, dispatches, and turns `AssayError` into a clear message
and an exit code. Exit codes: 0 success, 1 a check failed, 2 unusable input or usage.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn

from assay import __version__
from assay.errors import AssayError

# Modules that contribute commands; each defines `register(tree: CommandTree) -> None`.
COMMAND_MODULES: tuple[str, ...] = (
    "assay._cli.serve",
    "assay._cli.nvd",
    "assay._cli.nvd_sync",
    "assay._cli.keys",
    "assay._cli.attest_signing",
    "assay._cli.verify",
    "assay._cli.attest",
    "assay._cli.attest_provenance",
)

Handler = Callable[[argparse.Namespace], int]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_UNUSABLE = 2


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

    def group(self, name: str, *, help: str) -> argparse._SubParsersAction[argparse.ArgumentParser]:
        """The sub-command table of a group (`assay nvd ...`), created on first use."""
        if name not in self._groups:
            parser = self._top.add_parser(name, help=help, description=help)
            parser.set_defaults(handler=_group_usage(parser))
            self._groups[name] = parser.add_subparsers(dest=f"{name}_command", metavar="COMMAND")
        return self._groups[name]


def _group_usage(parser: argparse.ArgumentParser) -> Handler:
    def show(_: argparse.Namespace) -> int:
        parser.print_help(sys.stderr)
        return EXIT_UNUSABLE

    return show


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
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
    logging.basicConfig(
        level=os.environ.get("ASSAY_LOG_LEVEL", "WARNING").upper(),
        format="%(levelname)s %(name)s: %(message)s",
    )
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Handler = args.handler
    try:
        return handler(args)
    except AssayError as error:
        fatal(error.diagnostics())
    except KeyboardInterrupt:
        fatal("interrupted", 130)
