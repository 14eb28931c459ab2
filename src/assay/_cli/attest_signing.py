"""`assay attest sign` and `assay attest verify-signature`: DSSE over a statement file."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any, Final

from assay import protocol
from assay._cli import EXIT_FAILED, EXIT_OK, CommandTree
from assay._cli._options import (
    PASSPHRASE_ENV,
    add_options,
    json_option,
    list_option,
    option,
    print_json,
    write_output,
)
from assay._cli.keys import read_passphrase
from assay.errors import InputError

# write_output is imported from here by the commands that write files.
__all__ = [
    "INTOTO_PAYLOAD_TYPE",
    "load_private_keys",
    "load_public_keys",
    "read_envelope",
    "read_limited",
    "register",
    "write_output",
]

if TYPE_CHECKING:
    from assay.dsse import SignatureReport
    from assay.keys import PrivateKey, PublicKey

# DSSE's payloadType for in-toto statements (the in-toto attestation spec); stated here
# too so that the parser does not load the signing code.
INTOTO_PAYLOAD_TYPE: Final = protocol.PAYLOAD_TYPE_INTOTO


def register(tree: CommandTree) -> None:
    sign = tree.add(
        "attest sign",
        help="Sign a statement (or any payload) into a DSSE envelope.",
        description="Sign FILE into a DSSE envelope written to stdout or --out.",
        handler=_sign,
    )
    add_options(
        sign,
        option("file", metavar="FILE", help="payload to sign (an in-toto statement)"),
        list_option("--key", required=True, metavar="KEY", help="PEM private key(s) to sign with"),
        PASSPHRASE_ENV,
        option(
            "--payload-type",
            default=INTOTO_PAYLOAD_TYPE,
            help="DSSE payloadType (default: %(default)s)",
        ),
        option("--out", help="write the envelope here instead of stdout"),
        json_option(
            "print the result as JSON (payload type and digest, signing keys, --out, envelope)"
        ),
    )
    check = tree.add(
        "attest verify-signature",
        help="Check a DSSE envelope's signatures against public keys.",
        description="Check ENVELOPE's signatures; exit 0 if THRESHOLD distinct keys signed.",
        handler=_verify_signature,
    )
    add_options(
        check,
        option("envelope", metavar="ENVELOPE"),
        list_option("--key", required=True, metavar="PUB", help="PEM public key(s) to trust"),
        option("--threshold", type=int, default=1, help="distinct keys required (1)"),
        option("--print-payload", action="store_true", help="write the verified payload"),
        option(
            "--payload-type",
            default=INTOTO_PAYLOAD_TYPE,
            metavar="TYPE",
            help="the payloadType the envelope must declare (default: %(default)s)",
        ),
        json_option("print the result as JSON (verdict, payload type, threshold, signing keys)"),
    )


def read_limited(path: str, limit: int) -> bytes:
    """A file's bytes, refusing more than `limit` (pipes and /dev/stdin included: the
    limit is on what is read, not on what the file system says)."""
    from assay._bounded import read_bounded

    return read_bounded(path, limit)


def read_envelope(path: str) -> Any:
    """The one DSSE envelope of an attestation file (a bundle's too), read as every
    command reads attestation files."""
    from assay import dsse
    from assay.attestation.files import parse_file, read_file

    records = [r for r in parse_file(read_file(path), path) if r.kind != "unknown"]
    envelope = records[0].envelope if len(records) == 1 else None
    if envelope is None:
        kinds = ", ".join(r.kind for r in records) or "none"
        raise InputError(path, f"expected one DSSE envelope, found {kinds}")
    prefix = _ENVELOPE_PATHS.get(records[0].kind, "$")
    return dsse.Envelope.from_dict(envelope, where=f"{records[0].label}: {prefix}")


# Where a file kind keeps its envelope, for the path in error messages.
_ENVELOPE_PATHS: Final = {"sigstore-bundle": "$.dsseEnvelope"}


def load_public_keys(paths: list[str]) -> list[PublicKey]:
    from assay.keys import MAX_PEM_BYTES, load_public_key

    return [load_public_key(read_limited(p, MAX_PEM_BYTES), where=p) for p in paths]


def load_private_keys(paths: list[str], passphrase_env: str | None) -> list[PrivateKey]:
    """The signing keys in `paths`, decrypted with the passphrase the variable holds."""
    from assay.keys import MAX_PEM_BYTES, load_private_key

    passphrase = read_passphrase(passphrase_env)
    return [
        load_private_key(read_limited(p, MAX_PEM_BYTES), passphrase=passphrase, where=p)
        for p in paths
    ]


def _sign(args: argparse.Namespace) -> int:
    import json

    from assay import dsse

    signers = load_private_keys(args.key, args.passphrase_env)
    payload = read_limited(args.file, dsse.MAX_ENVELOPE_BYTES)
    if args.payload_type == dsse.INTOTO_PAYLOAD_TYPE:
        _check_statement(payload, args.file)
    envelope = dsse.sign(payload, args.payload_type, signers)
    report = dsse.SigningReport(
        envelope, tuple(dsse.KeyName.of(s.public_key()) for s in signers), args.out
    )
    text = json.dumps(envelope.to_dict(), indent=2) + "\n"
    if args.out:
        # Written before anything is printed: an unwritable path is an error naming it
        # (exit 2), and nothing reports success.
        write_output(args.out, text.encode("utf-8"))
    if args.json:
        print_json(report.to_dict())
    elif not args.out:
        sys.stdout.write(text)
    return EXIT_OK


def _check_statement(payload: bytes, where: str) -> None:
    """An in-toto payload must be a JSON statement: refused before anything is signed."""
    from assay import dsse
    from assay.attestation import loads_strict

    try:
        loads_strict(payload, where=where, limit=dsse.MAX_ENVELOPE_BYTES, statement=True)
    except InputError as error:
        raise InputError(
            error.where, f"expected a JSON in-toto statement: {error.reason}"
        ) from None


def _verify_signature(args: argparse.Namespace) -> int:
    from assay import dsse

    if args.threshold < 1:
        raise InputError("--threshold", f"expected at least 1, got {args.threshold}")
    keys = load_public_keys(args.key)
    envelope = read_envelope(args.envelope)
    report = dsse.signature_report(envelope, keys, args.threshold, payload_type=args.payload_type)
    if args.json:
        print_json(report.to_dict())
    else:
        _print_verdict(report, print_payload=args.print_payload)
    return EXIT_OK if report.passed else EXIT_FAILED


def _print_verdict(report: SignatureReport, *, print_payload: bool) -> None:
    """PASSED with the keys that signed (and the payload, when asked), or FAILED and why."""
    if report.passed:
        names = ", ".join(f"{k.keyid} (in-toto {k.intoto_keyid})" for k in report.signed_by)
        print(f"PASSED: signed by {len(report.signed_by)} trusted key(s): {names}", file=sys.stderr)
    else:
        print(f"FAILED: {report.error}", file=sys.stderr)
    print(f"payloadType: {report.payload_type}", file=sys.stderr)
    if report.passed and print_payload and report.payload is not None:
        sys.stdout.buffer.write(report.payload)
