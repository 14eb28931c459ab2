"""`assay scan`: what went into a build, checked against the vulnerability store.

The library decides (`assay.audit.scan`, `assay.audit.rules.evaluate`); this module reads
files, picks the source, prints the result in the asked format and returns the exit
code of the verdict: 0 passed, 1 a non-ignored finding meets a `--fail-on` rule, 2 the
input (or the store) was unusable.
"""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from assay._cli import EXIT_FAILED, EXIT_OK, CommandTree
from assay._cli._options import STORE_HELP, add_options, exclusive, list_option, option
from assay.config import default_store_url
from assay.errors import InputError

if TYPE_CHECKING:
    from collections.abc import Iterator

    from rich.table import Table

    from assay.audit.model import ComponentResult, Inventory, ScanResult, Vulnerability
    from assay.audit.request import NamedData, ScanRequest
    from assay.audit.rules import Verdict
    from assay.audit.run import ScanOutcome

FORMATS: Final = ("table", "json", "sarif", "cyclonedx", "openvex", "cosign-vuln")
DEFAULT_MAX_AGE_DAYS: Final = 7.0  # assay.audit.request.DEFAULT_MAX_AGE_DAYS (not imported: help)
PROGRESS_FROM: Final = 500


def register(tree: CommandTree) -> None:
    from assay._cli.scan_vex import add_attest_options, add_vex_options

    parser = tree.command(
        "scan",
        help="Check SBOMs, lock files, attestations or purls against the vulnerability store.",
        handler=_scan,
    )
    parser.description = (
        "Identify every component of the inputs (CycloneDX JSON/XML, SPDX 2.3 JSON or "
        "tag-value, SPDX 3.0 JSON-LD, in-toto statements / DSSE envelopes / Sigstore bundles "
        "of those or of SLSA provenance, requirements.txt, poetry.lock, uv.lock, "
        "package-lock.json; '-' reads standard input) as CPE names and list the CVEs that "
        "affect them, with NVD's matching rules, and match their purls against the OSV "
        "records the store holds (one finding per vulnerability, named by its CVE). Exit 0 when no non-ignored finding meets a "
        "--fail-on rule, 1 when one does, 2 when an input or the store is unusable. "
        "docs/scan.md describes identification, output shapes and file formats."
    )
    add_options(
        parser,
        option("inputs", nargs="*", metavar="INPUT", help="file to scan ('-': stdin)"),
        list_option("--purl", default=[], metavar="PURL", help="packages to scan (package URLs)"),
        exclusive(
            option("--store", metavar="URL", help=STORE_HELP),
            option(
                "--nvd-url",
                metavar="URL",
                help="an NVD API 2.0 base URL instead of a store (NVD itself or an assay server)",
            ),
        ),
        option("--api-key", metavar="KEY", help="API key for --nvd-url"),
        option(
            "--format",
            choices=FORMATS,
            help="output format (default: table on a terminal, json otherwise)",
        ),
        list_option(
            "--fail-on",
            default=[],
            metavar="RULE",
            help="severity>=LEVEL, cvss>=SCORE, kev, epss>=PROBABILITY or source=NAME (nvd, osv, "
            "cve5, cisa-adp); ',' joins conditions; several: any of them",
        ),
        option(
            "--fail-on-conditional",
            action="store_true",
            help="let conditional findings (that hold only on a platform the input does not "
            "list) fail the scan too; by default they are reported and counted apart",
        ),
        option("--ignore", metavar="FILE", help="ignore file (YAML or JSON)"),
        option(
            "--sources",
            metavar="LIST",
            help="vulnerability sources to read, comma-separated: nvd, osv, cve5 (CVE 5 records "
            "of CVEs NVD has not analysed: the CNA's and CISA-ADP's) "
            "(default: every one the store holds)",
        ),
        option(
            "--min-confidence",
            default="0",
            metavar="X",
            help="leave components identified with a lower confidence (0-1) unidentified",
        ),
        option(
            "--max-age",
            default=str(DEFAULT_MAX_AGE_DAYS),
            metavar="DAYS",
            help=f"warn when the store's last sync is older (default {DEFAULT_MAX_AGE_DAYS:g} days)",
        ),
        option("--out", metavar="FILE", help="write the output here, not to stdout"),
    )
    add_vex_options(parser)
    add_attest_options(parser)


FLAGS: Final = {
    "inputs": "INPUT",
    "purls": "--purl",
    "minConfidence": "--min-confidence",
    "sources": "--sources",
    "failOn": "--fail-on",
    "failOnConditional": "--fail-on-conditional",
    "ignore": "--ignore",
    "vex": "--vex",
    "maxAge": "--max-age",
}
"""The request's fields (`assay.audit.request.FIELDS`) as this command spells them."""


def _read(path: str, limit: int) -> bytes:
    if path == "-":
        data = sys.stdin.buffer.read(limit + 1)
        if len(data) > limit:
            raise InputError("standard input", f"expected at most {limit} bytes")
        return data
    from assay._cli.attest_signing import read_limited

    return read_limited(path, limit)


