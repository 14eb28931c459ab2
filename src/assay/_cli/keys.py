"""`assay keys generate` and `assay keys show`: create a key pair for signing attestations,
and say every id a signature may name a key by."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING

from assay._cli import EXIT_OK, CommandTree
from assay._cli._options import add_options, json_option, option, print_json
from assay.errors import InputError
from assay.key_types import KeyType

if TYPE_CHECKING:
    from assay.keys import PublicKey


def register(tree: CommandTree) -> None:
    generate = tree.add(
        "keys generate",
        help="Generate a key pair: PREFIX.key (PKCS#8 PEM) and PREFIX.pub (SPKI PEM).",
        handler=_generate,
    )
    add_options(
        generate,
        option(
            "--type",
            required=True,
            choices=[kind.value for kind in KeyType],
            metavar="TYPE",
            help="key type: %(choices)s",
        ),
        option("--out", required=True, metavar="PREFIX", help="output path prefix"),
        option(
            "--passphrase-env",
            metavar="VAR",
            help="encrypt the private key with the passphrase held in this environment variable",
        ),
        option("--force", action="store_true", help="overwrite existing files"),
        json_option("print the files written and the key id as JSON on stdout (docs/cli.md)"),
    )
    show = tree.add(
        "keys show",
        help="Show a key's type and ids: the securesystemslib key id assay signs with, "
        "the older in-toto key id and assay's SPKI fingerprint.",
        description="Show a key's type and the ids a signature may name it by.",
        handler=_show,
    )
    add_options(
        show,
        option("key", metavar="KEY", help="a public or private key file (PEM or in-toto JSON)"),
        option(
            "--passphrase-env",
            metavar="VAR",
            help="the passphrase of an encrypted private key, held in this environment variable",
        ),
        json_option("print the ids as JSON on stdout"),
    )


def read_passphrase(variable: str | None) -> bytes | None:
    """The passphrase from the named environment variable (never from the command line)."""
    if not variable:
        return None
    value = os.environ.get(variable)
    if not value:
        raise InputError("--passphrase-env", f"expected environment variable {variable} to be set")
    return value.encode("utf-8")


def _generate(args: argparse.Namespace) -> int:
    private_path = Path(f"{args.out}.key")
    public_path = Path(f"{args.out}.pub")
    for path in (private_path, public_path):
        if path.exists() and not args.force:
            raise InputError(str(path), "already exists; pass --force to overwrite it")
    from assay.keys import generate_private_key

    passphrase = read_passphrase(args.passphrase_env)
    key = generate_private_key(args.type)
    _write_secret(private_path, key.to_pem(passphrase))
    try:
        public_path.write_bytes(key.public_key().to_pem())
    except OSError as error:
        raise InputError(str(public_path), f"cannot write: {error.strerror}") from None
    if args.json:
        print_json(
            {
                "type": args.type,
                **_ids(key.public_key()),
                "privateKey": str(private_path),
                "publicKey": str(public_path),
                "encrypted": passphrase is not None,
            }
        )
    else:
        print(f"wrote {private_path} and {public_path} (keyid {key.keyid})")
    return EXIT_OK


def _write_secret(path: Path, data: bytes) -> None:
    """Create the file readable by its owner only, before writing the secret into it."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
    except OSError as error:
        raise InputError(str(path), f"cannot write: {error.strerror}") from None


def _ids(key: PublicKey) -> dict[str, str]:
    """The ids a signature may name `key` by; `keyid` is the one assay writes."""
    from assay.keys import sslib_key_id

    return {
        "keyid": sslib_key_id(key.key),
        "intotoKeyid": key.intoto_keyid,
        "fingerprint": key.fingerprint(),
    }


def _show(args: argparse.Namespace) -> int:
    from assay._bounded import read_bounded
    from assay.keys import MAX_PEM_BYTES, load_private_key, load_public_key

    data = read_bounded(args.key, MAX_PEM_BYTES)
    if b"PRIVATE KEY" in data:
        public = load_private_key(
            data, passphrase=read_passphrase(args.passphrase_env), where=args.key
        ).public_key()
    else:
        public = load_public_key(data, where=args.key)
    ids = _ids(public)
    if args.json:
        print_json({"type": public.algorithm, **ids})
        return EXIT_OK
    print(f"{args.key}: {public.algorithm}")
    print(f"  keyid        {ids['keyid']}  (securesystemslib; what assay signs with)")
    print(f"  in-toto id   {ids['intotoKeyid']}  (older in-toto key files)")
    print(f"  fingerprint  {ids['fingerprint']}  (SHA-256 of the DER public key; also accepted)")
    return EXIT_OK
