"""`assay nvd sync`: mirror an NVD-compatible API into a store, resumably."""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING, Any, Final

from assay._cli import EXIT_FAILED, EXIT_OK, EXIT_UNUSABLE, CommandTree
from assay._cli._options import JSON_SUMMARY, STORE, add_options, named_store, print_json
from assay._cli.nvd_follow import add_follow_options, follow, wants_snapshots
from assay.errors import InputError
from assay.nvd.defaults import DEFAULT_BASE_URL, KINDS
from assay.nvd.operations import OPERATIONS

if TYPE_CHECKING:
    from collections.abc import Callable
    from datetime import datetime

    from rich.console import Console
    from rich.progress import TaskID

    from assay.nvd.storage import Store
    from assay.nvd.sync import (
        KindFinished,
        KindStarted,
        Notice,
        PageStored,
        Rate,
        SyncEvent,
        SyncOptions,
        SyncReport,
    )

API_KEY_ENV = "NVD_API_KEY"
MIB = 2**20
MAX_PAGE_MIB = 64  # assay.nvd.client.MAX_WIRE_BYTES, not imported: start-up stays fast
MAX_DECODED_PAGE_MIB = 256  # assay.nvd.client.MAX_DECODED_BYTES


def register(tree: CommandTree) -> None:
    parser = tree.add(
        "nvd sync",
        help="Mirror an NVD-compatible API (NVD itself, or another assay) into a store.",
        handler=sync,
        description="Mirror an NVD API 2.0 service into a store: the first run loads every "
        "CVE, CVE change, CPE, match criteria and source; later runs fetch what changed since the "
        "last checkpoint, in lastModified windows of at most 120 days. A checkpoint is "
        "committed after every page: a run stopped at any moment resumes where it stopped. "
        "Requests are paced as NVD allows (5 per 30 s, 50 with an API key); an upstream on "
        "a loopback address is not paced. Exit 0 when everything was mirrored, 1 when some "
        "records were rejected, 2 when the upstream or the store could not be used.",
    )
    add_options(parser, STORE)
    parser.add_argument(
        "--upstream",
        default=DEFAULT_BASE_URL,
        help=f"base URL of the NVD API 2.0 to mirror (default: {DEFAULT_BASE_URL}; "
        "another assay: http://HOST:PORT/rest/json)",
    )
    parser.add_argument(
        "--api-key",
        default=None,
        help=f"NVD API key, sent in the apiKey header (default: ${API_KEY_ENV})",
    )
    parser.add_argument(
        "--kinds",
        default=",".join(KINDS),
        help=f"what to mirror, comma-separated (default: {','.join(KINDS)})",
    )
    parser.add_argument(
        "--since",
        default=None,
        metavar="DATE",
        help="fetch what changed since DATE (ISO 8601, UTC unless an offset is given) "
        "instead of what the checkpoints say",
    )
    pacing = parser.add_mutually_exclusive_group()
    pacing.add_argument(
        "--no-pacing",
        action="store_true",
        help="send requests back to back (automatic for loopback upstreams)",
    )
    pacing.add_argument(
        "--rate",
        default=None,
        metavar="N/SECONDS",
        help="at most N requests in any SECONDS-long window (default: NVD's limits)",
    )
    parser.add_argument(
        "--by-date",
        action="store_true",
        help="read another assay by lastModified windows, as NVD is read, instead of by its "
        "change cursor (which also brings records imported there with old dates)",
    )
    parser.add_argument(
        "--page-size",
        type=int,
        default=None,
        help="records per request (default and maximum: "
        + ", ".join(f"{op.max_page} {op.label}" for op in OPERATIONS.values())
        + ")",
    )
    parser.add_argument(
        "--timeout", type=float, default=60.0, help="seconds allowed per answer (default 60)"
    )
    parser.add_argument("--retries", type=int, default=6, help="retries per request (default 6)")
    parser.add_argument(
        "--backoff",
        type=float,
        default=2.0,
        help="first retry delay in seconds, doubling up to 60 (default 2)",
    )
    parser.add_argument(
        "--max-page-mib",
        type=int,
        default=MAX_PAGE_MIB,
        metavar="MIB",
        help=f"largest answer accepted as received, compressed (default {MAX_PAGE_MIB})",
    )
    parser.add_argument(
        "--max-decoded-page-mib",
        type=int,
        default=MAX_DECODED_PAGE_MIB,
        metavar="MIB",
        help=f"largest answer accepted once decoded (default {MAX_DECODED_PAGE_MIB})",
    )
    add_options(parser, JSON_SUMMARY)
    add_follow_options(parser)