def _file(path: str, limit: int) -> NamedData:
    """A file named on the command line, read when the scan comes to it."""
    from assay.audit.request import NamedData

    return NamedData("standard input" if path == "-" else path, partial(_read, path, limit))


def scan_request(args: argparse.Namespace) -> ScanRequest:
    """The scan request the arguments make (`assay.audit.request`'s rules, its errors
    naming this command's flags)."""
    from assay.audit.inputs import MAX_INPUT_BYTES
    from assay.audit.request import RequestFieldError, ScanFields, parse_scan_request
    from assay.policy.vulnerabilities import MAX_IGNORE_BYTES
    from assay.vex import MAX_VEX_BYTES

    fields = ScanFields(
        inputs=[_file(path, MAX_INPUT_BYTES) for path in args.inputs],
        purls=[(text, f"--purl {text}") for text in args.purl],
        purl_source="--purl",
        min_confidence=args.min_confidence,
        sources=args.sources,
        fail_on=args.fail_on,
        fail_on_conditional=args.fail_on_conditional,
        ignore=_file(args.ignore, MAX_IGNORE_BYTES) if args.ignore else None,
        vex=[_file(path, MAX_VEX_BYTES) for path in args.vex],
        max_age=args.max_age,
    )
    try:
        return parse_scan_request(fields)
    except RequestFieldError as error:
        raise InputError(FLAGS.get(error.field, error.field), error.reason) from None


def _scan(args: argparse.Namespace) -> int:
    from assay._cli.scan_vex import command_line_trust, write_vex_and_attestations

    if args.api_key and not args.nvd_url:
        raise InputError("--api-key", "only applies with --nvd-url")
    request = scan_request(args)
    trust = command_line_trust(args)
    source = _source(args)
    started = datetime.now(UTC)
    try:
        outcome = _run(request, source, trust)
        described = _described(args, outcome.result, source)
    finally:
        source.close()
    finished = datetime.now(UTC)
    _warn(outcome)
    result, verdict, inventories = outcome.result, outcome.verdict, list(outcome.inventories)
    if not write_vex_and_attestations(args, result, verdict, inventories, (started, finished)):
        _write(args, result, verdict, inventories, described)
    return EXIT_OK if verdict.passed else EXIT_FAILED


def _warn(outcome: ScanOutcome) -> None:
    for warning in outcome.warnings:
        print(f"assay scan: {warning}", file=sys.stderr)
    for entry in outcome.verdict.expired:
        print(
            f"assay scan: ignore entry {entry.where} for {entry.id} expired on "
            f"{entry.expires.isoformat()}: it no longer applies",
            file=sys.stderr,
        )


def _described(args: argparse.Namespace, result: ScanResult, source: Any) -> dict[str, str]:
    """The descriptions SARIF's rules carry (read only for SARIF)."""
    if args.format != "sarif":
        return {}
    from assay.audit.cve5_match import describe

    return describe(source, [v.id for _, v in result.findings])


def _source(args: argparse.Namespace) -> Any:
    if args.nvd_url:
        from assay.audit.api_source import ApiSource

        return ApiSource(args.nvd_url, api_key=args.api_key)
    from assay.audit.store_source import open_store_source

    return open_store_source(args.store or default_store_url())


class _Bar:
    """A progress bar on a terminal, shown once a scan has `PROGRESS_FROM` steps."""

    def __init__(self) -> None:
        self._bar: Any = None
        self._task: Any = None

    def __call__(self, done: int, steps: int) -> None:
        if self._bar is None:
            if steps < PROGRESS_FROM or not sys.stderr.isatty():
                return
            from rich.progress import Progress

            self._bar = Progress(transient=True)
            self._bar.start()
            self._task = self._bar.add_task("scanning", total=steps)
        self._bar.update(self._task, completed=done, total=steps)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()


def _run(request: ScanRequest, source: Any, trust: Any) -> ScanOutcome:
    from assay.audit.run import run_scan

    bar = _Bar()
    try:
        return run_scan(request, source, vex_trust=trust, progress=bar)
    finally:
        bar.close()


def _write(
    args: argparse.Namespace,
    result: ScanResult,
    verdict: Verdict,
    inventories: list[Inventory],
    described: dict[str, str] | None = None,
) -> None:
    fmt = _output_format(args)
    if fmt == "json":
        from assay.audit.json_stream import json_chunks

        _stream(args.out, json_chunks(result, verdict))
    elif fmt == "table" and args.out is None:
        sys.stdout.write(_table(result, verdict))
    else:
        _write_file(args.out, _document_bytes(fmt, result, verdict, inventories, described))


def _output_format(args: argparse.Namespace) -> str:
    """--format, else a table for a terminal and JSON for a pipe or --out."""
    if args.format:
        return str(args.format)
    return "table" if args.out is None and sys.stdout.isatty() else "json"


