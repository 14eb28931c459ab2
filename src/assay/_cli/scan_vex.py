"""The VEX options of `assay scan` and `assay verify`: reading files, building trust.

`--vex FILE...` names VEX documents (OpenVEX, CycloneDX VEX, CSAF `csaf_vex`; plain,
in-toto statements, DSSE envelopes or Sigstore bundles). Signed ones count once they
verify against a `--vex-key` key or a Sigstore certificate of `--vex-identity` issued by
`--vex-issuer`; unsigned ones count too, and the output says they were unsigned.
"""

from __future__ import annotations

import argparse
import re
from typing import TYPE_CHECKING, Any

from assay._cli import add_list_option
from assay.errors import InputError

if TYPE_CHECKING:
    from assay.policy.model import Signer
    from assay.vex import TrustedSigner, VexDocument, VexTrust

MAX_VEX_FILES = 1000


def add_vex_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("VEX")
    add_list_option(
        group,
        "--vex",
        default=[],
        metavar="FILE",
        help="VEX documents whose statements apply to the findings (OpenVEX, CycloneDX, "
        "CSAF; plain or signed)",
    )
    add_list_option(
        group,
        "--vex-key",
        default=[],
        metavar="KEY",
        help="public key trusted to sign VEX documents (DSSE envelopes)",
    )
    group.add_argument(
        "--vex-identity",
        metavar="SAN",
        help="certificate identity (SAN) trusted to sign VEX documents (Sigstore bundles); "
        "'/regex/' matches the whole SAN",
    )
    group.add_argument(
        "--vex-issuer",
        metavar="URL",
        help="OIDC issuer of --vex-identity's certificates",
    )


def identity_matcher(san: str, issuer: str) -> Any:
    """Whether a certificate identity is SAN (exactly, or `/regex/` as a whole) from ISSUER."""
    pattern = (
        re.compile(san[1:-1])
        if len(san) > 1 and san.startswith("/") and san.endswith("/")
        else None
    )

    def matches(identity: Any) -> bool:
        if identity.issuer != issuer or identity.san is None:
            return False
        return bool(pattern.fullmatch(identity.san)) if pattern else identity.san == san

    return matches


def command_line_signers(args: argparse.Namespace) -> list[TrustedSigner]:
    """The trusted VEX signers `--vex-key`, `--vex-identity`/`--vex-issuer` name."""
    from assay._cli.attest_signing import read_limited
    from assay.keys import MAX_PEM_BYTES, load_public_key
    from assay.vex import TrustedSigner

    signers = [
        TrustedSigner(path, keys=(load_public_key(read_limited(path, MAX_PEM_BYTES), where=path),))
        for path in args.vex_key
    ]
    if (args.vex_identity is None) != (args.vex_issuer is None):
        raise InputError("--vex-identity", "give --vex-identity and --vex-issuer together")
    if args.vex_identity is not None:
        signers.append(
            TrustedSigner(
                args.vex_identity,
                identity=identity_matcher(args.vex_identity, args.vex_issuer),
                describe=f"{args.vex_identity} ({args.vex_issuer})",
            )
        )
    return signers


def policy_signers(signers: tuple[Signer, ...]) -> list[TrustedSigner]:
    """A policy's trusted signers as VEX signers (by name, keys and identity)."""
    from assay.vex import TrustedSigner

    return [
        TrustedSigner(
            s.name,
            keys=s.keys,
            identity=s.identity.matches if s.identity is not None else None,
            describe=s.identity.describe() if s.identity is not None else s.name,
        )
        for s in signers
    ]


def vex_trust(signers: list[TrustedSigner], roots: list[str] | None = None) -> VexTrust:
    from assay.vex import VexTrust

    bundles = None
    if any(s.identity is not None for s in signers):
        from assay.sigstore import BundleVerifier, select_roots

        bundles = BundleVerifier(select_roots(roots or []))
    return VexTrust(tuple(signers), bundles)


def read_vex_documents(paths: list[str], trust: VexTrust) -> list[VexDocument]:
    """The documents of `--vex` files, in command-line order."""
    from assay._bounded import read_bounded
    from assay.vex import MAX_VEX_BYTES, VexError, read_vex_files

    if len(paths) > MAX_VEX_FILES:
        raise InputError("--vex", f"expected at most {MAX_VEX_FILES} files")
    files = [(path, read_bounded(path, MAX_VEX_BYTES, VexError)) for path in paths]
    return read_vex_files(files, trust)


