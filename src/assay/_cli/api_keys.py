"""`assay api-keys create|list|revoke`: the API keys a mirror's server accepts."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from assay._cli import EXIT_OK, CommandTree
from assay._cli._options import (
    CREATE,
    STORE,
    add_options,
    json_option,
    named_store,
    print_compact_json,
)

if TYPE_CHECKING:
    from assay.nvd.storage import ServiceStore
    from assay.nvd.storage.interface import ApiKey


def register(tree: CommandTree) -> None:
    create = tree.add(
        "api-keys create",
        help="Make a key; it is shown this once (the store keeps only its digest).",
        handler=_create,
    )
    create.add_argument("name", metavar="NAME", help="the key's name (letters, digits, ._@-)")
    add_options(create, STORE, CREATE, json_option('print {"name": ..., "key": ...}'))
    listing = tree.add(
        "api-keys list",
        help="The keys' names, creation and last-use times (never the keys).",
        handler=_list,
    )
    add_options(listing, STORE, CREATE, json_option("print a JSON array"))
    revoke = tree.add(
        "api-keys revoke",
        help="Forget a key: servers refuse it within seconds.",
        handler=_revoke,
    )
    revoke.add_argument("name", metavar="NAME", help="the name the key was created with")
    add_options(revoke, STORE, CREATE)


@contextmanager
def _keys(args: argparse.Namespace) -> Iterator[ServiceStore]:
    """The keys of the store `--store` names; a missing store is refused unless --create."""
    from assay.nvd.storage import service_store

    with named_store(args, create=args.create) as store:
        yield service_store(store)


def _create(args: argparse.Namespace) -> int:
    from assay.nvd.apikeys import check_name, create_key

    check_name(args.name)
    with _keys(args) as keys:
        made = create_key(keys, args.name)
    if args.json:
        print_compact_json(made.to_dict())
    else:
        print(f"API key {made.name!r} (shown only this once; send it in the apiKey header):")
        print(made.key)
    return EXIT_OK


def _list(args: argparse.Namespace) -> int:
    from assay.nvd.apikeys import list_keys

    with _keys(args) as keys:
        found = list_keys(keys)
    if args.json:
        print_compact_json([key.to_dict() for key in found])
    else:
        _print_keys(found)
    return EXIT_OK


def _print_keys(found: list[ApiKey]) -> None:
    if not found:
        print("no API keys")
    for key in found:
        print(f"{key.name}\tcreated {key.created}\tlast used {key.last_used or 'never'}")


def _revoke(args: argparse.Namespace) -> int:
    from assay.nvd.apikeys import check_name, revoke_key

    check_name(args.name)
    with _keys(args) as keys:
        revoke_key(keys, args.name)
    print(f"revoked the API key {args.name!r}")
    return EXIT_OK
