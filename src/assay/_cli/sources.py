"""`assay cve ...`, `assay kev ...`, `assay epss ...`: vulnerability data beyond NVD.

CVE JSON 5 records (cvelistV5, CISA's Vulnrichment), CISA's KEV catalogue and FIRST's
EPSS scores, imported from files or mirrored from their publishers into the store.
Exit 0 when everything was stored, 1 when records were rejected (each named by file and
JSON path), 2 when the input or the store could not be used.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from assay._cli import EXIT_FAILED, EXIT_OK, EXIT_UNUSABLE, CommandTree, add_command
from assay._cli._options import JSON_SUMMARY, STORE, add_options, named_store, print_json
from assay.cve5 import DEFAULT_CVELIST_URL, DEFAULT_EPSS_URL, DEFAULT_KEV_URL

if TYPE_CHECKING:
    from rich.console import Console

    from assay.cve5.importer import Cve5ImportReport
    from assay.nvd.storage.cve5 import Cve5Store

MAX_KEV_FILE = 64 * 1024 * 1024
MAX_EPSS_FILE = 256 * 1024 * 1024


def register(tree: CommandTree) -> None:
    parser = tree.add(
        "cve import",
        help="Import CVE JSON 5 records: files, folders and zip archives.",
        handler=cve_import,
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
    add_options(parser, STORE, JSON_SUMMARY)
    parser = tree.add(
        "cve sync",
        help="Mirror cvelistV5's release archives (a baseline, then the deltas).",
        handler=cve_sync,
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
    add_options(parser, STORE, JSON_SUMMARY)

    for command in _FEED_COMMANDS:
        _register_feed(tree, command)


class _FeedCommand(NamedTuple):
    """The `import` and `sync` commands of a whole-file source, as the help shows them."""

    group: str
    group_help: str
    import_help: str
    import_description: str
    file_help: str
    sync_help: str
    sync_description: str
    upstream: str
    upstream_help: str


_FEED_COMMANDS: Final = (
    _FeedCommand(
        "kev",
        "CISA's Known Exploited Vulnerabilities catalogue.",
        "Import the KEV catalogue (JSON).",
        "Make the KEV catalogue in FILE (CISA's JSON feed) the store's: "
        "entries are added and updated, entries no longer in it removed.",
        "the catalogue (JSON)",
        "Download the KEV catalogue into the store.",
        "Download CISA's KEV catalogue and make it the store's, as kev import does.",
        DEFAULT_KEV_URL,
        "the catalogue's URL",
    ),
    _FeedCommand(
        "epss",
        "FIRST's Exploit Prediction Scoring System scores.",
        "Import FIRST's daily EPSS CSV (.gz or plain).",
        "Store the scores of FIRST's daily EPSS CSV (with its "
        "#model_version:...,score_date:... line), gzip-compressed or plain. A score "
        "replaces a stored one of an earlier day.",
        "the scores (CSV, .gz or plain)",
        "Download the current EPSS scores into the store.",
        "Download FIRST's current EPSS CSV and store it, as epss import does.",
        DEFAULT_EPSS_URL,
        "the CSV's URL",
    ),
)


def _register_feed(tree: CommandTree, command: _FeedCommand) -> None:
    group = tree.group(command.group, help=command.group_help)
    feed = _FEEDS[command.group]
    parser = add_command(
        group,
        "import",
        help=command.import_help,
        description=command.import_description,
        handler=partial(_from_file, feed=feed),
    )
    parser.add_argument("file", type=Path, metavar="FILE", help=command.file_help)
    add_options(parser, STORE, JSON_SUMMARY)
    parser = add_command(
        group,
        "sync",
        help=command.sync_help,
        description=command.sync_description,
        handler=partial(_from_upstream, feed=feed),
    )
    parser.add_argument(
        "--upstream",
        default=command.upstream,
        help=f"{command.upstream_help} (default: {command.upstream})",
    )
    add_options(parser, STORE, JSON_SUMMARY)


def _console() -> Console:
    from rich.console import Console

    return Console(stderr=True, soft_wrap=True)


@contextmanager
def _store(args: argparse.Namespace) -> Iterator[Cve5Store]:
    from assay.nvd.storage.cve5 import cve5_store

    with named_store(args) as store:
        yield cve5_store(store)


def _print(args: argparse.Namespace, document: dict[str, Any], console: Console, text: str) -> None:
    if args.json:
        print_json(document)
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
    with (
        _store(args) as store,
        record_progress(console) as (on_record, on_problem),
        Cve5Importer(store, on_problem=on_problem, on_record=on_record) as importer,
    ):
        for path in args.paths:
            importer.import_path(path)
    report = importer.report
    _print(args, report.to_dict(), console, _import_text(report))
    return _import_outcome(report)


def cve_sync(args: argparse.Namespace) -> int:
    from rich.markup import escape

    from assay.cve5.sync import CHECKPOINT, sync_cvelist

    console = _console()
    with _store(args) as store, store.exclusive(CHECKPOINT):
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


def _counts(counts: Any) -> dict[str, int]:
    return {"added": counts.added, "updated": counts.updated, "unchanged": counts.unchanged}


def _counts_text(counts: Any) -> str:
    return f"{counts.added} added, {counts.updated} updated, {counts.unchanged} unchanged"


def _read_kev(data: bytes, source: str) -> Any:
    from assay.cve5.kev import read_catalogue

    return read_catalogue(data, source)


def _store_kev(store: Cve5Store, catalogue: Any) -> tuple[dict[str, Any], str]:
    counts, removed = store.replace_kev(catalogue, meta={"kev.catalogVersion": catalogue.version})
    document = {
        "catalogVersion": catalogue.version,
        "entries": len(catalogue.entries),
        **_counts(counts),
        "removed": removed,
    }
    return document, f"KEV catalogue {catalogue.version}: {_counts_text(counts)}, {removed} removed"


def _read_epss(data: bytes, source: str) -> Any:
    from assay.cve5.epss import read_scores

    return read_scores(data, source)


def _store_epss(store: Cve5Store, scores: Any) -> tuple[dict[str, Any], str]:
    meta = {"epss.scoreDate": scores.score_date, "epss.modelVersion": scores.model_version}
    counts = store.upsert_epss(scores, meta=meta)
    document = {
        "modelVersion": scores.model_version,
        "scoreDate": scores.score_date,
        "scores": len(scores.scores),
        **_counts(counts),
    }
    return document, f"EPSS {scores.score_date} ({scores.model_version}): {_counts_text(counts)}"


class _Feed(NamedTuple):
    """A whole-file source (the KEV catalogue, the EPSS scores): how to read and store it."""

    limit: int
    read: Callable[[bytes, str], Any]
    """The file's bytes as a typed value (an `AssayError` for unusable input)."""
    store: Callable[[Cve5Store, Any], tuple[dict[str, Any], str]]
    """Store the value: the summary, as JSON and as text."""


_FEEDS: Final = {
    "kev": _Feed(MAX_KEV_FILE, _read_kev, _store_kev),
    "epss": _Feed(MAX_EPSS_FILE, _read_epss, _store_epss),
}


def _load(args: argparse.Namespace, feed: _Feed, data: bytes | None, source: str) -> int:
    from assay.errors import AssayError

    if data is None:
        return EXIT_UNUSABLE
    try:
        value = feed.read(data, source)
    except AssayError as error:
        print(f"assay: error: {error.diagnostics()}", file=sys.stderr)
        return EXIT_UNUSABLE
    with _store(args) as store:
        document, text = feed.store(store, value)
    _print(args, {"ok": True, **document}, _console(), text)
    return EXIT_OK


def _from_file(args: argparse.Namespace, *, feed: _Feed) -> int:
    return _load(args, feed, _read(args.file, feed.limit), str(args.file))


def _from_upstream(args: argparse.Namespace, *, feed: _Feed) -> int:
    from assay.cve5.sync import fetch_bytes

    return _load(args, feed, fetch_bytes(args.upstream, feed.limit), args.upstream)
