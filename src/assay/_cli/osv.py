"""`assay osv ...`: OSV records into a store (files, folders, archives, osv.dev's bucket)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from assay._cli import EXIT_FAILED, EXIT_OK, EXIT_UNUSABLE, CommandTree, add_list_option
from assay.config import STORE_ENV, default_store_url

if TYPE_CHECKING:
    from rich.console import Console

    from assay.osv.importer import ImportReport

DEFAULT_ECOSYSTEMS = ("PyPI", "npm", "Go", "crates.io", "Maven", "RubyGems", "NuGet", "Packagist")


def register(tree: CommandTree) -> None:
    group = tree.group("osv", help="OSV records: import files into a store, or mirror osv.dev.")
    parser = group.add_parser(
        "import",
        help="Import OSV records (JSON or YAML files, folders, .zip archives) into a store.",
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
    _store_option(parser)
    _json_option(parser)
    parser.set_defaults(handler=import_paths)

    sync = group.add_parser(
        "sync",
        help="Mirror osv.dev's bucket (or a copy of its layout) into a store.",
        description="Mirror OSV records per ecosystem from osv.dev's bucket layout: "
        "{upstream}/{ECOSYSTEM}/all.zip the first time, then the records "
        "{upstream}/{ECOSYSTEM}/modified_id.csv lists as modified since the checkpoint "
        "(kept in the store, committed with each batch: a stopped run resumes). Exit 0 when "
        "everything was mirrored, 1 when some records were rejected, 2 when the upstream or "
        "the store could not be used.",
    )
    add_list_option(
        sync,
        "--ecosystem",
        dest="ecosystems",
        metavar="NAME",
        help=f"ecosystems to mirror, as osv.dev names them (default: {', '.join(DEFAULT_ECOSYSTEMS)})",
    )
    sync.add_argument(
        "--upstream",
        default=None,
        help="base URL of the bucket (default: https://osv-vulnerabilities.storage.googleapis.com)",
    )
    sync.add_argument(
        "--timeout", type=float, default=60.0, help="seconds allowed per answer (default 60)"
    )
    _store_option(sync)
    _json_option(sync)
    sync.set_defaults(handler=sync_ecosystems)

    export = group.add_parser(
        "export",
        help="Write the store's OSV records as osv.dev's bucket layout or Renovate's database.",
        description="Write the store's OSV records into FOLDER, per ecosystem: with --layout "
        "bucket (the default) osv.dev's bucket layout, ECOSYSTEM/all.zip, "
        "ECOSYSTEM/modified_id.csv and ECOSYSTEM/ID.json (what osv-scanner's offline mode "
        "and `assay osv sync --upstream` read); with --layout renovate one ecosystem.nedb "
        "file per ecosystem (@renovatebot/osv-offline). docs/client.md says how to point "
        "each tool at it. Exit 0 when written, 2 when the store or the folder is unusable.",
    )
    export.add_argument("folder", type=Path, metavar="FOLDER", help="where to write")
    add_list_option(
        export,
        "--ecosystem",
        dest="ecosystems",
        metavar="NAME",
        help="ecosystems to write (default: every one the store holds)",
    )
    export.add_argument(
        "--layout",
        choices=("bucket", "renovate"),
        default="bucket",
        help="bucket (osv.dev's, the default) or renovate",
    )
    _store_option(export)
    _json_option(export)
    export.set_defaults(handler=export_records)


def _store_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--store",
        default=None,
        help=f"store URL (default: ${STORE_ENV} or a SQLite file in the user data directory)",
    )


def _json_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--json",
        action="store_true",
        help="print the summary as JSON on stdout (docs/cli.md); progress stays on stderr",
    )


def import_paths(args: argparse.Namespace) -> int:
    paths: list[Path] = list(args.paths)
    if not paths:
        print(
            "assay osv import: nothing to import (name files, folders or archives)", file=sys.stderr
        )
        return EXIT_UNUSABLE
    missing = [str(path) for path in paths if not path.exists()]
    if missing:
        print(f"assay osv import: no such file or folder: {', '.join(missing)}", file=sys.stderr)
        return EXIT_UNUSABLE
    from rich.console import Console

    from assay._cli.progress import record_progress
    from assay.nvd.storage import open_store
    from assay.osv.importer import OsvImporter

    console = Console(stderr=True)
    store = open_store(args.store or default_store_url())
    try:
        with record_progress(console) as (on_record, on_problem):
            importer = OsvImporter(store, on_problem=on_problem, on_record=on_record)
            with store.bulk_load():
                report = importer.import_paths(paths)
    finally:
        store.close()
    _print(report, args.json, console)
    if report.files == report.failed_files or (report.records == 0 and report.skipped == 0):
        return EXIT_UNUSABLE
    return EXIT_OK if report.ok else EXIT_FAILED


def sync_ecosystems(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.markup import escape

    from assay.errors import ClientError, StoreError
    from assay.nvd.storage import open_store
    from assay.osv.sync import DEFAULT_UPSTREAM, OsvSync

    console = Console(stderr=True)
    ecosystems: list[str] = list(dict.fromkeys(args.ecosystems or DEFAULT_ECOSYSTEMS))
    store = open_store(args.store or default_store_url())
    reports: dict[str, ImportReport] = {}
    error: str | None = None
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    progress = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        console=console,
        disable=not console.is_terminal,
        transient=True,
    )
    task = progress.add_task("osv sync", total=None)

    def step(what: str, done: int, total: int) -> None:
        progress.update(task, description=what, completed=done, total=total or None)

    try:
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
                # What was done until then is kept (and said); the rest is unusable.
                error = f"{failure}"
            finally:
                syncer.close()
    finally:
        store.close()
    ok = error is None and all(report.ok for report in reports.values())
    if args.json:
        import json

        document = {
            "ok": ok,
            "error": error,
            "ecosystems": {name: r.to_dict() for name, r in reports.items()},
        }
        sys.stdout.write(json.dumps(document, indent=2) + "\n")
    else:
        for name, report in reports.items():
            console.print(f"[bold]{escape(name)}[/bold]", highlight=False)
            _print(report, False, console)
    if error is not None:
        print(f"assay: error: {error}", file=sys.stderr)
        return EXIT_UNUSABLE
    return EXIT_OK if ok else EXIT_FAILED


def export_records(args: argparse.Namespace) -> int:
    from assay.nvd.storage import open_store
    from assay.osv.export import export

    store = open_store(args.store or default_store_url())
    try:
        try:
            written = export(store, args.folder, ecosystems=args.ecosystems, layout=args.layout)
        except OSError as error:
            print(f"assay: error: {args.folder}: cannot write: {error.strerror}", file=sys.stderr)
            return EXIT_UNUSABLE
    finally:
        store.close()
    if args.json:
        import json

        document = {"folder": str(args.folder), "layout": args.layout, "records": written}
        sys.stdout.write(json.dumps(document, indent=2) + "\n")
    else:
        for name, count in written.items():
            print(f"{name}: {count} records")
    return EXIT_OK


def _print(report: ImportReport, as_json: bool, console: Console) -> None:
    if as_json:
        import json

        sys.stdout.write(json.dumps(report.to_dict(), indent=2) + "\n")
        return
    console.print(
        f"records: {report.added} added, {report.updated} updated, {report.unchanged} unchanged; "
        f"{report.rejected} rejected, {report.skipped} file(s) skipped; "
        f"{report.files} path(s), {report.failed_files} failed",
        highlight=False,
    )
