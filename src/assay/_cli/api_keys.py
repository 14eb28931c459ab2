"""`assay api-keys create|list|revoke`: the API keys a mirror's server accepts."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from assay._cli import EXIT_OK, CommandTree
from assay.config import STORE_ENV

if TYPE_CHECKING:
    from assay.nvd.storage import ServiceStore, Store


def register(tree: CommandTree) -> None:
    group = tree.group("api-keys", help="Create, list and revoke the server's API keys.")
    create = group.add_parser(
        "create",
        help="Make a key; it is shown this once (the store keeps only its digest).",
        description="Make a key; it is shown this once (the store keeps only its digest).",
    )
    create.add_argument("name", metavar="NAME", help="the key's name (letters, digits, ._@-)")
    _store_option(create)
    create.add_argument("--json", action="store_true", help='print {"name": ..., "key": ...}')
    create.set_defaults(handler=_create)
    listing = group.add_parser(
        "list",
        help="The keys' names, creation and last-use times (never the keys).",
        description="The keys' names, creation and last-use times (never the keys).",
    )
    _store_option(listing)
    listing.add_argument("--json", action="store_true", help="print a JSON array")
    listing.set_defaults(handler=_list)
    revoke = group.add_parser(
        "revoke",
        help="Forget a key: servers refuse it within seconds.",
        description="Forget a key: servers refuse it within seconds.",
    )
    revoke.add_argument("name", metavar="NAME", help="the name the key was created with")
    _store_option(revoke)
    revoke.set_defaults(handler=_revoke)


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
