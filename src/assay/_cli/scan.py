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
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from assay._cli import EXIT_FAILED, EXIT_OK, CommandTree, add_list_option
from assay.config import STORE_ENV, default_store_url
from assay.errors import InputError

if TYPE_CHECKING:
    from collections.abc import Iterator

    from assay.audit.model import Inventory, ScanResult, SourceStatus
    from assay.audit.rules import Verdict

FORMATS: Final = ("table", "json", "sarif", "cyclonedx", "openvex", "cosign-vuln")
DEFAULT_MAX_AGE_DAYS: Final = 7.0
PROGRESS_FROM: Final = 500
MAX_INPUTS: Final = 1000


def register(tree: CommandTree) -> None:
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
    parser.add_argument("inputs", nargs="*", metavar="INPUT", help="file to scan ('-': stdin)")
    add_list_option(
        parser, "--purl", default=[], metavar="PURL", help="packages to scan (package URLs)"
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--store",
        metavar="URL",
        help=f"store URL (default: ${STORE_ENV} or a SQLite file in the user data directory)",
    )
    where.add_argument(
        "--nvd-url",
        metavar="URL",
        help="an NVD API 2.0 base URL instead of a store (NVD itself or an assay server)",
    )
    parser.add_argument("--api-key", metavar="KEY", help="API key for --nvd-url")
    parser.add_argument(
        "--format",
        choices=FORMATS,
        help="output format (default: table on a terminal, json otherwise)",
    )
    add_list_option(
        parser,
        "--fail-on",
        default=[],
        metavar="RULE",
        help="severity>=LEVEL, cvss>=SCORE, kev, epss>=PROBABILITY or source=NAME (nvd, osv, "
        "cve5, cisa-adp); ',' joins conditions; several: any of them",
    )
    parser.add_argument(
        "--fail-on-conditional",
        action="store_true",
        help="let conditional findings (that hold only on a platform the input does not list) "
        "fail the scan too; by default they are reported and counted apart",
    )
    parser.add_argument("--ignore", metavar="FILE", help="ignore file (YAML or JSON)")
    parser.add_argument(
        "--sources",
        metavar="LIST",
        help="vulnerability sources to read, comma-separated: nvd, osv, cve5 (CVE 5 records "
        "of CVEs NVD has not analysed: the CNA's and CISA-ADP's) "
        "(default: every one the store holds)",
    )
    parser.add_argument(
        "--min-confidence",
        type=float,
        default=0.0,
        metavar="X",
        help="leave components identified with a lower confidence (0-1) unidentified",
    )
    parser.add_argument(
        "--max-age",
        type=float,
        default=DEFAULT_MAX_AGE_DAYS,
        metavar="DAYS",
        help=f"warn when the store's last sync is older (default {DEFAULT_MAX_AGE_DAYS:g} days)",
    )
    parser.add_argument("--out", metavar="FILE", help="write the output here, not to stdout")
    from assay._cli.scan_vex import add_attest_options, add_vex_options

    add_vex_options(parser)
    add_attest_options(parser)


def _read(path: str, limit: int) -> bytes:
    if path == "-":
        data = sys.stdin.buffer.read(limit + 1)
        if len(data) > limit:
            raise InputError("standard input", f"expected at most {limit} bytes")
        return data
    from assay._cli.attest_signing import read_limited

    return read_limited(path, limit)


def _inventories(args: argparse.Namespace) -> list[Inventory]:
    from assay.audit.inputs import MAX_INPUT_BYTES, read_input
    from assay.audit.inputs.purls import purl_inventory

    if not args.inputs and not args.purl:
        raise InputError("assay scan", "nothing to scan: name INPUT files or give --purl")
    if len(args.inputs) > MAX_INPUTS:
        raise InputError("assay scan", f"expected at most {MAX_INPUTS} inputs")
    inventories = [
        read_input(_read(path, MAX_INPUT_BYTES), "standard input" if path == "-" else path)
        for path in args.inputs
    ]
    if args.purl:
        inventories.append(purl_inventory(args.purl))
    return inventories


