"""`assay store export` and `assay store import`: signed snapshots of a store, whole or
incremental, for air-gapped copies and for mirrors that follow a central one."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from assay._cli import EXIT_OK, CommandTree, add_list_option
from assay._cli.keys import read_passphrase
from assay.config import STORE_ENV, default_store_url
from assay.errors import InputError

if TYPE_CHECKING:
    from assay.keys import PublicKey
    from assay.snapshot.signing import SignedSnapshot


def register(tree: CommandTree) -> None:
    group = tree.group("store", help="Export and import signed snapshots of a store.")
    export = group.add_parser(
        "export",
        help="Write a compressed, signed snapshot of the store (or of what changed after a generation).",
        description="Write a snapshot of everything the store holds, or with --since only the "
        "records written after that generation (a delta), to --out; with --key, sign it into "
        "OUT.intoto.json (a DSSE envelope over an in-toto statement about the file).",
    )
    _store_option(export)
    export.add_argument("--out", required=True, metavar="FILE", help="the snapshot file to write")
    export.add_argument(
        "--since",
        type=int,
        metavar="GENERATION",
        help="only records written after this generation of the store (a delta)",
    )
    add_list_option(
        export, "--key", default=[], metavar="KEY", help="PEM private key(s) to sign with"
    )
    export.add_argument("--passphrase-env", metavar="VAR", help="passphrase variable for the key")
    export.add_argument(
        "--json",
        action="store_true",
        help='print {"generation", "since", "records", "bytes", "sha256"} on stdout',
    )
    export.set_defaults(handler=_export)

    load = group.add_parser(
        "import",
        help="Apply signed snapshots to a store: a full one to an empty store, then deltas in order.",
        description="Verify each FILE's signature (FILE.intoto.json, or --signature) and digest "
        "before anything is read or written, then apply it: a full snapshot to an empty store, "
        "a delta to a store exactly at its base generation. Each file is applied all or nothing.",
    )
    _store_option(load)
    load.add_argument("files", nargs="+", metavar="FILE", help="snapshot files, oldest first")
    add_list_option(
        load,
        "--key",
        default=[],
        metavar="PUB",
        help="PEM public key(s) a snapshot must be signed by",
    )
    load.add_argument(
        "--signature",
        metavar="FILE",
        help="the signature of the one FILE given (default: FILE.intoto.json beside it)",
    )
    load.add_argument(
        "--insecure-unsigned",
        action="store_true",
        help="apply snapshots without checking any signature: nothing then says who made them "
        "or that they were not changed (the manifest's own digests are still checked)",
    )
    load.add_argument(
        "--create",
        action="store_true",
        help="create the store when it does not exist (otherwise a missing store is an error)",
    )
    load.add_argument("--json", action="store_true", help="print one result per file as JSON")
    load.set_defaults(handler=_import)


def _store_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--store",
        default=None,
        help=f"store URL (default: ${STORE_ENV} or a SQLite file in the user data directory)",
    )


def _export(args: argparse.Namespace) -> int:
    import tempfile

    import orjson

    from assay.keys import load_private_key
    from assay.nvd.storage import open_store
    from assay.snapshot.signing import file_sha256, sign_snapshot, signature_path
    from assay.snapshot.store_io import export_snapshot

    out = Path(args.out)
    passphrase = read_passphrase(args.passphrase_env)
    keys = [load_private_key(_read(path), passphrase=passphrase, where=path) for path in args.key]
    folder = out.parent if str(out.parent) else Path(".")
    if not folder.is_dir():
        raise InputError("--out", f"{folder}: expected an existing folder")
    store = open_store(args.store or default_store_url(), create=False)
    try:
        # Written beside the target and renamed at the end: never a half snapshot at OUT.
        with tempfile.NamedTemporaryFile(dir=folder, prefix=f".{out.name}.", delete=False) as part:
            try:
                manifest = export_snapshot(store, part, since=args.since)
            except BaseException:
                Path(part.name).unlink(missing_ok=True)
                raise
    finally:
        store.close()
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(part.name, 0o666 & ~umask)  # a snapshot is data to share, as any new file
    os.replace(part.name, out)
    digest = file_sha256(out)
    if keys:
        signature_path(out).write_bytes(sign_snapshot(manifest, out.name, digest, keys))
    summary = {
        "generation": manifest.generation,
        "since": manifest.since,
        "records": manifest.records,
        "bytes": out.stat().st_size,
        "sha256": digest,
    }
    if args.json:
        sys.stdout.write(orjson.dumps(summary).decode() + "\n")
    else:
        signed = f", signed into {signature_path(out)}" if keys else ", unsigned"
        print(
            f"wrote {out}: {manifest.records:,} records, generation {manifest.generation}"
            + (f" (after {manifest.since})" if manifest.since is not None else "")
            + signed,
            file=sys.stderr,
        )
    return EXIT_OK


def _import(args: argparse.Namespace) -> int:
    import orjson

    from assay.keys import load_public_key
    from assay.nvd.storage import open_store
    from assay.snapshot.format import SnapshotReader
    from assay.snapshot.signing import check_manifest, signature_path
    from assay.snapshot.store_io import apply_snapshot

    if not args.key and not args.insecure_unsigned:
        raise InputError(
            "--key", "expected the public key(s) snapshots are signed with, or --insecure-unsigned"
        )
    if args.key and args.insecure_unsigned:
        raise InputError(
            "--insecure-unsigned", "expected either --key or --insecure-unsigned, not both"
        )
    if args.signature and len(args.files) != 1:
        raise InputError("--signature", "names the signature of one FILE; give one FILE with it")
    files = [Path(name) for name in args.files]
    for path in files:
        if not path.is_file():
            raise InputError(str(path), "expected a snapshot file")
    keys = [load_public_key(_read(path), where=path) for path in args.key]
    # Every signature is checked before any store is opened or written.
    signed: dict[Path, SignedSnapshot] = {}
    for path in files:
        if keys:
            signature = Path(args.signature) if args.signature else signature_path(path)
            signed[path] = _verified(path, signature, keys)
    if args.insecure_unsigned:
        print(
            "assay store import: --insecure-unsigned: no signature checked; nothing says who "
            "made these snapshots",
            file=sys.stderr,
        )
    store = open_store(args.store or default_store_url(), create=args.create)
    results = []
    try:
        for path in files:
            with path.open("rb") as stream:
                if path in signed:
                    reader = SnapshotReader(stream, str(path))
                    check_manifest(signed[path], reader.manifest, str(path))
                    reader.close()
                    stream.seek(0)
                result = apply_snapshot(store, stream, str(path))
            results.append(result)
            if not args.json:
                manifest = result.manifest
                print(
                    f"{path}: applied {manifest.records:,} records ({result.added:,} added, "
                    f"{result.updated:,} updated, {result.unchanged:,} unchanged); the store is "
                    f"at generation {manifest.generation} of {manifest.store}",
                    file=sys.stderr,
                )
    finally:
        store.close()
    if args.json:
        sys.stdout.write(orjson.dumps([r.to_dict() for r in results]).decode() + "\n")
    return EXIT_OK


def _verified(path: Path, signature: Path, keys: list[PublicKey]) -> SignedSnapshot:
    from assay.snapshot.signing import MAX_ENVELOPE_BYTES, verify_snapshot_signature

    if not signature.is_file():
        raise InputError(str(signature), f"expected the signature of {path} (or --signature FILE)")
    from assay._bounded import read_bounded

    return verify_snapshot_signature(
        read_bounded(signature, MAX_ENVELOPE_BYTES), path, keys, str(signature)
    )


def _read(path: str) -> bytes:
    from assay._bounded import read_bounded
    from assay.keys import MAX_PEM_BYTES

    return read_bounded(path, MAX_PEM_BYTES)
