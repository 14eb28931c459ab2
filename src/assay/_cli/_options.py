"""Options that several commands declare, declared once, and the steps their handlers
share: opening the store `--store` names, printing the `--json` document.

Imported when the parser is built, so it imports only argparse and the standard
library's cheapest modules at the top; the store and JSON libraries load inside the steps.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, NamedTuple

from assay.config import STORE_ENV, default_store_url

if TYPE_CHECKING:
    from assay.nvd.storage import Store

Parser = argparse.ArgumentParser | argparse._ArgumentGroup


class Declared(NamedTuple):
    """One argument as data: its flags (or a positional's name) and `add_argument`'s
    settings; `many` makes it a list option (`assay._cli.add_list_option`)."""

    flags: tuple[str, ...]
    settings: dict[str, Any]
    many: bool = False

    def add_to(self, parser: Parser) -> None:
        if self.many:
            from assay._cli import add_list_option

            add_list_option(parser, *self.flags, **self.settings)
        else:
            parser.add_argument(*self.flags, **self.settings)


def option(*flags: str, **settings: Any) -> Declared:
    return Declared(flags, settings)


def list_option(*flags: str, **settings: Any) -> Declared:
    """An option taking one or more values, after one flag or with the flag repeated."""
    return Declared(flags, settings, many=True)


class Exclusive(NamedTuple):
    """Arguments of which at most one may be given (exactly one when `required`)."""

    members: tuple[Declared, ...]
    required: bool = False

    def add_to(self, parser: Parser) -> None:
        add_options(parser.add_mutually_exclusive_group(required=self.required), *self.members)


def exclusive(*members: Declared, required: bool = False) -> Exclusive:
    return Exclusive(members, required)


Argument = Declared | Exclusive


def add_options(parser: Parser, *declared: Argument) -> None:
    for argument in declared:
        argument.add_to(parser)


def json_option(help: str) -> Declared:
    """`--json`: one JSON document on stdout, shaped as docs/cli.md describes."""
    return option("--json", action="store_true", help=help)


STORE_HELP = f"store URL (default: ${STORE_ENV} or a SQLite file in the user data directory)"
STORE = option("--store", default=None, help=STORE_HELP)
CREATE = option(
    "--create",
    action="store_true",
    help="create the store when it does not exist (otherwise a missing store is an error)",
)
JSON_SUMMARY = json_option(
    "print the summary as JSON on stdout (docs/cli.md); progress stays on stderr"
)
JSON_REPORT = json_option("print the report as JSON")
PASSPHRASE_ENV = option("--passphrase-env", metavar="VAR", help="passphrase variable for the key")


@contextmanager
def named_store(args: argparse.Namespace, *, create: bool = True) -> Iterator[Store]:
    """The store `--store` names (else the default one), closed when the block ends.
    Without `create` a missing store is a `StoreError` naming it: a mistyped URL must
    not become an empty store."""
    from assay.nvd.storage import open_store

    store = open_store(args.store or default_store_url(), create=create)
    try:
        yield store
    finally:
        store.close()


def print_json(document: Any) -> None:
    """`document` on stdout, indented (the `--json` documents of docs/cli.md)."""
    import json

    sys.stdout.write(json.dumps(document, indent=2) + "\n")


def print_compact_json(document: Any) -> None:
    """`document` on stdout on one line (the documents of the snapshot and key commands)."""
    import orjson

    sys.stdout.write(orjson.dumps(document).decode() + "\n")


def json_bytes(document: Any) -> bytes:
    """`document` as indented JSON and a newline (what --out files and stdout receive)."""
    import json

    return json.dumps(document, indent=2).encode() + b"\n"


def write_bytes(out: str | None, data: bytes) -> None:
    """`data` to the file `out`, or to standard output without one."""
    if out is None:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return
    write_output(out, data)


def write_output(path: str, data: bytes) -> None:
    """Write `data` to `path`; an unwritable path is an `InputError` naming it (exit 2)."""
    from pathlib import Path

    from assay.errors import InputError

    try:
        Path(path).write_bytes(data)
    except OSError as error:
        raise InputError(path, f"cannot write: {error.strerror or error}") from None