def _age_days(status: SourceStatus) -> float | None:
    if not status.last_sync:
        return None
    try:
        moment = datetime.fromisoformat(status.last_sync.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return (datetime.now(UTC) - moment).total_seconds() / 86400


def _scan(args: argparse.Namespace) -> int:
    from assay.audit.rules import evaluate, parse_fail_on, parse_ignore_file

    if not 0.0 <= args.min_confidence <= 1.0:
        raise InputError("--min-confidence", f"expected 0 to 1, found {args.min_confidence}")
    if args.api_key and not args.nvd_url:
        raise InputError("--api-key", "only applies with --nvd-url")
    rules = [parse_fail_on(text) for text in args.fail_on]
    ignores = parse_ignore_file(_read(args.ignore, 1024 * 1024), args.ignore) if args.ignore else ()
    inventories = _inventories(args)
    source = _source(args)
    started = datetime.now(UTC)
    try:
        result = _run(inventories, source, args)
        described = _described(args, result, source)
    finally:
        source.close()
    finished = datetime.now(UTC)
    from assay._cli.scan_vex import apply_command_line_vex, write_vex_and_attestations

    applied = apply_command_line_vex(args, result, inventories)
    result = applied.result if applied is not None else result
    verdict = evaluate(
        result,
        rules,
        ignores,
        today=datetime.now(UTC).date(),
        count_conditional=args.fail_on_conditional,
    )
    for entry in verdict.expired:
        print(
            f"assay scan: ignore entry {entry.where} for {entry.id} expired on "
            f"{entry.expires.isoformat()}: it no longer applies",
            file=sys.stderr,
        )
    if not write_vex_and_attestations(args, result, verdict, inventories, (started, finished)):
        _write(args, result, verdict, inventories, described)
    return EXIT_OK if verdict.passed else EXIT_FAILED


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


def _run(inventories: list[Inventory], source: Any, args: argparse.Namespace) -> ScanResult:
    from assay.audit.scan import SOURCES, available_sources, scan

    status = source.status()
    sources = _sources(args.sources, SOURCES)
    if not available_sources(source, status):
        raise InputError(
            status.url or "store",
            "the vulnerability store holds no CVEs and no OSV records: load it with "
            "`assay nvd import`, `assay nvd sync`, `assay osv import` or `assay osv sync` first",
        )
    age = _age_days(status)
    if age is not None and age > args.max_age:
        print(
            f"assay scan: the store was last synced {age:.1f} days ago ({status.last_sync}), "
            f"more than --max-age {args.max_age:g}: run `assay nvd sync`",
            file=sys.stderr,
        )
    elif age is None and not args.nvd_url:
        print(
            "assay scan: the store has never completed a sync (imported data only): its age "
            "is unknown",
            file=sys.stderr,
        )
    total = sum(len(i.components) for i in inventories)
    if total >= PROGRESS_FROM and sys.stderr.isatty():
        from rich.progress import Progress

        with Progress(transient=True) as bar:
            task = bar.add_task("scanning", total=total)
            return scan(
                inventories,
                source,
                min_confidence=args.min_confidence,
                progress=lambda done, steps: bar.update(task, completed=done, total=steps),
                sources=sources,
            )
    return scan(inventories, source, min_confidence=args.min_confidence, sources=sources)


def _sources(text: str | None, known: tuple[str, ...]) -> tuple[str, ...] | None:
    """`--sources nvd,osv` as names (None: every source the store holds)."""
    if text is None:
        return None
    names = tuple(dict.fromkeys(name.strip().lower() for name in text.split(",") if name.strip()))
    for name in names:
        if name not in known:
            raise InputError("--sources", f"expected some of {', '.join(known)}, found {name!r}")
    if not names:
        raise InputError("--sources", f"expected some of {', '.join(known)}, found nothing")
    return names


def _write(
    args: argparse.Namespace,
    result: ScanResult,
    verdict: Verdict,
    inventories: list[Inventory],
    described: dict[str, str] | None = None,
) -> None:
    import orjson

    fmt = args.format or ("table" if args.out is None and sys.stdout.isatty() else "json")
    if fmt == "json":
        from assay.audit.json_stream import json_chunks

        _stream(args.out, json_chunks(result, verdict))
        return
    if fmt == "table":
        text = _table(result, verdict)
        if args.out is None:
            sys.stdout.write(text)
            return
        data = text.encode()
    else:
        from assay import __version__
        from assay.audit.formats import to_sarif, to_vdr

        document: dict[str, Any]
        if fmt == "sarif":
            document = to_sarif(result, verdict, version=__version__, descriptions=described)
        else:
            document = to_vdr(result, inventories)
        data = orjson.dumps(document, option=orjson.OPT_INDENT_2) + b"\n"
    if args.out is None:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
    else:
        try:
            Path(args.out).write_bytes(data)
        except OSError as error:
            raise InputError(args.out, f"cannot write: {error.strerror}") from None


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


def _table(result: ScanResult, verdict: Verdict) -> str:
    from io import StringIO

    from rich.console import Console
    from rich.table import Table

    ignored = {(f.component.component.ref, f.vulnerability.id) for f in verdict.ignored}
    failing = {(f.component.component.ref, f.vulnerability.id) for f in verdict.failing}
    table = Table(show_edge=False)
    for column in (
        "component", "version", "CVE", "severity", "CVSS", "KEV", "EPSS", "fixed in", "note"
    ):  # fmt: skip
        table.add_column(column)
    affected = conditional = 0
    for component, vulnerability in result.findings:
        key = (component.component.ref, vulnerability.id)
        notes = []
        if vulnerability.conditional:
            notes.append("conditional")
            conditional += 1
        else:
            affected += 1
        if key in ignored:
            notes.append("ignored")
        if vulnerability.vex is not None:
            notes.append(f"VEX {vulnerability.vex.status}")
        if key in failing:
            notes.append("FAILS")
        notes.extend(f"via {name}" for name in vulnerability.source_names if name != "nvd")
        cvss = vulnerability.cvss
        table.add_row(
            component.component.name,
            component.component.version or "",
            vulnerability.id,
            vulnerability.severity or "",
            f"{cvss.base_score:.1f} (v{cvss.version})" if cvss else "",
            "yes" if vulnerability.kev else "",
            "" if vulnerability.epss is None else f"{vulnerability.epss.score:.3f}",
            vulnerability.fixed_in or "",
            ", ".join(notes),
        )
    buffer = StringIO()
    console = Console(file=buffer, width=200, no_color=True)
    if result.findings:
        console.print(table)
    store = result.store
    console.print(
        f"{len(result.components)} components identified, {len(result.unidentified)} "
        f"unidentified; {affected} findings, {conditional} conditional, "
        f"{len(verdict.ignored)} ignored, {len(verdict.suppressed)} not affected or fixed "
        f"(VEX), {len(verdict.failing)} failing"
        + (f" (--fail-on {', '.join(r.text for r in verdict.rules)})" if verdict.rules else "")
        + (
            f", {len(verdict.conditional_not_counted)} conditional meeting it not counted "
            "(--fail-on-conditional counts them)"
            if verdict.conditional_not_counted
            else ""
        )
        + f"; store generation {store.generation}, last sync {store.last_sync or 'never'}"
    )
    for item in result.inputs:
        for note in item.notes:
            console.print(f"{item.source}: {note}")
    return buffer.getvalue()