def command_line_trust(args: argparse.Namespace) -> VexTrust | None:
    """Who may sign `--vex` documents (None without `--vex`)."""
    if not args.vex:
        if args.vex_key or args.vex_identity:
            raise InputError("--vex-key", "only applies with --vex")
        return None
    return vex_trust(command_line_signers(args))


# -- VEX and attestations out ----------------------------------------------------------

VEX_FORMATS = ("openvex", "cosign-vuln")
"""Output formats this module writes (`assay scan --format`)."""
_HASH_NAMES = {"SHA-256": "sha256", "SHA-384": "sha384", "SHA-512": "sha512", "SHA-1": "sha1"}
_DIGEST = re.compile(r"^(sha256|sha384|sha512):([0-9a-fA-F]+)$")


def add_attest_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("signed scan results")
    group.add_argument(
        "--attest",
        action="store_true",
        help="write the result as an in-toto statement (vulns v0.2 predicate; cosign's "
        "vuln v1 with --format cosign-vuln), DSSE-signed with --key; needs --out",
    )
    group.add_argument("--key", metavar="KEY", help="private key that signs --attest's statement")
    group.add_argument("--passphrase-env", metavar="VAR", help="passphrase of --key")
    add_list_option(
        group,
        "--subject",
        default=[],
        metavar="FILE|ALG:HEX",
        help="the artifact the scan is about (default: the SBOM's metadata.component "
        "hashes, else the provenance subjects, else the input files)",
    )


def _file_sha256(path: str) -> str:
    """The SHA-256 of a file, read a MiB at a time (an artifact may be large)."""
    import hashlib
    from pathlib import Path

    digest = hashlib.sha256()
    try:
        with Path(path).open("rb") as handle:
            while chunk := handle.read(1 << 20):
                digest.update(chunk)
    except OSError as error:
        raise InputError(path, f"cannot read: {error.strerror or error}") from None
    return digest.hexdigest()


def _subject_argument(text: str) -> tuple[str, dict[str, str]]:
    from pathlib import Path

    match = _DIGEST.match(text)
    if match and not Path(text).exists():
        return text, {match.group(1): match.group(2).lower()}
    return Path(text).name, {"sha256": _file_sha256(text)}


def _bom_subject(document: dict[str, Any]) -> tuple[str, dict[str, str]] | None:
    metadata = document.get("metadata")
    component = metadata.get("component") if isinstance(metadata, dict) else None
    if not isinstance(component, dict):
        return None
    digest = {
        _HASH_NAMES[h["alg"]]: str(h["content"]).lower()
        for h in component.get("hashes") or []
        if isinstance(h, dict) and h.get("alg") in _HASH_NAMES and isinstance(h.get("content"), str)
    }
    if not digest:
        return None
    name = str(component.get("purl") or component.get("name") or "subject")
    return name, digest


def _record_statement(record: Any, name: str) -> Any:
    """The statement of an attestation record: itself, or its envelope's payload."""
    import json

    from assay.dsse import b64decode
    from assay.errors import AssayError

    envelope = record.envelope
    if envelope is None or not isinstance(envelope.get("payload"), str):
        return record.document if record.kind == "statement" else None
    try:
        return json.loads(b64decode(envelope["payload"], name))
    except (AssayError, ValueError):
        return None


def _subjects_of(statement: Any) -> list[tuple[str, dict[str, str]]]:
    subjects = statement.get("subject") if isinstance(statement, dict) else None
    return [
        (str(subject.get("name") or ""), {str(k): str(v) for k, v in subject["digest"].items()})
        for subject in (subjects if isinstance(subjects, list) else [])
        if isinstance(subject, dict) and isinstance(subject.get("digest"), dict)
    ]


def _statement_subjects(data: bytes, name: str) -> list[tuple[str, dict[str, str]]]:
    from assay.attestation.files import parse_file
    from assay.errors import AssayError

    try:
        records = parse_file(data, name)
    except AssayError:
        return []
    return [s for record in records for s in _subjects_of(_record_statement(record, name))]


