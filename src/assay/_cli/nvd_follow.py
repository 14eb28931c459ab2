"""`assay nvd sync --upstream URL --key PUB` (or `--identity`/`--issuer`): follow the
upstream's published snapshots instead of reading its pages (docs/sync.md)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from assay._cli import EXIT_OK, EXIT_UNUSABLE
from assay._cli._options import add_options
from assay._cli.store import add_identity_options, public_keys_option
from assay.errors import InputError

if TYPE_CHECKING:
    from rich.console import Console

    from assay.nvd.storage import Store
    from assay.nvd.sync.snapshots import FollowReport, Verify


def add_follow_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group(
        "snapshots",
        "follow another assay's published snapshots (one download per change set) instead "
        "of its pages; any of these asks for them",
    )
    add_options(
        group, public_keys_option("PEM public key(s) the upstream's snapshots must be signed with")
    )
    add_identity_options(group, "the snapshots' Sigstore bundles must show")
    group.add_argument(
        "--snapshots-only",
        action="store_true",
        help="refuse (exit 2) when no chain of snapshots continues the store, rather than "
        "reading pages",
    )


def wants_snapshots(args: argparse.Namespace) -> bool:
    return bool(args.key) or args.identity is not None


def follow(args: argparse.Namespace, store: Store, console: Console) -> int | None:
    """Apply the chain of the upstream's snapshots: the exit code, or None when the
    upstream offers no chain for this store and pages are to be read instead."""
    import httpx
    from rich.markup import escape

    from assay.nvd.sync.snapshots import NoChain, SnapshotFollower

    verify = _verify(args)
    # The `sync` lock, as a paged sync holds it: one writer following the upstream.
    # The API key goes with these requests as with the pages' (a server or proxy that
    # asks for one gets it; a static server ignores it).
    key = args.api_key or os.environ.get("NVD_API_KEY")
    headers = {"apiKey": key} if key else {}
    with store.exclusive("sync"), httpx.Client(timeout=args.timeout, headers=headers) as client:
        follower = SnapshotFollower(store, verify, client=client)
        try:
            report = follower.run(args.upstream)
        except NoChain as error:
            if args.snapshots_only:
                console.print(f"[red]error[/red] {escape(str(error))}", highlight=False)
                return EXIT_UNUSABLE
            console.print(f"{escape(str(error))}; reading pages instead", highlight=False)
            return None
    _print_followed(args.json, report, console)
    return EXIT_OK


def _print_followed(as_json: bool, report: FollowReport, console: Console) -> None:
    from rich.markup import escape

    if as_json:
        import orjson

        document = {
            "snapshots": report.listing,
            "generation": report.generation,
            "applied": [result.to_dict() for result in report.applied],
        }
        sys.stdout.write(orjson.dumps(document, option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        console.print(
            f"{len(report.applied)} snapshot(s) applied from {escape(report.listing)} "
            f"({report.records:,} records); the store is at generation {report.generation} "
            "of the upstream",
            highlight=False,
        )


def _verify(args: argparse.Namespace) -> Verify:
    from assay._cli.store import keyless_check, verified_with_keys
    from assay.snapshot.format import SnapshotError
    from assay.snapshot.signing import SignedSnapshot

    if args.key and args.identity is not None:
        raise InputError("--key", "expected --key or --identity/--issuer, not both")
    if args.identity is not None:
        keyless = keyless_check(args.identity, args.issuer, "--identity")
        kind, check = "sigstore", keyless
    else:
        kind, check = "dsse", verified_with_keys(args.key)

    def verify(path: Path, signatures: dict[str, Path]) -> SignedSnapshot:
        if kind not in signatures:
            raise SnapshotError(str(path), f"the upstream lists no {kind} signature for it")
        return check(path, signatures[kind])

    return verify