def _options(args: argparse.Namespace) -> SyncOptions:
    from assay.nvd.client import base_url_problem
    from assay.nvd.sync import SyncOptions, parse_kinds

    upstream: str = args.upstream
    problem = base_url_problem(upstream)
    if problem is not None:
        raise InputError("--upstream", problem)
    api_key: str | None = args.api_key or os.environ.get(API_KEY_ENV) or None
    rate = _rate(args, api_key)
    since = _since(args.since)
    _check_numbers(args)
    return SyncOptions(
        upstream=upstream,
        api_key=api_key,
        kinds=parse_kinds(args.kinds),
        rate=rate,
        page_size=args.page_size,
        timeout=args.timeout,
        max_retries=args.retries,
        backoff=args.backoff,
        since=since,
        change_cursor=not args.by_date,
        max_page_bytes=args.max_page_mib * MIB,
        max_decoded_page_bytes=args.max_decoded_page_mib * MIB,
    )


def _rate(args: argparse.Namespace, api_key: str | None) -> Rate | None:
    """--no-pacing (None), --rate, else the pace the upstream allows."""
    from assay.nvd.sync import default_rate, parse_rate

    if args.no_pacing:
        return None
    if args.rate is not None:
        return parse_rate(args.rate)
    return default_rate(args.upstream, api_key)


def _since(text: str | None) -> datetime | None:
    """--since: a date (midnight UTC) or a date-time."""
    from assay.nvd.dates import parse_nvd_datetime

    if text is None:
        return None
    try:
        return parse_nvd_datetime(text if "T" in text else f"{text}T00:00")
    except InputError:
        raise InputError(
            "--since", f"expected an ISO 8601 date or date-time, got {text!r}"
        ) from None


# (option, namespace field, lowest value allowed, what the message expects): the number
# options' bounds; a None value (an option without default, not given) is not checked.
_NUMBER_BOUNDS: Final = (
    ("--timeout", "timeout", None, "a positive number of seconds"),
    ("--backoff", "backoff", 0, "a positive number of seconds"),
    ("--retries", "retries", 0, "an integer >= 0"),
    ("--page-size", "page_size", 1, "an integer >= 1"),
    ("--max-page-mib", "max_page_mib", 1, "an integer >= 1"),
    ("--max-decoded-page-mib", "max_decoded_page_mib", 1, "an integer >= 1"),
)


def _check_numbers(args: argparse.Namespace) -> None:
    for option, field, lowest, expected in _NUMBER_BOUNDS:
        value = getattr(args, field)
        if value is not None and not _within(value, lowest):
            raise InputError(option, f"expected {expected}, got {value}")


def _within(value: float, lowest: float | None) -> bool:
    """`value >= lowest`, or `value > 0` without a lowest; never NaN."""
    return value > 0 if lowest is None else value >= lowest


