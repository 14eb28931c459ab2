"""`assay osv ...`: OSV records into a store (files, folders, archives, osv.dev's bucket)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from assay._cli import EXIT_FAILED, EXIT_OK, EXIT_UNUSABLE, CommandTree
from assay._cli._options import (
    JSON_SUMMARY,
    STORE,
    add_options,
    list_option,
    named_store,
    print_json,
)

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress

    from assay._cli._options import Declared
    from assay.nvd.storage import Store
    from assay.osv.importer import ImportReport

DEFAULT_ECOSYSTEMS = ("PyPI", "npm", "Go", "crates.io", "Maven", "RubyGems", "NuGet", "Packagist")


def register(tree: CommandTree) -> None:
    parser = tree.add(
        "osv import",
        help="Import OSV records (JSON or YAML files, folders, .zip archives) into a store.",
        handler=import_paths,
        description="Import OSV records: JSON or YAML files, folders (read recursively: every "
        ".json, .yaml and .yml file is a record, other files are skipped and counted) and "
        ".zip archives as osv.dev publishes them per ecosystem (ECOSYSTEM/all.zip). A record "
        "replaces a stored one of the same id unless its `modified` is earlier. Exit 0 when "
        "everything was stored, 1 when some records were rejected (each named with its file "
        "and JSON path), 2 when nothing could be read.",
    )
    parser.add_argument(
        "paths", nargs="*", type=Path, metavar="PATH", help="files, folders, .zip archives"
    )
    add_options(parser, STORE, JSON_SUMMARY)

    sync = tree.add(
        "osv sync",
        help="Mirror osv.dev's bucket (or a copy of its layout) into a store.",
        handler=sync_ecosystems,
        description="Mirror OSV records per ecosystem from osv.dev's bucket layout: "
        "{upstream}/{ECOSYSTEM}/all.zip the first time, then the records "
        "{upstream}/{ECOSYSTEM}/modified_id.csv lists as modified since the checkpoint "
        "(kept in the store, committed with each batch: a stopped run resumes). Exit 0 when "
        "everything was mirrored, 1 when some records were rejected, 2 when the upstream or "
        "the store could not be used.",
    )
    add_options(
        sync,
        _ecosystems(
            f"ecosystems to mirror, as osv.dev names them (default: {', '.join(DEFAULT_ECOSYSTEMS)})"
        ),
    )
    sync.add_argument(
        "--upstream",
        default=None,
        help="base URL of the bucket (default: https://osv-vulnerabilities.storage.googleapis.com)",
    )
    sync.add_argument(
        "--timeout", type=float, default=60.0, help="seconds allowed per answer (default 60)"
    )
    add_options(sync, STORE, JSON_SUMMARY)

    export = tree.add(
        "osv export",
        help="Write the store's OSV records as osv.dev's bucket layout or Renovate's database.",
        handler=export_records,
        description="Write the store's OSV records into FOLDER, per ecosystem: with --layout "
        "bucket (the default) osv.dev's bucket layout, ECOSYSTEM/all.zip, "
        "ECOSYSTEM/modified_id.csv and ECOSYSTEM/ID.json (what osv-scanner's offline mode "
        "and `assay osv sync --upstream` read); with --layout renovate one ecosystem.nedb "
        "file per ecosystem (@renovatebot/osv-offline). docs/client.md says how to point "
        "each tool at it. Exit 0 when written, 2 when the store or the folder is unusable.",
    )
    export.add_argument("folder", type=Path, metavar="FOLDER", help="where to write")
    add_options(export, _ecosystems("ecosystems to write (default: every one the store holds)"))
    export.add_argument(
        "--layout",
        choices=("bucket", "renovate"),
        default="bucket",
        help="bucket (osv.dev's, the default) or renovate",
    )
    add_options(export, STORE, JSON_SUMMARY)


def _ecosystems(help: str) -> Declared:
    return list_option("--ecosystem", dest="ecosystems", metavar="NAME", help=help)


def _paths_problem(paths: list[Path]) -> str | None:
    """Why the import cannot start, or None."""
    if not paths:
        return "nothing to import (name files, folders or archives)"
    missing = [str(path) for path in paths if not path.exists()]
    return f"no such file or folder: {', '.join(missing)}" if missing else None


def import_paths(args: argparse.Namespace) -> int:
    paths: list[Path] = list(args.paths)
    problem = _paths_problem(paths)
    if problem is not None:
        print(f"assay osv import: {problem}", file=sys.stderr)
        return EXIT_UNUSABLE
    from rich.console import Console

    from assay._cli.progress import record_progress
    from assay.osv.importer import OsvImporter

    console = Console(stderr=True)
    with named_store(args) as store, record_progress(console) as (on_record, on_problem):
        importer = OsvImporter(store, on_problem=on_problem, on_record=on_record)
        with store.bulk_load():
            report = importer.import_paths(paths)
    _print(report, args.json, console)
    return _import_exit_code(report)


def _import_exit_code(report: ImportReport) -> int:
    """2 when nothing could be read, else 1 when records were rejected, else 0."""
    if report.files == report.failed_files or (report.records == 0 and report.skipped == 0):
        return EXIT_UNUSABLE
    return EXIT_OK if report.ok else EXIT_FAILED


def sync_ecosystems(args: argparse.Namespace) -> int:
    from rich.console import Console

    console = Console(stderr=True)
    ecosystems: list[str] = list(dict.fromkeys(args.ecosystems or DEFAULT_ECOSYSTEMS))
    with named_store(args) as store:
        reports, error = _sync(args, store, ecosystems, console)
    return _sync_outcome(args, reports, error, console)


def _sync_outcome(
    args: argparse.Namespace, reports: dict[str, ImportReport], error: str | None, console: Console
) -> int:
    """The reports printed (as JSON or a table), and the error that stopped the mirror;
    the exit code."""
    ok = error is None and all(report.ok for report in reports.values())
    if args.json:
        _print_sync_json(reports, ok, error)
    else:
        _print_ecosystems(reports, console)
    if error is not None:
        print(f"assay: error: {error}", file=sys.stderr)
        return EXIT_UNUSABLE
    return EXIT_OK if ok else EXIT_FAILED


def _sync(
    args: argparse.Namespace, store: Store, ecosystems: list[str], console: Console
) -> tuple[dict[str, ImportReport], str | None]:
    """Each ecosystem's report, and the error that stopped the mirror (None if none did):
    what was done until then is kept (and said); the rest is unusable."""
    from rich.markup import escape

    from assay.errors import ClientError, StoreError
    from assay.osv.sync import DEFAULT_UPSTREAM, OsvSync

    reports: dict[str, ImportReport] = {}
    progress = _progress(console)
    task = progress.add_task("osv sync", total=None)

    def step(what: str, done: int, total: int) -> None:
        progress.update(task, description=what, completed=done, total=total or None)

    with store.exclusive("osv-sync"), progress:
        syncer = OsvSync(
            store,
            upstream=args.upstream or DEFAULT_UPSTREAM,
            timeout=args.timeout,
            on_problem=lambda text: console.print(
                f"[red]rejected[/red] {escape(text)}", highlight=False
            ),
            on_step=step,
        )
        try:
            for ecosystem in ecosystems:
                progress.update(task, description=f"{ecosystem}: all.zip or changes")
                reports[ecosystem] = syncer.sync(ecosystem)
        except (ClientError, StoreError) as failure:
            return reports, f"{failure}"
        finally:
            syncer.close()
    return reports, None


def _progress(console: Console) -> Progress:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        console=console,
        disable=not console.is_terminal,
        transient=True,
    )


def _print_sync_json(reports: dict[str, ImportReport], ok: bool, error: str | None) -> None:
    ecosystem_reports = {name: r.to_dict() for name, r in reports.items()}
    print_json({"ok": ok, "error": error, "ecosystems": ecosystem_reports})


def _print_ecosystems(reports: dict[str, ImportReport], console: Console) -> None:
    from rich.markup import escape

    for name, report in reports.items():
        console.print(f"[bold]{escape(name)}[/bold]", highlight=False)
        _print(report, False, console)


def export_records(args: argparse.Namespace) -> int:
    from assay.osv.export import export

    with named_store(args) as store:
        try:
            written = export(store, args.folder, ecosystems=args.ecosystems, layout=args.layout)
        except OSError as error:
            print(f"assay: error: {args.folder}: cannot write: {error.strerror}", file=sys.stderr)
            return EXIT_UNUSABLE
    if args.json:
        print_json({"folder": str(args.folder), "layout": args.layout, "records": written})
    else:
        for name, count in written.items():
            print(f"{name}: {count} records")
    return EXIT_OK


def _print(report: ImportReport, as_json: bool, console: Console) -> None:
    if as_json:
        print_json(report.to_dict())
        return
    console.print(
        f"records: {report.added} added, {report.updated} updated, {report.unchanged} unchanged; "
        f"{report.rejected} rejected, {report.skipped} file(s) skipped; "
        f"{report.files} path(s), {report.failed_files} failed",
        highlight=False,
    )
