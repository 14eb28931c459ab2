"""`assay nvd ...`: load NVD data into a store."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay._cli import EXIT_FAILED, EXIT_OK, EXIT_UNUSABLE, CommandTree
from assay._cli._options import JSON_SUMMARY, STORE, add_options, named_store, print_json
from assay.nvd.defaults import DEFAULT_BATCH_SIZE

if TYPE_CHECKING:
    from rich.console import Console

    from assay.nvd.ingest.importer import ImportReport
    from assay.nvd.storage import Store

BUNDLED_PACKAGE = "assay.data"


def register(tree: CommandTree) -> None:
    parser = tree.add(
        "nvd import",
        help="Import NVD API 2.0 responses, 2.0 feeds and JSON Lines into a store.",
        handler=import_files,
        description="Import NVD API 2.0 responses, NVD 2.0 feed files (plain, .gz, .zip, "
        ".tar.gz) and JSON Lines of records: CVEs, CPE products, match criteria and CVE "
        "change history (API responses of all four endpoints; feeds such as "
        "nvdcve-2.0-2024.json.gz, nvdcpe-2.0.tar.gz, nvdcpematch-2.0.tar.gz and their chunk "
        "files) and Source API responses. Records are upserted by id; an older "
        "lastModified never replaces a newer one. Exit 0 when everything was stored, 1 when "
        "some records or files were rejected, 2 when nothing could be read.",
    )
    parser.add_argument(
        "files", nargs="*", type=Path, metavar="FILE", help="files to import (see above)"
    )
    add_options(parser, STORE)
    parser.add_argument(
        "--bundled", action="store_true", help="also import the real NVD sample bundled with assay"
    )
    parser.add_argument(
        "--batch-size",
        type=int,
        default=DEFAULT_BATCH_SIZE,
        help="records per transaction (the default: batches are committed as they are "
        "written, so a file that fails part-way keeps the batches before the failure)",
    )
    parser.add_argument(
        "--atomic",
        action="store_true",
        help="each file in one transaction: a file with a rejected record or an error "
        "stores nothing (the store is unchanged by it; readers see it whole or not at all)",
    )
    add_options(parser, JSON_SUMMARY)


READER_PROCESS_BYTES = 4 * 2**20


def bundled_files() -> list[Path]:
    from importlib import resources

    folder = resources.files(BUNDLED_PACKAGE)
    return sorted(
        Path(str(entry))
        for entry in folder.iterdir()
        if entry.name.endswith((".jsonl.gz", ".json.gz"))
    )


def _paths_problem(paths: list[Path], batch_size: int) -> str | None:
    """Why the import cannot start, or None."""
    if not paths:
        return "nothing to import (name FILEs or use --bundled)"
    missing = [str(path) for path in paths if not path.is_file()]
    if missing:
        return f"no such file: {', '.join(missing)}"
    return "--batch-size must be at least 1" if batch_size < 1 else None


def import_files(args: argparse.Namespace) -> int:
    paths: list[Path] = [*args.files, *(bundled_files() if args.bundled else [])]
    problem = _paths_problem(paths, args.batch_size)
    if problem is not None:
        print(f"assay nvd import: {problem}", file=sys.stderr)
        return EXIT_UNUSABLE
    from rich.console import Console

    console = Console(stderr=True)
    with named_store(args) as store:
        report = _run(store, paths, args.batch_size, console, atomic=args.atomic)
    if args.json:
        print_json(import_report_json(report))
    else:
        _summary(report, console)
    return _exit_code(report)


def _exit_code(report: ImportReport) -> int:
    """2 when no file could be read, else 1 when records were rejected, else 0."""
    if report.files == report.failed_files:
        return EXIT_UNUSABLE
    return EXIT_OK if report.ok else EXIT_FAILED


def _run(
    store: Store, paths: list[Path], batch_size: int, console: Console, *, atomic: bool = False
) -> ImportReport:
    from rich.markup import escape
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

    from assay.nvd.ingest.importer import Importer

    total_bytes = sum(path.stat().st_size for path in paths)
    with Progress(
        TextColumn("[bold]importing"),
        BarColumn(),
        DownloadColumn(),
        TimeRemainingColumn(),
        console=console,
        disable=not console.is_terminal,
        transient=True,
    ) as progress:
        task = progress.add_task("import", total=total_bytes)
        done_before = 0

        def advance(position: int) -> None:
            progress.update(task, completed=done_before + position)

        with Importer(
            store,
            batch_size=batch_size,
            on_progress=advance,
            on_problem=lambda text: console.print(
                f"[red]rejected[/red] {escape(text)}", highlight=False
            ),
            # Checking on another core than the writes: worth its ~0.3 s start beyond a
            # few MB of input.
            reader_process=total_bytes > READER_PROCESS_BYTES,
            atomic=atomic,
        ) as importer:
            for path in paths:
                importer.import_file(path)
                done_before += path.stat().st_size
    return importer.report


def import_report_json(report: ImportReport) -> dict[str, Any]:
    """The `--json` document of `assay nvd import` (docs/cli.md)."""
    return {
        "ok": report.ok,
        "files": report.files,
        "failedFiles": report.failed_files,
        "rejected": report.rejected,
        "records": {
            kind: {"added": c.added, "updated": c.updated, "unchanged": c.unchanged}
            for kind, c in sorted(report.counts.items())
        },
        "problems": list(report.problems),
    }


def _summary(report: ImportReport, console: Console) -> None:
    from rich.table import Table

    table = Table(title="import summary", show_edge=False)
    for column in ("records", "added", "updated", "unchanged"):
        table.add_column(column, justify="right" if column != "records" else "left")
    for kind, counts in sorted(report.counts.items()):
        table.add_row(kind, str(counts.added), str(counts.updated), str(counts.unchanged))
    console.print(table)
    console.print(
        f"{report.files} file(s), {report.failed_files} failed; {report.rejected} record(s) rejected",
        highlight=False,
    )