def _document_bytes(
    fmt: str,
    result: ScanResult,
    verdict: Verdict,
    inventories: list[Inventory],
    described: dict[str, str] | None,
) -> bytes:
    """The table, SARIF log or VDR (CycloneDX) of the scan, as written to a file."""
    import orjson

    from assay import __version__
    from assay.audit.formats import to_sarif, to_vdr

    if fmt == "table":
        return _table(result, verdict).encode()
    document: dict[str, Any]
    if fmt == "sarif":
        document = to_sarif(result, verdict, version=__version__, descriptions=described)
    else:
        document = to_vdr(result, inventories)
    return orjson.dumps(document, option=orjson.OPT_INDENT_2) + b"\n"


def _write_file(out: str | None, data: bytes) -> None:
    """`data` to the file `out` (an unwritable one names it), or to standard output."""
    if out is None:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return
    try:
        Path(out).write_bytes(data)
    except OSError as error:
        raise InputError(out, f"cannot write: {error.strerror}") from None


def _stream(out: str | None, chunks: Iterator[bytes]) -> None:
    """Write `chunks` to standard output or to the file `out`, as they come (joined
    into blocks of about a MiB: fewer, larger writes)."""
    if out is None:
        target = sys.stdout.buffer
        target.writelines(_blocks(chunks))
        target.flush()
        return
    try:
        with Path(out).open("wb") as handle:
            handle.writelines(_blocks(chunks))
    except OSError as error:
        raise InputError(out, f"cannot write: {error.strerror}") from None


def _blocks(chunks: Iterator[bytes], size: int = 1 << 20) -> Iterator[bytes]:
    pending: list[bytes] = []
    length = 0
    for chunk in chunks:
        pending.append(chunk)
        length += len(chunk)
        if length >= size:
            yield b"".join(pending)
            pending, length = [], 0
    if pending:
        yield b"".join(pending)


_COLUMNS: Final = (
    "component", "version", "CVE", "severity", "CVSS", "KEV", "EPSS", "fixed in", "note"
)  # fmt: skip


def _notes(vulnerability: Vulnerability, ignored: bool, failing: bool) -> str:
    notes = ["conditional"] if vulnerability.conditional else []
    notes += ["ignored"] if ignored else []
    notes += [f"VEX {vulnerability.vex.status}"] if vulnerability.vex is not None else []
    notes += ["FAILS"] if failing else []
    notes.extend(f"via {name}" for name in vulnerability.source_names if name != "nvd")
    return ", ".join(notes)


def _row(component: ComponentResult, vulnerability: Vulnerability, notes: str) -> list[str]:
    cvss, epss = vulnerability.cvss, vulnerability.epss
    return [
        component.component.name,
        component.component.version or "",
        vulnerability.id,
        vulnerability.severity or "",
        f"{cvss.base_score:.1f} (v{cvss.version})" if cvss else "",
        "yes" if vulnerability.kev else "",
        "" if epss is None else f"{epss.score:.3f}",
        vulnerability.fixed_in or "",
        notes,
    ]


def _summary(result: ScanResult, verdict: Verdict) -> str:
    conditional = sum(1 for _, v in result.findings if v.conditional)
    affected = len(result.findings) - conditional
    store = result.store
    return (
        f"{len(result.components)} components identified, {len(result.unidentified)} "
        f"unidentified; {affected} findings, {conditional} conditional, "
        f"{len(verdict.ignored)} ignored, {len(verdict.suppressed)} not affected or fixed "
        f"(VEX), {len(verdict.failing)} failing{_rules_note(verdict)}"
        f"; store generation {store.generation}, last sync {store.last_sync or 'never'}"
    )


def _rules_note(verdict: Verdict) -> str:
    """The --fail-on rules the verdict applied, and the conditional findings it did not
    count."""
    rules = f" (--fail-on {', '.join(r.text for r in verdict.rules)})" if verdict.rules else ""
    if not verdict.conditional_not_counted:
        return rules
    return (
        f"{rules}, {len(verdict.conditional_not_counted)} conditional meeting it not counted "
        "(--fail-on-conditional counts them)"
    )


def _findings_table(result: ScanResult, verdict: Verdict) -> Table:
    from rich.table import Table

    ignored = {(f.component.component.ref, f.vulnerability.id) for f in verdict.ignored}
    failing = {(f.component.component.ref, f.vulnerability.id) for f in verdict.failing}
    table = Table(show_edge=False)
    for column in _COLUMNS:
        table.add_column(column)
    for component, vulnerability in result.findings:
        key = (component.component.ref, vulnerability.id)
        notes = _notes(vulnerability, key in ignored, key in failing)
        table.add_row(*_row(component, vulnerability, notes))
    return table


def _table(result: ScanResult, verdict: Verdict) -> str:
    from io import StringIO

    from rich.console import Console

    buffer = StringIO()
    console = Console(file=buffer, width=200, no_color=True)
    if result.findings:
        console.print(_findings_table(result, verdict))
    console.print(_summary(result, verdict))
    for item in result.inputs:
        for note in item.notes:
            console.print(f"{item.source}: {note}")
    return buffer.getvalue()
