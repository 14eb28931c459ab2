"""`assay store export` and `assay store import`: signed snapshots of a store, whole or
incremental, for air-gapped copies and for mirrors that follow a central one."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from assay._cli import EXIT_OK, CommandTree
from assay._cli._options import (
    CREATE,
    PASSPHRASE_ENV,
    STORE,
    Declared,
    add_options,
    json_option,
    list_option,
    named_store,
    print_compact_json,
)
from assay.errors import InputError

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import IO

    from assay.keys import PrivateKey, PublicKey
    from assay.nvd.storage import Store
    from assay.snapshot.format import Manifest
    from assay.snapshot.signing import SignedSnapshot
    from assay.snapshot.store_io import ApplyResult


OCI_REFERENCE = "oci://REGISTRY/REPOSITORY:TAG"


def register(tree: CommandTree) -> None:
    export = tree.add(
        "store export",
        help="Write a compressed, signed snapshot of the store (or of what changed after a generation).",
        handler=_export,
        description="Write a snapshot of everything the store holds, or with --since only the "
        "records written after that generation (a delta), to --out; with --key, sign it into "
        "OUT.intoto.json (a DSSE envelope over an in-toto statement about the file).",
    )
    add_options(export, STORE)
    target = export.add_mutually_exclusive_group(required=True)
    target.add_argument("--out", metavar="FILE", help="the snapshot file to write")
    target.add_argument(
        "--publish",
        metavar="DIR",
        help="write the snapshot into DIR under its generations' name and list it in "
        "DIR/index.json (the series `assay serve --snapshots DIR` and static servers serve); "
        "without --since, a delta after the newest snapshot listed there",
    )
    export.add_argument(
        "--since",
        type=int,
        metavar="GENERATION",
        help="only records written after this generation of the store (a delta)",
    )
    add_options(
        export,
        list_option("--key", default=[], metavar="KEY", help="PEM private key(s) to sign with"),
        PASSPHRASE_ENV,
    )
    export.add_argument(
        "--identity-token",
        metavar="TOKEN",
        help="sign keyless: an OIDC identity token for Sigstore's public-good Fulcio and "
        "Rekor (needs the network), written as OUT.sigstore.json (a Sigstore bundle)",
    )
    add_options(
        export, json_option('print {"generation", "since", "records", "bytes", "sha256"} on stdout')
    )

    load = tree.add(
        "store import",
        help="Apply signed snapshots to a store: a full one to an empty store, then deltas in order.",
        handler=_import,
        description="Verify each FILE's signature (FILE.intoto.json, or --signature) and digest "
        "before anything is read or written, then apply it: a full snapshot to an empty store, "
        "a delta to a store exactly at its base generation. Each file is applied all or nothing.",
    )
    add_options(load, STORE)
    load.add_argument(
        "files",
        nargs="+",
        metavar="FILE",
        help="snapshot files, oldest first, or oci://REGISTRY/REPOSITORY:TAG (its snapshots)",
    )
    add_options(load, public_keys_option("PEM public key(s) a snapshot must be signed by"))
    add_identity_options(load, "a Sigstore bundle (FILE.sigstore.json) must show")
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
    add_options(load, CREATE, json_option("print one result per file as JSON"))
    _register_oci(tree)


def public_keys_option(help: str) -> Declared:
    """--key PUB...: the public keys snapshots must be signed with."""
    return list_option("--key", default=[], metavar="PUB", help=help)


def add_identity_options(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup, what: str
) -> None:
    """--identity and --issuer: the keyless signer of snapshots."""
    parser.add_argument(
        "--identity",
        metavar="SAN",
        help=f"keyless: the certificate identity (SAN, or /regex/) {what}; with --issuer",
    )
    parser.add_argument("--issuer", metavar="URL", help="keyless: the OIDC issuer of --identity")


def _register_oci(tree: CommandTree) -> None:
    push = tree.add(
        "store push",
        help="Put snapshots (with their signatures) or a published folder in an OCI registry.",
        handler=_push,
        description="Push FILEs (each with the signatures beside it) or a published folder "
        "(its index and every file it lists) as one OCI artifact tagged REF "
        "(docs/snapshots.md, media types).",
    )
    push.add_argument("reference", metavar=OCI_REFERENCE, help="the tag to push to")
    push.add_argument("files", nargs="+", metavar="FILE", help="snapshot files or a folder")
    add_options(push, json_option("print the artifact's digest as JSON"))
    pull = tree.add(
        "store pull",
        help="Fetch the files of a snapshot artifact from an OCI registry into a folder.",
        handler=_pull,
        description="Write each file of the artifact REF (a snapshot series, or snapshots "
        "with their signatures) into --out under its name; signatures are checked by "
        "`assay store import`, not here.",
    )
    pull.add_argument("reference", metavar=OCI_REFERENCE, help="the artifact to pull")
    pull.add_argument("--out", default=".", metavar="DIR", help="folder to write into (default .)")


def _export(args: argparse.Namespace) -> int:
    from assay._cli.attest_signing import load_private_keys
    from assay.snapshot.publish import publish

    keys = load_private_keys(args.key, args.passphrase_env)
    folder = _export_folder(args)
    since = _export_since(args, folder)
    with named_store(args, create=False) as store:
        if args.publish and since is not None and since == store.generation():
            print(f"nothing written after generation {since}: nothing to publish", file=sys.stderr)
            return EXIT_OK
        part, manifest = _write_part(store, folder, since)
    out = Path(args.out) if args.out else folder / _snapshot_name(manifest)
    digest = _signed_in_place(part, out, manifest, keys, args.identity_token)
    if args.publish:
        publish(folder, out, manifest, digest)
    _export_summary(args, out, manifest, digest)
    return EXIT_OK


def _signed_in_place(
    part: Path, out: Path, manifest: Manifest, keys: list[PrivateKey], token: str | None
) -> str:
    """Sign the snapshot at `part`, then give it its name `out`: signed before, so that a
    failed signing leaves no unsigned OUT (and no part file)."""
    try:
        digest = _sign(part, out, manifest, keys, token)
    except BaseException:
        part.unlink(missing_ok=True)
        raise
    os.replace(part, out)
    return digest


def _export_folder(args: argparse.Namespace) -> Path:
    folder = Path(args.publish) if args.publish else (Path(args.out).parent or Path("."))
    if not folder.is_dir():
        option = "--publish" if args.publish else "--out"
        raise InputError(option, f"{folder}: expected an existing folder")
    return folder


def _export_since(args: argparse.Namespace, folder: Path) -> int | None:
    """--since, or for --publish the newest generation the series lists."""
    from assay.snapshot.publish import read_index

    if args.since is not None or not args.publish:
        return args.since  # type: ignore[no-any-return]
    return read_index(folder).newest


def _snapshot_name(manifest: Manifest) -> str:
    from assay.snapshot.publish import snapshot_name

    return snapshot_name(manifest)


def _write_part(store: Store, folder: Path, since: int | None) -> tuple[Path, Manifest]:
    """The snapshot, written beside its target (renamed at the end: never a half
    snapshot under the target's name)."""
    import tempfile

    from assay.snapshot.store_io import export_snapshot

    with tempfile.NamedTemporaryFile(dir=folder, prefix=".snapshot.", delete=False) as part:
        try:
            manifest = export_snapshot(store, part, since=since)
        except BaseException:
            Path(part.name).unlink(missing_ok=True)
            raise
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(part.name, 0o666 & ~umask)  # a snapshot is data to share, as any new file
    return Path(part.name), manifest


def _sign(
    part: Path, out: Path, manifest: Manifest, keys: list[PrivateKey], token: str | None
) -> str:
    """Sign the snapshot written at `part` as the file `out`: its signatures beside `out`."""
    from assay.snapshot.signing import (
        bundle_path,
        file_sha256,
        sign_snapshot,
        sign_snapshot_keyless,
        signature_path,
    )

    digest = file_sha256(part)
    if keys:
        signature_path(out).write_bytes(sign_snapshot(manifest, out.name, digest, keys))
    if token:
        bundle_path(out).write_bytes(sign_snapshot_keyless(manifest, out.name, digest, token))
    return digest


def _export_summary(args: argparse.Namespace, out: Path, manifest: Manifest, digest: str) -> None:
    summary = {
        "generation": manifest.generation,
        "since": manifest.since,
        "records": manifest.records,
        "bytes": out.stat().st_size,
        "sha256": digest,
    }
    if args.json:
        print_compact_json(summary)
        return
    signed = ", signed" if args.key or args.identity_token else ", unsigned"
    print(
        f"wrote {out}: {manifest.records:,} records, generation {manifest.generation}"
        + (f" (after {manifest.since})" if manifest.since is not None else "")
        + signed,
        file=sys.stderr,
    )


def _import(args: argparse.Namespace) -> int:
    import tempfile

    with tempfile.TemporaryDirectory(prefix="assay-pulled-") as pulled:
        files = _local_files(args.files, Path(pulled))
        return _import_files(args, files)


def _local_files(names: list[str], folder: Path) -> list[Path]:
    """The files named, an OCI artifact's snapshots pulled into `folder` in their place."""
    from assay.snapshot.oci import is_oci

    files: list[Path] = []
    for number, name in enumerate(names):
        if is_oci(name):
            files.extend(_pulled_snapshots(name, folder / str(number)))
        else:
            files.append(Path(name))
    return files


def _pulled_snapshots(reference: str, into: Path) -> list[Path]:
    """The snapshots of the OCI artifact `reference`, pulled into the new folder `into`
    (its index and signatures left out: the signatures are found beside each file)."""
    from assay.registry.client import RegistryClient
    from assay.snapshot.oci import oci_reference, pull
    from assay.snapshot.publish import INDEX_NAME, SIGNATURE_SUFFIXES

    into.mkdir()
    with RegistryClient() as client:
        pulled = pull(client, oci_reference(reference, "FILE"), into)
    signatures = tuple(SIGNATURE_SUFFIXES.values())
    return [p for p in pulled if p.name != INDEX_NAME and not p.name.endswith(signatures)]


def _import_files(args: argparse.Namespace, files: list[Path]) -> int:
    signed = _checked_signatures(args, files)
    results = []
    with named_store(args, create=args.create) as store:
        for path in files:
            result = _apply(store, path, signed.get(path))
            results.append(result)
            if not args.json:
                _print_applied(path, result)
    if args.json:
        print_compact_json([r.to_dict() for r in results])
    return EXIT_OK


def _apply(store: Store, path: Path, signed: SignedSnapshot | None) -> ApplyResult:
    """Apply the snapshot file `path`, its manifest first checked against what was signed."""
    from assay.snapshot.store_io import apply_snapshot

    with path.open("rb") as stream:
        if signed is not None:
            _check_signed_manifest(stream, signed, path)
        return apply_snapshot(store, stream, str(path))


def _checked_signatures(args: argparse.Namespace, files: list[Path]) -> dict[Path, SignedSnapshot]:
    """Every file's signature, checked before any store is opened or written."""
    trust = _trust(args)
    _check_files(args.signature, files)
    if trust is None:
        print(
            "assay store import: --insecure-unsigned: no signature checked; nothing says who "
            "made these snapshots",
            file=sys.stderr,
        )
        return {}
    return {path: trust(path) for path in files}


def _check_files(signature: str | None, files: list[Path]) -> None:
    if signature and len(files) != 1:
        raise InputError("--signature", "names the signature of one FILE; give one FILE with it")
    for path in files:
        if not path.is_file():
            raise InputError(str(path), "expected a snapshot file")


def _check_signed_manifest(stream: IO[bytes], signed: SignedSnapshot, path: Path) -> None:
    from assay.snapshot.format import SnapshotReader
    from assay.snapshot.signing import check_manifest

    reader = SnapshotReader(stream, str(path))
    check_manifest(signed, reader.manifest, str(path))
    reader.close()
    stream.seek(0)


def _print_applied(path: Path, result: ApplyResult) -> None:
    manifest = result.manifest
    print(
        f"{path}: applied {manifest.records:,} records ({result.added:,} added, "
        f"{result.updated:,} updated, {result.unchanged:,} unchanged); the store is "
        f"at generation {manifest.generation} of {manifest.store}",
        file=sys.stderr,
    )


def _trust(args: argparse.Namespace) -> Callable[[Path], SignedSnapshot] | None:
    """How each file's signature is checked (None: --insecure-unsigned)."""
    given = [bool(args.key), args.identity is not None, bool(args.insecure_unsigned)]
    if sum(given) != 1:
        raise InputError(
            "--key",
            "expected one of: the public key(s) snapshots are signed with (--key), the "
            "keyless signer (--identity and --issuer), or --insecure-unsigned",
        )
    if args.insecure_unsigned:
        return None
    if args.identity is not None:
        keyless = keyless_check(args.identity, args.issuer, "--identity")
        return lambda path: keyless(path, _signature(args, path, ".sigstore.json"))
    check = verified_with_keys(args.key)
    return lambda path: check(path, _signature(args, path, ".intoto.json"))


def verified_with_keys(paths: list[str]) -> Callable[[Path, Path], SignedSnapshot]:
    """Verify a snapshot's DSSE envelope with the public keys in `paths`."""
    from assay.keys import load_public_key

    keys = [load_public_key(_read(path), where=path) for path in paths]
    return lambda path, signature: _verified(path, signature, keys)


def _signature(args: argparse.Namespace, path: Path, suffix: str) -> Path:
    return Path(args.signature) if args.signature else path.with_name(path.name + suffix)


def keyless_check(
    identity: str, issuer: str | None, option: str
) -> Callable[[Path, Path], SignedSnapshot]:
    """Verify a snapshot's Sigstore bundle against the shipped trusted roots, offline, for
    the identity SAN (exactly, or /regex/ as a whole) from `issuer`."""
    from assay._bounded import read_bounded
    from assay._cli.scan_vex import identity_matcher
    from assay.sigstore.roots import select_roots
    from assay.sigstore.verifier import BundleVerifier
    from assay.snapshot.signing import MAX_ENVELOPE_BYTES, verify_snapshot_bundle

    if issuer is None:
        raise InputError(option, "give the OIDC issuer with it (--issuer)")
    verifier = BundleVerifier(select_roots())
    matches = identity_matcher(identity, issuer)

    def check(path: Path, bundle: Path) -> SignedSnapshot:
        if not bundle.is_file():
            raise InputError(str(bundle), f"expected the Sigstore bundle of {path}")
        data = read_bounded(bundle, MAX_ENVELOPE_BYTES)
        return verify_snapshot_bundle(data, path, verifier, matches, str(bundle))

    return check


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


def _push(args: argparse.Namespace) -> int:
    from assay.registry.client import RegistryClient
    from assay.snapshot.oci import oci_reference, push

    ref = oci_reference(args.reference, "REFERENCE")
    with RegistryClient() as client:
        pushed = push(client, ref, [Path(name) for name in args.files])
    if args.json:
        print_compact_json(
            {"reference": pushed.reference, "digest": pushed.digest, "files": pushed.files}
        )
    else:
        print(
            f"pushed {len(pushed.files)} file(s) to {pushed.reference}@{pushed.digest}",
            file=sys.stderr,
        )
    return EXIT_OK


def _pull(args: argparse.Namespace) -> int:
    from assay.registry.client import RegistryClient
    from assay.snapshot.oci import oci_reference, pull

    ref = oci_reference(args.reference, "REFERENCE")
    folder = Path(args.out)
    if not folder.is_dir():
        raise InputError("--out", f"{folder}: expected an existing folder")
    with RegistryClient() as client:
        written = pull(client, ref, folder)
    for path in written:
        print(path, file=sys.stderr)
    return EXIT_OK
