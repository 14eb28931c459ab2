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

from assay._cli import EXIT_OK, CommandTree, add_list_option
from assay._cli._options import add_options, json_bytes, option, write_bytes
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


def _document_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--author", default="Unknown Author", help="the document's author")
    parser.add_argument("--author-role", metavar="ROLE", help="the author's role")
    parser.add_argument("--id", metavar="IRI", help="the document's @id (default: from content)")
    add_options(parser, _OUT)


def _trust_options(parser: argparse.ArgumentParser) -> None:
    add_list_option(
        parser,
        "--vex-key",
        default=[],
        metavar="KEY",
        help="public key trusted to sign the VEX documents read (DSSE envelopes)",
    )
    parser.add_argument("--vex-identity", metavar="SAN", help="trusted Sigstore identity (SAN)")
    parser.add_argument("--vex-issuer", metavar="URL", help="OIDC issuer of --vex-identity")


def register(tree: CommandTree) -> None:
    create = tree.add(
        "vex create",
        handler=_create,
        help="Write an OpenVEX document with one statement.",
        description="Write an OpenVEX 0.2.0 document with one statement: VULN's STATUS for "
        "the products (with a justification or impact statement for not_affected, an "
        "action statement for affected).",
    )
    add_list_option(
        create, "--product", "-p", required=True, metavar="ID", help="product purl, CPE or IRI"
    )
    create.add_argument("--vuln", "-v", required=True, metavar="ID", help="vulnerability id")
    create.add_argument(
        "--status", "-s", required=True, choices=_STATUSES, help="the product's status"
    )
    create.add_argument(
        "--justification", "-j", choices=_JUSTIFICATIONS, help="why it is not_affected"
    )
    create.add_argument("--impact-statement", metavar="TEXT", help="how it is not_affected")
    create.add_argument("--action-statement", metavar="TEXT", help="what to do when affected")
    add_list_option(
        create,
        "--subcomponents",
        default=[],
        metavar="ID",
        help="the statement is about these components inside the product",
    )
    add_list_option(
        create, "--aliases", default=[], metavar="ID", help="other ids of the vulnerability"
    )
    _document_options(create)

    merge = tree.add(
        "vex merge",
        handler=_merge,
        help="Join the statements of VEX documents into one OpenVEX document.",
        description="Read VEX documents (OpenVEX, CycloneDX VEX, CSAF csaf_vex; plain or "
        "signed) and write one OpenVEX 0.2.0 document with their statements, oldest first; "
        "--product and --vuln keep only the statements that name one of them.",
    )
    merge.add_argument("files", nargs="+", metavar="FILE", help="VEX document to merge")
    add_list_option(merge, "--product", default=[], metavar="ID", help="keep these products")
    add_list_option(merge, "--vuln", default=[], metavar="ID", help="keep these vulnerabilities")
    _document_options(merge)
    _trust_options(merge)

    apply = tree.add(
        "vex filter",
        handler=_filter,
        help="Remove the results VEX says are not_affected or fixed from a SARIF log.",
        description="Read a SARIF log (any scanner's; assay's names each component) and "
        "VEX documents, and write the log without the results a statement says are "
        "not_affected or fixed. A result's product is --product when given, else its "
        "logical locations; one with neither is matched by its rule id alone.",
    )
    apply.add_argument("report", metavar="REPORT", help="SARIF log")
    apply.add_argument("files", nargs="+", metavar="VEX", help="VEX document")
    add_list_option(
        apply, "--product", default=[], metavar="ID", help="the product the report is about"
    )
    add_options(apply, _OUT)
    _trust_options(apply)


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
