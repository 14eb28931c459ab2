"""`assay trust`: the Sigstore trusted roots verification uses, and refreshing them."""

from __future__ import annotations

import argparse
import sys

from assay._cli import EXIT_OK, EXIT_UNUSABLE, CommandTree, add_json_option
from assay._cli._options import print_json


def register(tree: CommandTree) -> None:
    show = tree.add(
        "trust list",
        help="List the trusted roots in use.",
        handler=_list,
    )
    add_json_option(show, "print the list as JSON")
    update = tree.add(
        "trust update",
        help="Replace a shipped trusted root with a newer one (offline from a file, or online).",
        description=(
            "Replace a shipped trusted root with a newer trusted_root.json: from a file"
            " (--from, offline) or, where the network allows it, through the instance's TUF"
            " repository (--online: Sigstore's for public-good, GitHub's for github)."
        ),
        handler=_update,
    )
    source = update.add_mutually_exclusive_group(required=True)
    source.add_argument("--from", dest="source", metavar="FILE", help="a trusted_root.json")
    source.add_argument(
        "--online",
        action="store_true",
        help="refresh through the instance's TUF repository (Sigstore's, or GitHub's)",
    )
    update.add_argument(
        "--name",
        default="public-good",
        choices=("public-good", "github"),
        help="which shipped root the file replaces (default public-good)",
    )


def _list(args: argparse.Namespace) -> int:
    from assay.sigstore.roots import default_roots

    roots = default_roots()
    if args.json:
        print_json([{"name": r.name, "origin": r.origin, "sha256": r.sha256} for r in roots])
    else:
        for root in roots:
            print(f"{root.name}\t{root.origin}\tsha256:{root.sha256}")
    return EXIT_OK


def _update(args: argparse.Namespace) -> int:
    from pathlib import Path

    from assay.sigstore.roots import update_root

    if args.online:
        path = Path(_write_temporary(_fetch_root(args.name)))
        try:
            target = update_root(path, args.name)
        finally:
            path.unlink(missing_ok=True)
    else:
        target = update_root(Path(args.source), args.name)
    print(f"trusted root {args.name} updated: {target}", file=sys.stderr)
    return EXIT_OK if target else EXIT_UNUSABLE


def _fetch_root(name: str) -> bytes:
    """The newest trusted root of the instance `name`, through its TUF repository."""
    if name == "github":
        from assay.sigstore.github_tuf import fetch_github

        return fetch_github()
    from assay.sigstore.roots import fetch_public_good

    return fetch_public_good()


def _write_temporary(data: bytes) -> str:
    import tempfile

    with tempfile.NamedTemporaryFile("wb", suffix=".json", delete=False) as handle:
        handle.write(data)
        return handle.name
