"""`assay vex create | merge | filter`: VEX documents made, joined and applied, as
`vexctl` does.

The library does the work (`assay.vex.write`); this module reads files and writes the
result. Output is OpenVEX 0.2.0 (create, merge) or the SARIF log given (filter), on
standard output or to `--out` (`--file`, vexctl's name). Exit 0 on success, 2 when an
input is unusable.
"""

from __future__ import annotations

import argparse
from typing import Any

from assay._cli import EXIT_OK, CommandTree
from assay._cli._options import add_options, json_bytes, list_option, option, write_bytes
from assay.errors import InputError

_STATUSES = ("not_affected", "affected", "fixed", "under_investigation")
_JUSTIFICATIONS = (
    "component_not_present",
    "vulnerable_code_not_present",
    "vulnerable_code_not_in_execute_path",
    "vulnerable_code_cannot_be_controlled_by_adversary",
    "inline_mitigations_already_exist",
)


_OUT = option(
    "--out", "--file", dest="out", metavar="FILE", help="write here, not to standard output"
)


_DOCUMENT = (
    option("--author", default="Unknown Author", help="the document's author"),
    option("--author-role", metavar="ROLE", help="the author's role"),
    option("--id", metavar="IRI", help="the document's @id (default: from content)"),
    _OUT,
)

_TRUST = (
    list_option(
        "--vex-key",
        default=[],
        metavar="KEY",
        help="public key trusted to sign the VEX documents read (DSSE envelopes)",
    ),
    option("--vex-identity", metavar="SAN", help="trusted Sigstore identity (SAN)"),
    option("--vex-issuer", metavar="URL", help="OIDC issuer of --vex-identity"),
)


def register(tree: CommandTree) -> None:
    create = tree.add(
        "vex create",
        handler=_create,
        help="Write an OpenVEX document with one statement.",
        description="Write an OpenVEX 0.2.0 document with one statement: VULN's STATUS for "
        "the products (with a justification or impact statement for not_affected, an "
        "action statement for affected).",
    )
    add_options(
        create,
        list_option(
            "--product", "-p", required=True, metavar="ID", help="product purl, CPE or IRI"
        ),
        option("--vuln", "-v", required=True, metavar="ID", help="vulnerability id"),
        option("--status", "-s", required=True, choices=_STATUSES, help="the product's status"),
        option("--justification", "-j", choices=_JUSTIFICATIONS, help="why it is not_affected"),
        option("--impact-statement", metavar="TEXT", help="how it is not_affected"),
        option("--action-statement", metavar="TEXT", help="what to do when affected"),
        list_option(
            "--subcomponents",
            default=[],
            metavar="ID",
            help="the statement is about these components inside the product",
        ),
        list_option("--aliases", default=[], metavar="ID", help="other ids of the vulnerability"),
        *_DOCUMENT,
    )
    merge = tree.add(
        "vex merge",
        handler=_merge,
        help="Join the statements of VEX documents into one OpenVEX document.",
        description="Read VEX documents (OpenVEX, CycloneDX VEX, CSAF csaf_vex; plain or "
        "signed) and write one OpenVEX 0.2.0 document with their statements, oldest first; "
        "--product and --vuln keep only the statements that name one of them.",
    )
    add_options(
        merge,
        option("files", nargs="+", metavar="FILE", help="VEX document to merge"),
        list_option("--product", default=[], metavar="ID", help="keep these products"),
        list_option("--vuln", default=[], metavar="ID", help="keep these vulnerabilities"),
        *_DOCUMENT,
        *_TRUST,
    )
    apply = tree.add(
        "vex filter",
        handler=_filter,
        help="Remove the results VEX says are not_affected or fixed from a SARIF log.",
        description="Read a SARIF log (any scanner's; assay's names each component) and "
        "VEX documents, and write the log without the results a statement says are "
        "not_affected or fixed. A result's product is --product when given, else its "
        "logical locations; one with neither is matched by its rule id alone.",
    )
    add_options(
        apply,
        option("report", metavar="REPORT", help="SARIF log"),
        option("files", nargs="+", metavar="VEX", help="VEX document"),
        list_option("--product", default=[], metavar="ID", help="the product the report is about"),
        _OUT,
        *_TRUST,
    )


def _write(out: str | None, document: Any) -> None:
    write_bytes(out, json_bytes(document))


def _create(args: argparse.Namespace) -> int:
    from datetime import UTC, datetime

    from assay.vex import VexError
    from assay.vex.write import new_statement, openvex_document

    now = datetime.now(UTC)
    try:
        statement = new_statement(
            vulnerability=args.vuln,
            products=args.product,
            status=args.status,
            justification=args.justification,
            impact=args.impact_statement,
            action=args.action_statement,
            aliases=args.aliases,
            subcomponents=args.subcomponents,
            now=now,
        )
    except VexError as error:
        raise InputError(f"--{error.where.replace('_', '-')}", error.reason) from None
    _write(
        args.out,
        openvex_document(
            [statement], author=args.author, role=args.author_role, doc_id=args.id, now=now
        ),
    )
    return EXIT_OK


def _read(args: argparse.Namespace) -> Any:
    from assay._cli.scan_vex import command_line_signers, read_vex_documents, vex_trust

    return read_vex_documents(args.files, vex_trust(command_line_signers(args)))


def _merge(args: argparse.Namespace) -> int:
    from datetime import UTC, datetime

    from assay.vex.write import merge_statements, openvex_document

    documents = _read(args)
    statements = merge_statements(documents, products=args.product, vulnerabilities=args.vuln)
    _write(
        args.out,
        openvex_document(
            statements,
            author=args.author,
            role=args.author_role,
            doc_id=args.id,
            now=datetime.now(UTC),
        ),
    )
    return EXIT_OK


def _filter(args: argparse.Namespace) -> int:
    import sys

    from assay._bounded import read_bounded
    from assay._json_strict import parse_checked, problem_reason
    from assay.vex import VexIndex
    from assay.vex.write import filter_sarif

    data = read_bounded(args.report, 256 * 1024 * 1024)
    try:
        sarif, problem = parse_checked(data, 64)
    except ValueError as error:
        raise InputError(args.report, f"expected a SARIF log (JSON): {error}") from None
    if problem is not None:
        raise InputError(f"{args.report}: {problem[0]}", problem_reason(problem[1], 64))
    if not isinstance(sarif, dict) or not isinstance(sarif.get("runs"), list):
        raise InputError(f"{args.report}: $.runs", "expected a SARIF log with runs")
    kept, dropped = filter_sarif(sarif, VexIndex(_read(args)), products=args.product)
    _write(args.out, kept)
    print(f"assay vex filter: {dropped} result(s) removed", file=sys.stderr)
    return EXIT_OK
