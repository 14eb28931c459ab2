"""`assay api-keys create|list|revoke`: the API keys a mirror's server accepts."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from assay._cli import EXIT_OK, CommandTree, add_command, add_json_option
from assay.config import STORE_ENV

if TYPE_CHECKING:
    from assay.nvd.storage import ServiceStore, Store


def register(tree: CommandTree) -> None:
    group = tree.group("api-keys", help="Create, list and revoke the server's API keys.")
    create = add_command(
        group,
        "create",
        help="Make a key; it is shown this once (the store keeps only its digest).",
        handler=_create,
    )
    create.add_argument("name", metavar="NAME", help="the key's name (letters, digits, ._@-)")
    _store_option(create)
    add_json_option(create, 'print {"name": ..., "key": ...}')
    listing = add_command(
        group,
        "list",
        help="The keys' names, creation and last-use times (never the keys).",
        handler=_list,
    )
    _store_option(listing)
    add_json_option(listing, "print a JSON array")
    revoke = add_command(
        group,
        "revoke",
        help="Forget a key: servers refuse it within seconds.",
        handler=_revoke,
    )
    revoke.add_argument("name", metavar="NAME", help="the name the key was created with")
    _store_option(revoke)


def _store_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--store",
        default=None,
        help=f"store URL (default: ${STORE_ENV} or a SQLite file in the user data directory)",
    )
    parser.add_argument(
        "--create",
        action="store_true",
        help="create the store when it does not exist (otherwise a missing store is an error)",
    )


def _open(args: argparse.Namespace) -> tuple[Store, ServiceStore]:
    from assay.config import default_store_url
    from assay.nvd.storage import open_store, service_store

    store = open_store(args.store or default_store_url(), create=args.create)
    return store, service_store(store)


def _create(args: argparse.Namespace) -> int:
    import orjson

    from assay.nvd.apikeys import check_name, create_key

    check_name(args.name)
    store, keys = _open(args)
    try:
        made = create_key(keys, args.name)
    finally:
        store.close()
    if args.json:
        sys.stdout.write(orjson.dumps(made.to_dict()).decode() + "\n")
    else:
        print(f"API key {made.name!r} (shown only this once; send it in the apiKey header):")
        print(made.key)
    return EXIT_OK


def _list(args: argparse.Namespace) -> int:
    import orjson

    from assay.nvd.apikeys import list_keys

    store, keys = _open(args)
    try:
        found = list_keys(keys)
    finally:
        store.close()
    if args.json:
        sys.stdout.write(orjson.dumps([key.to_dict() for key in found]).decode() + "\n")
        return EXIT_OK
    if not found:
        print("no API keys")
    for key in found:
        print(f"{key.name}\tcreated {key.created}\tlast used {key.last_used or 'never'}")
    return EXIT_OK


def _revoke(args: argparse.Namespace) -> int:
    from assay.nvd.apikeys import check_name, revoke_key

    check_name(args.name)
    store, keys = _open(args)
    try:
        revoke_key(keys, args.name)
    finally:
        store.close()
    print(f"revoked the API key {args.name!r}")
    return EXIT_OK