def _attested_subjects(
    args: argparse.Namespace, inventories: list[Any]
) -> list[tuple[str, dict[str, str]]]:
    """The subjects of the statements among the inputs (provenance, an SBOM's)."""
    from assay._cli.attest_signing import read_limited
    from assay.audit.inputs import MAX_INPUT_BYTES
    from assay.audit.model import Inventory

    attested = [
        path for path, inventory in zip(args.inputs, inventories, strict=False)
        if path != "-" and isinstance(inventory, Inventory) and inventory.verified is not None
    ]  # fmt: skip
    return [s for p in attested for s in _statement_subjects(read_limited(p, MAX_INPUT_BYTES), p)]


def scan_subjects(
    args: argparse.Namespace, inventories: list[Any]
) -> list[tuple[str, dict[str, str]]]:
    """`--subject`, else the SBOMs' `metadata.component` hashes, else the statements'
    subjects (provenance), else the input files themselves."""
    if args.subject:
        return [_subject_argument(text) for text in args.subject]
    boms = [s for i in inventories if i.document is not None if (s := _bom_subject(i.document))]
    if boms:
        return boms
    statements = _attested_subjects(args, inventories)
    if statements:
        return statements
    subjects = [(p, {"sha256": _file_sha256(p)}) for p in args.inputs if p != "-"]
    if not subjects:
        raise InputError("--subject", "the scan names no file: give --subject FILE|ALG:HEX")
    return subjects


def _json_bytes(document: dict[str, Any]) -> bytes:
    import json

    return json.dumps(document, indent=2).encode() + b"\n"


def _predicate(args: argparse.Namespace, result: Any, times: tuple[Any, Any]) -> dict[str, Any]:
    """The scan as a vulns v0.2 predicate, or cosign's vuln v1 (`--format cosign-vuln`)."""
    from assay import __version__
    from assay.audit import vulns

    scanned = vulns.ScannedAt(result, times[0], times[1])
    if args.format == "cosign-vuln":
        return vulns.cosign_vuln_predicate(scanned, version=__version__)
    return vulns.vulns_predicate(scanned, version=__version__)


def _openvex(result: Any, verdict: Any) -> dict[str, Any]:
    from datetime import UTC, datetime

    from assay import __version__
    from assay.audit.vex_out import to_openvex

    return to_openvex(result, verdict, now=datetime.now(UTC), version=__version__)


def write_vex_and_attestations(
    args: argparse.Namespace,
    result: Any,
    verdict: Any,
    inventories: list[Any],
    times: tuple[Any, Any],
) -> bool:
    """Write `--format openvex`, `--format cosign-vuln` and `--attest` output; False when
    the format is another module's."""
    if not args.attest and args.format not in VEX_FORMATS:
        if args.key or args.subject:
            raise InputError("--key", "only applies with --attest")
        return False
    if not args.attest:
        document = (
            _openvex(result, verdict)
            if args.format == "openvex"
            else _predicate(args, result, times)
        )
        _emit(args.out, _json_bytes(document))
        return True
    if args.format not in (None, "json", "cosign-vuln"):
        raise InputError("--format", "--attest writes json (vulns v0.2) or cosign-vuln")
    if args.out is None:
        raise InputError("--out", "required with --attest")
    from assay.audit import vulns

    predicate_type = vulns.COSIGN_VULN_V1 if args.format == "cosign-vuln" else vulns.VULNS_V02
    statement = vulns.vulns_statement(
        scan_subjects(args, inventories), _predicate(args, result, times), predicate_type
    )
    _emit(args.out, sign_statement(statement, args.key, args.passphrase_env))
    return True


def sign_statement(statement: dict[str, Any], key: str | None, passphrase_env: str | None) -> bytes:
    """The statement as JSON, or as a DSSE envelope signed with the private key `key`."""
    import json

    payload = json.dumps(statement, separators=(",", ":")).encode()
    if key is None:
        return json.dumps(statement, indent=2).encode() + b"\n"
    from assay import dsse
    from assay._cli.attest_signing import read_limited
    from assay._cli.keys import read_passphrase
    from assay.keys import MAX_PEM_BYTES, load_private_key

    signer = load_private_key(
        read_limited(key, MAX_PEM_BYTES), passphrase=read_passphrase(passphrase_env), where=key
    )
    envelope = dsse.sign(payload, dsse.INTOTO_PAYLOAD_TYPE, [signer])
    return json.dumps(envelope.to_dict(), indent=2).encode() + b"\n"


def _emit(out: str | None, data: bytes) -> None:
    import sys

    if out is None:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return
    from assay._cli.attest_signing import write_output

    write_output(out, data)
