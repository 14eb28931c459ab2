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
    from assay.audit.model import ScanResult
    from assay.audit.vex import VexApplied
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


def _identity_matcher(san: str, issuer: str) -> Any:
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
                identity=_identity_matcher(args.vex_identity, args.vex_issuer),
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


def apply_command_line_vex(args: argparse.Namespace, result: ScanResult) -> VexApplied | None:
    """`--vex` applied to a scan (None without `--vex`)."""
    if not args.vex:
        if args.vex_key or args.vex_identity:
            raise InputError("--vex-key", "only applies with --vex")
        return None
    from assay.audit.vex import apply_vex

    documents = read_vex_documents(args.vex, vex_trust(command_line_signers(args)))
    return apply_vex(result, documents)
