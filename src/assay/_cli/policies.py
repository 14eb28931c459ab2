"""`assay policies list | show`: the policies shipped with assay (`--policy builtin:NAME`)."""

from __future__ import annotations

import argparse
import sys

from assay._cli import EXIT_OK, CommandTree, add_json_option
from assay._cli._options import print_json


def register(tree: CommandTree) -> None:
    listing = tree.add(
        "policies list",
        help="List the shipped policies (use one as --policy builtin:NAME).",
        description="List the policies shipped with assay: each can be given to `assay "
        "verify` as --policy builtin:NAME; copy one (`assay policies show NAME`) to adapt it.",
        handler=_list,
    )
    add_json_option(listing, "print the list as JSON on stdout (docs/cli.md)")
    show = tree.add(
        "policies show",
        help="Print a shipped policy's YAML.",
        description="Print the YAML of the shipped policy NAME (as `builtin:NAME` reads it).",
        handler=_show,
    )
    show.add_argument("name", metavar="NAME", help="a name from `assay policies list`")


def _description(text: str) -> str:
    from assay import _yaml_strict
    from assay.errors import InputError

    try:
        document = _yaml_strict.load(text, "policy")
    except InputError:
        return ""
    value = document.get("description") if isinstance(document, dict) else None
    return value if isinstance(value, str) else ""


def _list(args: argparse.Namespace) -> int:
    from assay.policy.builtin import builtin_policies

    entries = [
        {
            "name": policy.name,
            "reference": policy.reference,
            "path": str(policy.path),
            "description": _description(policy.path.read_text(encoding="utf-8")),
        }
        for policy in builtin_policies()
    ]
    if args.json:
        print_json({"policies": entries})
        return EXIT_OK
    width = max((len(entry["reference"]) for entry in entries), default=0)
    for entry in entries:
        print(f"{entry['reference']:<{width}}  {entry['description']}".rstrip())
    return EXIT_OK


def _show(args: argparse.Namespace) -> int:
    from assay.errors import InputError
    from assay.policy.builtin import PREFIX, resolve

    name: str = args.name.removeprefix(PREFIX)
    path = resolve(f"{PREFIX}{name}")
    try:
        sys.stdout.write(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise InputError(str(path), f"cannot read: {error.strerror}") from None
    return EXIT_OK
