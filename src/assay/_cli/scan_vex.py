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

from assay._cli._options import add_options, json_bytes, list_option, option, write_bytes
from assay.errors import InputError

if TYPE_CHECKING:
    from assay.policy.model import Signer
    from assay.vex import TrustedSigner, VexDocument, VexTrust

MAX_VEX_FILES = 1000


VEX_OPTIONS = (
    list_option(
        "--vex",
        default=[],
        metavar="FILE",
        help="VEX documents whose statements apply to the findings (OpenVEX, CycloneDX, "
        "CSAF; plain or signed)",
    ),
    list_option(
        "--vex-key",
        default=[],
        metavar="KEY",
        help="public key trusted to sign VEX documents (DSSE envelopes)",
    ),
    option(
        "--vex-identity",
        metavar="SAN",
        help="certificate identity (SAN) trusted to sign VEX documents (Sigstore bundles); "
        "'/regex/' matches the whole SAN",
    ),
    option("--vex-issuer", metavar="URL", help="OIDC issuer of --vex-identity's certificates"),
)


def add_vex_options(parser: argparse.ArgumentParser) -> None:
    add_options(parser.add_argument_group("VEX"), *VEX_OPTIONS)


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


ATTEST_OPTIONS = (
    option(
        "--attest",
        action="store_true",
        help="write the result as an in-toto statement (vulns v0.2 predicate; cosign's "
        "vuln v1 with --format cosign-vuln), DSSE-signed with --key; needs --out",
    ),
    option("--key", metavar="KEY", help="private key that signs --attest's statement"),
    option("--passphrase-env", metavar="VAR", help="passphrase of --key"),
    list_option(
        "--subject",
        default=[],
        metavar="FILE|ALG:HEX",
        help="the artifact the scan is about (default: the SBOM's metadata.component "
        "hashes, else the provenance subjects, else the input files)",
    ),
)


def add_attest_options(parser: argparse.ArgumentParser) -> None:
    add_options(parser.add_argument_group("signed scan results"), *ATTEST_OPTIONS)


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


def _bom_component(document: dict[str, Any]) -> dict[str, Any] | None:
    """A CycloneDX SBOM's `metadata.component`: what the SBOM describes."""
    metadata = document.get("metadata")
    component = metadata.get("component") if isinstance(metadata, dict) else None
    return component if isinstance(component, dict) else None


def _known_hash(entry: Any) -> tuple[str, str] | None:
    """A CycloneDX hash entry as (in-toto algorithm name, lower-case hex), if it is one."""
    if not isinstance(entry, dict) or not isinstance(entry.get("content"), str):
        return None
    name = _HASH_NAMES.get(entry.get("alg"))  # type: ignore[arg-type]
    return None if name is None else (name, entry["content"].lower())


def _bom_subject(document: dict[str, Any]) -> tuple[str, dict[str, str]] | None:
    component = _bom_component(document)
    if component is None:
        return None
    digest = dict(filter(None, map(_known_hash, component.get("hashes") or [])))
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
    if not isinstance(subjects, list):
        return []
    return [found for subject in subjects if (found := _subject(subject)) is not None]


def _subject(subject: Any) -> tuple[str, dict[str, str]] | None:
    """An in-toto subject as (name, digest), or None when it is not one."""
    if not isinstance(subject, dict) or not isinstance(subject.get("digest"), dict):
        return None
    digest = {str(k): str(v) for k, v in subject["digest"].items()}
    return str(subject.get("name") or ""), digest


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

    attested = [
        path for path, inventory in zip(args.inputs, inventories, strict=False)
        if path != "-" and _verified(inventory)
    ]  # fmt: skip
    return [s for p in attested for s in _statement_subjects(read_limited(p, MAX_INPUT_BYTES), p)]


def _verified(inventory: Any) -> bool:
    """Whether an input was a statement whose signature was checked."""
    from assay.audit.model import Inventory

    return isinstance(inventory, Inventory) and inventory.verified is not None


def scan_subjects(
    args: argparse.Namespace, inventories: list[Any]
) -> list[tuple[str, dict[str, str]]]:
    """`--subject`, else the SBOMs' `metadata.component` hashes, else the statements'
    subjects (provenance), else the input files themselves."""
    if args.subject:
        return [_subject_argument(text) for text in args.subject]
    return (
        _bom_subjects(inventories)
        or _attested_subjects(args, inventories)
        or _input_file_subjects(args.inputs)
    )


def _bom_subjects(inventories: list[Any]) -> list[tuple[str, dict[str, str]]]:
    documents = [i.document for i in inventories if i.document is not None]
    return [subject for d in documents if (subject := _bom_subject(d)) is not None]


def _input_file_subjects(inputs: list[str]) -> list[tuple[str, dict[str, str]]]:
    subjects = [(p, {"sha256": _file_sha256(p)}) for p in inputs if p != "-"]
    if not subjects:
        raise InputError("--subject", "the scan names no file: give --subject FILE|ALG:HEX")
    return subjects


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
    if args.attest:
        _write_attestation(args, result, inventories, times)
        return True
    if args.format not in VEX_FORMATS:
        if args.key or args.subject:
            raise InputError("--key", "only applies with --attest")
        return False
    document = (
        _openvex(result, verdict) if args.format == "openvex" else _predicate(args, result, times)
    )
    write_bytes(args.out, json_bytes(document))
    return True


def _write_attestation(
    args: argparse.Namespace, result: Any, inventories: list[Any], times: tuple[Any, Any]
) -> None:
    """`--attest`: the scan as an in-toto statement about its subjects, signed with --key."""
    if args.format not in (None, "json", "cosign-vuln"):
        raise InputError("--format", "--attest writes json (vulns v0.2) or cosign-vuln")
    if args.out is None:
        raise InputError("--out", "required with --attest")
    from assay.audit import vulns

    predicate_type = vulns.COSIGN_VULN_V1 if args.format == "cosign-vuln" else vulns.VULNS_V02
    statement = vulns.vulns_statement(
        scan_subjects(args, inventories), _predicate(args, result, times), predicate_type
    )
    write_bytes(args.out, sign_statement(statement, args.key, args.passphrase_env))


def sign_statement(statement: dict[str, Any], key: str | None, passphrase_env: str | None) -> bytes:
    """The statement as JSON, or as a DSSE envelope signed with the private key `key`."""
    import json

    if key is None:
        return json_bytes(statement)
    from assay import dsse
    from assay._cli.attest_signing import load_private_keys

    payload = json.dumps(statement, separators=(",", ":")).encode()
    envelope = dsse.sign(
        payload, dsse.INTOTO_PAYLOAD_TYPE, load_private_keys([key], passphrase_env)
    )
    return json_bytes(envelope.to_dict())