def sync(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.markup import escape

    from assay.urls import redact_url

    try:
        options = _options(args)
    except InputError as error:
        print(f"assay nvd sync: {error}", file=sys.stderr)
        return EXIT_UNUSABLE
    console = Console(stderr=True)
    pacing = f"paced at {options.rate}" if options.rate else "not paced"
    shown = redact_url(options.upstream)
    console.print(f"mirroring {escape(shown)} ({pacing})", highlight=False)
    with named_store(args) as store:
        if wants_snapshots(args) and (code := follow(args, store, console)) is not None:
            return code
        return _mirror(args, store, options, console)


def _mirror(args: argparse.Namespace, store: Store, options: SyncOptions, console: Console) -> int:
    """Read the upstream's pages into the store; print the summary (also of a run that
    failed part-way: what it stored is kept)."""
    from rich.markup import escape

    from assay.nvd.sync import Mirror, SyncError

    with _Display(console) as display:
        mirror = Mirror(store, options, on_event=display.event)
        try:
            report = mirror.run()
        except SyncError as error:
            display.close()
            _print_report(args, mirror.report, console, error=error.diagnostics())
            console.print(
                f"[red]error[/red] {escape(error.diagnostics())}",
                highlight=False,
                soft_wrap=True,
            )
            return EXIT_UNUSABLE
    _print_report(args, report, console)
    return EXIT_OK if report.ok else EXIT_FAILED


def _print_report(
    args: argparse.Namespace, report: SyncReport, console: Console, *, error: str | None = None
) -> None:
    if args.json:
        print_json(sync_report_json(report, error=error))
    else:
        _summary(report, console)


def sync_report_json(report: SyncReport, *, error: str | None = None) -> dict[str, Any]:
    """The `--json` document of `assay nvd sync` (docs/cli.md)."""
    return {
        "ok": error is None and report.ok,
        "error": error,
        "upstream": report.upstream,
        "upstreamTime": None if report.upstream_time is None else report.upstream_time.isoformat(),
        "paced": None
        if report.paced is None
        else {"requests": report.paced.requests, "seconds": report.paced.seconds},
        "requests": report.requests,
        "retries": report.retries,
        "elapsedSeconds": round(report.elapsed, 3),
        "waitedSeconds": round(report.waited, 3),
        "rejected": report.rejected,
        "kinds": [
            {
                "kind": kind.kind,
                "plan": kind.plan,
                "fullLoad": kind.full_load,
                "fetched": kind.fetched,
                "added": kind.counts.added,
                "updated": kind.counts.updated,
                "unchanged": kind.counts.unchanged,
                "rejected": kind.rejected,
                "pages": kind.pages,
                "windows": kind.windows,
            }
            for kind in report.kinds
        ],
        "problems": list(report.problems),
    }


class _Display:
    """A progress bar per kind with an ETA (on a terminal), and notices."""

    def __init__(self, console: Console) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.console = console
        self.progress = Progress(
            TextColumn("[bold]{task.description:<16}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("eta"),
            TimeRemainingColumn(),
            console=console,
            disable=not console.is_terminal,
            transient=True,
        )
        self.tasks: dict[str, TaskID] = {}
        self.done: dict[str, int] = {}

    def __enter__(self) -> _Display:
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.progress.stop()

    def event(self, event: SyncEvent) -> None:
        from assay.nvd.sync import KindFinished, KindStarted, Notice, PageStored

        shows: dict[type, Callable[[Any], None]] = {
            KindStarted: self._started,
            PageStored: self._stored,
            KindFinished: self._finished,
            Notice: self._notice,
        }
        shows[type(event)](event)

    def _started(self, event: KindStarted) -> None:
        from rich.markup import escape

        label = OPERATIONS[event.kind].label
        self.console.print(f"{label}: {escape(event.plan)}", highlight=False)
        self.tasks[event.kind] = self.progress.add_task(label, total=None)
        self.done[event.kind] = 0

    def _stored(self, event: PageStored) -> None:
        self.done[event.kind] += event.received
        position = event.position
        remaining = max(0, (position.total or 0) - position.next_index)
        done = self.done[event.kind]
        self.progress.update(self.tasks[event.kind], completed=done, total=done + remaining)

    def _finished(self, event: KindFinished) -> None:
        done = self.done[event.report.kind]
        self.progress.update(self.tasks[event.report.kind], completed=done, total=done)

    def _notice(self, event: Notice) -> None:
        from rich.markup import escape

        self.console.print(escape(event.text), highlight=False, soft_wrap=True)


def _summary(report: SyncReport, console: Console) -> None:
    from datetime import timedelta

    from rich.table import Table

    table = Table(title="sync summary", show_edge=False)
    table.add_column("records")
    for column in ("fetched", "added", "updated", "unchanged", "rejected", "pages"):
        table.add_column(column, justify="right")
    for kind in report.kinds:
        counts = kind.counts
        table.add_row(
            OPERATIONS[kind.kind].label,
            str(kind.fetched),
            str(counts.added),
            str(counts.updated),
            str(counts.unchanged),
            str(kind.rejected),
            str(kind.pages),
        )
    console.print(table)
    waited = (
        f", {timedelta(seconds=round(report.waited))} waiting for the rate limit"
        if report.waited >= 1
        else ""
    )
    console.print(
        f"{report.requests} request(s), {report.retries} retries; "
        f"{report.elapsed:.1f} s elapsed{waited}",
        highlight=False,
    )
    spent = report.timings
    console.print(
        f"[dim]fetching {spent['fetch']:.1f} s, checking {spent['check']:.1f} s (ahead of "
        f"writing), writing with checkpoints {spent['write']:.1f} s, "
        f"waiting for pages {spent['idle']:.1f} s[/dim]",
        highlight=False,
    )
