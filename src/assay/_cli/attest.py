"""`assay attest validate | migrate | schema`: check, upgrade and describe attestations."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay._cli import EXIT_FAILED, EXIT_OK, EXIT_UNUSABLE, CommandTree
from assay._cli._options import add_options, json_option, option
from assay.errors import AttestationError, InputError

if TYPE_CHECKING:
    from assay.attestation.documents import Document
    from assay.attestation.migrate import Migration

SIGNATURE_NOTE = "signatures were not checked; use `assay attest verify-signature` to verify them"


def register(tree: CommandTree) -> None:
    check = tree.add(
        "attest validate",
        help="Check statements, DSSE envelopes and Sigstore bundles against the SLSA formats.",
        description="Check each FILE (a statement, DSSE envelope, Sigstore bundle v0.1-v0.3 "
        "or a .intoto.jsonl bundle of them) against SLSA provenance v1, v0.2, v0.1 and the "
        "verification summary v1. Signatures are not checked. Exit 0 when every file is "
        "valid, 1 when one is invalid, 2 when one cannot be read.",
        handler=_validate,
    )
    add_options(
        check,
        option(
            "files",
            nargs="+",
            type=Path,
            metavar="FILE",
            help="statement, DSSE envelope, Sigstore bundle or JSON Lines of them",
        ),
        json_option("print a JSON report"),
        option("--strict", action="store_true", help="treat warnings as errors"),
    )

    upgrade = tree.add(
        "attest migrate",
        help="Rewrite SLSA provenance v0.1 or v0.2 as v1.",
        description="Rewrite the provenance in FILE as SLSA provenance v1 (in an in-toto "
        "Statement v1), following the spec's migration tables. Fields that could not be "
        "carried over and notes on fields that were are listed apart on stderr. The "
        "result is unsigned. Exit 0 when migrated, 2 when FILE holds no usable provenance.",
        handler=_migrate,
    )
    add_options(
        upgrade,
        option(
            "file",
            type=Path,
            metavar="FILE",
            help="provenance v0.1/v0.2/v1 statement, envelope or bundle",
        ),
        option(
            "--out",
            type=Path,
            metavar="FILE",
            help="write the migrated statement(s) here, not stdout",
        ),
        json_option("print a JSON report (statements, losses and notes; docs/cli.md) on stdout"),
    )

    schema = tree.add(
        "attest schema",
        help="Print a JSON Schema (Draft 2020-12) for a statement or predicate.",
        description="Print the JSON Schema called NAME; `--list` names them all.",
        handler=_schema,
    )
    add_options(
        schema,
        option("name", nargs="?", metavar="NAME", help="the schema to print (see --list)"),
        option("--list", action="store_true", help="list the schema names and titles instead"),
        json_option("with --list: print the list as JSON (docs/cli.md)"),
    )


def read_input(path: Path) -> bytes:
    """At most the attestation file limit of `path` (pipes and /dev/stdin too)."""
    from assay.attestation.files import read_file

    return read_file(path)


def _validate(args: argparse.Namespace) -> int:
    strict: bool = args.strict
    reports: list[dict[str, Any]] = []
    for path in args.files:
        reports.append(_validated_file(path, strict=strict))
    code = _validation_code(reports)
    if args.json:
        from assay.attestation import dump_json

        summary = {
            "valid": code == EXIT_OK,
            "strict": strict,
            "signaturesChecked": False,
            "note": SIGNATURE_NOTE,
            "files": reports,
        }
        sys.stdout.write(dump_json(summary, pretty=True).decode() + "\n")
    else:
        _print_reports(reports)
    return code


def _validated_file(path: Path, *, strict: bool) -> dict[str, Any]:
    try:
        documents = _read(path)
    except AttestationError as error:
        # Keep where in the file (a line, a JSON path) beside the reason.
        inside = error.where.removeprefix(str(path)).lstrip(": ")
        reason = f"{inside}: {error.reason}" if inside else error.reason
        return {"file": str(path), "readable": False, "error": reason}
    return _file_report(path, documents, strict=strict)


def _validation_code(reports: list[dict[str, Any]]) -> int:
    """2 if a file is unreadable, else 1 if one is invalid, else 0."""
    if not all(report["readable"] for report in reports):
        return EXIT_UNUSABLE
    return EXIT_OK if all(report["valid"] for report in reports) else EXIT_FAILED


def _failing(document: Document, *, strict: bool) -> bool:
    from assay.attestation.findings import Severity

    return any(strict or f.severity is Severity.ERROR for f in document.findings)


def _file_report(path: Path, documents: list[Document], *, strict: bool) -> dict[str, Any]:
    entries = []
    for document in documents:
        entries.append(
            {
                "location": document.location,
                "kind": document.kind,
                "payloadType": document.payload_type,
                "predicateType": document.predicate_type,
                "valid": not _failing(document, strict=strict),
                "signaturesChecked": document.signatures_checked,
                "findings": [f.to_dict() for f in document.findings],
            }
        )
    return {
        "file": str(path),
        "readable": True,
        "valid": all(entry["valid"] for entry in entries),
        "documents": entries,
    }


_STYLE = {"error": "bold red", "warning": "yellow"}
# A line of output: pieces of text, each with a rich style or None.
Line = list[tuple[str, str | None]]


def _report_lines(report: dict[str, Any]) -> list[Line]:
    name = report["file"]
    if not report["readable"]:
        return [[("unreadable", "bold red"), (f" {name}: {report['error']}", None)]]
    verdict = ("valid", "bold green") if report["valid"] else ("invalid", "bold red")
    lines: list[Line] = [[verdict, (f" {name}", None)]]
    for entry in report["documents"]:
        lines.extend(_document_lines(entry))
    return lines


def _document_lines(entry: dict[str, Any]) -> list[Line]:
    """A document of a file: where it is, its kind and predicate type, and its findings."""
    where = f"{entry['location']}: " if entry["location"] else ""
    what = entry["predicateType"] or "no statement"
    return [
        [(f"  {where}{entry['kind']}, {what}", None)],
        *(
            [
                ("    ", None),
                (finding["severity"], _STYLE[finding["severity"]]),
                (f" {finding['path']}: {finding['message']} ", None),
                (f"[{finding['code']}]", "dim"),
            ]
            for finding in entry["findings"]
        ),
    ]


def _totals(reports: list[dict[str, Any]]) -> str:
    valid = sum(1 for report in reports if report.get("valid"))
    unreadable = sum(1 for report in reports if not report["readable"])
    invalid = len(reports) - valid - unreadable
    return f"{len(reports)} files: {valid} valid, {invalid} invalid, {unreadable} unreadable"


def _print_reports(reports: list[dict[str, Any]]) -> None:
    lines = [line for report in reports for line in _report_lines(report)]
    if len(reports) > 1:
        lines.append([(_totals(reports), None)])
    lines.append([(f"note: {SIGNATURE_NOTE}", "dim")])
    _emit(lines)


def _emit(lines: list[Line]) -> None:
    """Styled through rich on a terminal; plain text (and no rich import, a third of the
    command's start-up) into a pipe or a file."""
    if not sys.stdout.isatty():
        sys.stdout.write(_plain_text(lines))
        return
    from rich.console import Console
    from rich.text import Text

    console = Console(file=sys.stdout, highlight=False, soft_wrap=True)
    for line in lines:
        console.print(Text.assemble(*((text, style or "") for text, style in line)))


def _plain_text(lines: list[Line]) -> str:
    """The lines' text, their styles left out."""
    return "".join("".join(text for text, _ in line) + "\n" for line in lines)


def _read(path: Path) -> list[Document]:
    from assay.attestation.documents import read_documents

    return read_documents(read_input(path), str(path))


def _migrate(args: argparse.Namespace) -> int:
    from assay.attestation.migrate import migrate

    documents = _read(args.file)
    outputs: list[bytes] = []
    reports: list[dict[str, Any]] = []
    for document in documents:
        result = migrate(_statement_of(document, args.file))
        outputs.append(result.statement.to_json(pretty=len(documents) == 1))
        reports.append(_migration_report(document.location, result))
        if not args.json:
            _print_migration_notes(document.location, result)
    text = b"\n".join(outputs) + b"\n"
    if args.out is not None:
        from assay._cli._options import write_output

        write_output(str(args.out), text)
    if args.json:
        _print_migration_json(args, reports)
        return EXIT_OK
    print("note: the migrated statement is unsigned", file=sys.stderr)
    if args.out is None:
        sys.stdout.write(text.decode())
    return EXIT_OK


def _print_migration_json(args: argparse.Namespace, reports: list[dict[str, Any]]) -> None:
    from assay.attestation import dump_json

    report = {
        "file": str(args.file),
        "out": None if args.out is None else str(args.out),
        "signed": False,
        "documents": reports,
    }
    sys.stdout.write(dump_json(report, pretty=True).decode() + "\n")


def _statement_of(document: Document, file: Path) -> Any:
    if document.statement is None:
        where = f"{file} {document.location}".strip()
        reason = document.findings[0].message if document.findings else "no statement"
        raise AttestationError(where, reason)
    return document.statement


def _migration_report(location: str, result: Migration) -> dict[str, Any]:
    return {
        "location": location,
        "sourcePredicateType": result.source_predicate_type,
        "losses": [loss.to_dict() for loss in result.losses],
        "notes": [note.to_dict() for note in result.notes],
        "statement": result.statement.to_dict(),
    }


def _print_migration_notes(location: str, result: Migration) -> None:
    prefix = f"{location}: " if location else ""
    for loss in result.losses:
        print(f"{prefix}not carried over: {loss.path}: {loss.reason}", file=sys.stderr)
    for note in result.notes:
        print(f"{prefix}note: {note.path}: {note.message}", file=sys.stderr)


def _schema(args: argparse.Namespace) -> int:
    from assay.attestation import dump_json
    from assay.attestation.schema import json_schema

    if args.list == (args.name is not None):
        raise InputError("NAME", "expected a schema name or --list, not both or neither")
    if args.json and not args.list:
        raise InputError("--json", "applies to --list (a schema is JSON already)")
    if args.list:
        _list_schemas(as_json=args.json)
    else:
        sys.stdout.write(dump_json(json_schema(args.name), pretty=True).decode() + "\n")
    return EXIT_OK


def _list_schemas(*, as_json: bool) -> None:
    from assay.attestation import dump_json
    from assay.attestation.schema import SCHEMA_NAMES, json_schema

    listing = [
        {"name": name, "id": schema["$id"], "title": schema["title"]}
        for name in SCHEMA_NAMES
        for schema in (json_schema(name),)
    ]
    if as_json:
        sys.stdout.write(dump_json({"schemas": listing}, pretty=True).decode() + "\n")
    else:
        _print_listing(listing)


def _print_listing(listing: list[dict[str, Any]]) -> None:
    width = max(len(entry["name"]) for entry in listing)
    for entry in listing:
        print(f"{entry['name']:<{width}}  {entry['title']}")
