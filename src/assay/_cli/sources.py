"""`assay cve ...`, `assay kev ...`, `assay epss ...`: vulnerability data beyond NVD.

CVE JSON 5 records (cvelistV5, CISA's Vulnrichment), CISA's KEV catalogue and FIRST's
EPSS scores, imported from files or mirrored from their publishers into the store.
Exit 0 when everything was stored, 1 when records were rejected (each named by file and
JSON path), 2 when the input or the store could not be used.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay._cli import EXIT_FAILED, EXIT_OK, EXIT_UNUSABLE, CommandTree
from assay.config import STORE_ENV, default_store_url
from assay.cve5 import DEFAULT_CVELIST_URL, DEFAULT_EPSS_URL, DEFAULT_KEV_URL

if TYPE_CHECKING:
    from rich.console import Console

    from assay.cve5.importer import Cve5ImportReport
    from assay.nvd.storage.cve5 import Cve5Store

STORE_HELP = f"store URL (default: ${STORE_ENV} or a SQLite file in the user data directory)"
JSON_HELP = "print the summary as JSON on stdout (docs/cli.md); progress stays on stderr"
MAX_KEV_FILE = 64 * 1024 * 1024
MAX_EPSS_FILE = 256 * 1024 * 1024


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--store", default=None, help=STORE_HELP)
    parser.add_argument("--json", action="store_true", help=JSON_HELP)


def register(tree: CommandTree) -> None:
    cve = tree.group("cve", help="CVE JSON 5 records (cvelistV5, CISA Vulnrichment).")
    parser = cve.add_parser(
        "import",
        help="Import CVE JSON 5 records: files, folders and zip archives.",
        description="Import CVE JSON 5.x records: record files, folders (a cvelistV5 "
        "checkout, a Vulnrichment checkout, any part of one) and zip archives (cvelistV5's "
        "release zips, a zip inside a zip included). Every .json file that is a CVE record "
        "is stored with its CNA and ADP containers; other files are skipped and counted. "
        "A record replaces a stored one only when its dateUpdated is later. Exit 0 when "
        "everything was stored, 1 when some records were rejected, 2 when nothing could "
        "be read.",
    )
    parser.add_argument(
        "paths",
        nargs="+",
        type=Path,
        metavar="PATH",
        help="record files, folders and zip archives to import",
    )
    _common(parser)
    parser.set_defaults(handler=cve_import)
    parser = cve.add_parser(
        "sync",
        help="Mirror cvelistV5's release archives (a baseline, then the deltas).",
        description="Mirror cvelistV5's release archives into the store: the first run "
        "loads the newest daily baseline (..._all_CVEs_at_midnight.zip.zip), every run "
        "then loads each day's newest delta it has not loaded. The checkpoint is kept in "
        "the store (meta sync.cve5) with the records: a stopped run resumes.",
    )
    parser.add_argument(
        "--upstream",
        default=DEFAULT_CVELIST_URL,
        help=f"where the releases are downloaded from (default: {DEFAULT_CVELIST_URL})",
    )
    _common(parser)
    parser.set_defaults(handler=cve_sync)

    kev = tree.group("kev", help="CISA's Known Exploited Vulnerabilities catalogue.")
    parser = kev.add_parser(
        "import",
        help="Import the KEV catalogue (JSON).",
        description="Make the KEV catalogue in FILE (CISA's JSON feed) the store's: "
        "entries are added and updated, entries no longer in it removed.",
    )
    parser.add_argument("file", type=Path, metavar="FILE", help="the catalogue (JSON)")
    _common(parser)
    parser.set_defaults(handler=kev_import)
    parser = kev.add_parser(
        "sync",
        help="Download the KEV catalogue into the store.",
        description="Download CISA's KEV catalogue and make it the store's, as kev import does.",
    )
    parser.add_argument(
        "--upstream",
        default=DEFAULT_KEV_URL,
        help=f"the catalogue's URL (default: {DEFAULT_KEV_URL})",
    )
    _common(parser)
    parser.set_defaults(handler=kev_sync)

    epss = tree.group("epss", help="FIRST's Exploit Prediction Scoring System scores.")
    parser = epss.add_parser(
        "import",
        help="Import FIRST's daily EPSS CSV (.gz or plain).",
        description="Store the scores of FIRST's daily EPSS CSV (with its "
        "#model_version:...,score_date:... line), gzip-compressed or plain. A score "
        "replaces a stored one of an earlier day.",
    )
    parser.add_argument("file", type=Path, metavar="FILE", help="the scores (CSV, .gz or plain)")
    _common(parser)
    parser.set_defaults(handler=epss_import)
    parser = epss.add_parser(
        "sync",
        help="Download the current EPSS scores into the store.",
        description="Download FIRST's current EPSS CSV and store it, as epss import does.",
    )
    parser.add_argument(
        "--upstream", default=DEFAULT_EPSS_URL, help=f"the CSV's URL (default: {DEFAULT_EPSS_URL})"
    )
    _common(parser)
    parser.set_defaults(handler=epss_sync)


def _console() -> Console:
    from rich.console import Console

    return Console(stderr=True, soft_wrap=True)


def _store(args: argparse.Namespace) -> Cve5Store:
    from assay.nvd.storage import open_store
    from assay.nvd.storage.cve5 import cve5_store

    return cve5_store(open_store(args.store or default_store_url()))


def _print(args: argparse.Namespace, document: dict[str, Any], console: Console, text: str) -> None:
    if args.json:
        sys.stdout.write(json.dumps(document, indent=2) + "\n")
    else:
        console.print(text, highlight=False)


def _import_outcome(report: Cve5ImportReport) -> int:
    if report.files and report.failed_files == report.files:
        return EXIT_UNUSABLE
    return EXIT_OK if report.ok else EXIT_FAILED


def _import_text(report: Cve5ImportReport) -> str:
    return (
        f"CVE 5 records: {report.added} added, {report.updated} updated, "
        f"{report.unchanged} unchanged; {report.rejected} rejected, {report.skipped} "
        f"other file(s) skipped"
    )


def cve_import(args: argparse.Namespace) -> int:
    from assay._cli.progress import record_progress
    from assay.cve5.importer import Cve5Importer

    console = _console()
    store = _store(args)
    try:
        with (
            record_progress(console) as (on_record, on_problem),
            Cve5Importer(store, on_problem=on_problem, on_record=on_record) as importer,
        ):
            for path in args.paths:
                importer.import_path(path)
    finally:
        store.close()
    report = importer.report
    _print(args, report.to_dict(), console, _import_text(report))
    return _import_outcome(report)


def cve_sync(args: argparse.Namespace) -> int:
    from rich.markup import escape

    from assay.cve5.sync import CHECKPOINT, sync_cvelist

    console = _console()
    store = _store(args)
    try:
        with store.exclusive(CHECKPOINT):
            report = sync_cvelist(
                store,
                args.upstream,
                on_archive=lambda name: (
                    console.print(f"loading {escape(name)}", highlight=False)
                    if console.is_terminal
                    else None
                ),
                on_problem=lambda text: console.print(
                    f"[red]rejected[/red] {escape(text)}", highlight=False
                ),
            )
    finally:
        store.close()
    _print(
        args,
        report.to_dict(),
        console,
        f"{len(report.archives)} archive(s) loaded; {_import_text(report.imported)}",
    )
    return _import_outcome(report.imported)


def _read(path: Path, limit: int) -> bytes | None:
    from assay._bounded import read_bounded
    from assay.errors import InputError

    try:
        return read_bounded(path, limit)
    except InputError as error:
        print(f"assay: error: {error.diagnostics()}", file=sys.stderr)
        return None


def _store_kev(args: argparse.Namespace, data: bytes, source: str) -> int:
    from assay.cve5.kev import KevError, read_catalogue

    try:
        catalogue = read_catalogue(data, source)
    except KevError as error:
        print(f"assay: error: {error.diagnostics()}", file=sys.stderr)
        return EXIT_UNUSABLE
    store = _store(args)
    try:
        counts, removed = store.replace_kev(
            catalogue, meta={"kev.catalogVersion": catalogue.version}
        )
    finally:
        store.close()
    document = {
        "ok": True,
        "catalogVersion": catalogue.version,
        "entries": len(catalogue.entries),
        "added": counts.added,
        "updated": counts.updated,
        "unchanged": counts.unchanged,
        "removed": removed,
    }
    _print(
        args,
        document,
        _console(),
        f"KEV catalogue {catalogue.version}: {counts.added} added, {counts.updated} updated, "
        f"{counts.unchanged} unchanged, {removed} removed",
    )
    return EXIT_OK


def kev_import(args: argparse.Namespace) -> int:
    data = _read(args.file, MAX_KEV_FILE)
    return EXIT_UNUSABLE if data is None else _store_kev(args, data, str(args.file))


def kev_sync(args: argparse.Namespace) -> int:
    from assay.cve5.sync import fetch_bytes

    return _store_kev(args, fetch_bytes(args.upstream, MAX_KEV_FILE), args.upstream)


def _store_epss(args: argparse.Namespace, data: bytes, source: str) -> int:
    from assay.cve5.epss import EpssError, read_scores

    try:
        scores = read_scores(data, source)
    except EpssError as error:
        print(f"assay: error: {error.diagnostics()}", file=sys.stderr)
        return EXIT_UNUSABLE
    store = _store(args)
    try:
        counts = store.upsert_epss(
            scores,
            meta={"epss.scoreDate": scores.score_date, "epss.modelVersion": scores.model_version},
        )
    finally:
        store.close()
    document = {
        "ok": True,
        "modelVersion": scores.model_version,
        "scoreDate": scores.score_date,
        "scores": len(scores.scores),
        "added": counts.added,
        "updated": counts.updated,
        "unchanged": counts.unchanged,
    }
    _print(
        args,
        document,
        _console(),
        f"EPSS {scores.score_date} ({scores.model_version}): {counts.added} added, "
        f"{counts.updated} updated, {counts.unchanged} unchanged",
    )
    return EXIT_OK


def epss_import(args: argparse.Namespace) -> int:
    data = _read(args.file, MAX_EPSS_FILE)
    return EXIT_UNUSABLE if data is None else _store_epss(args, data, str(args.file))


def epss_sync(args: argparse.Namespace) -> int:
    from assay.cve5.sync import fetch_bytes

    return _store_epss(args, fetch_bytes(args.upstream, MAX_EPSS_FILE), args.upstream)
