"""`assay serve`: the NVD API 2.0 over HTTP, from a store."""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import tempfile
from collections.abc import Iterator
from typing import TYPE_CHECKING

from assay._cli import EXIT_OK, CommandTree, add_list_option
from assay._cli._options import CREATE, STORE, add_options
from assay.config import READ_STORES_ENV, STORE_ENV, default_store_url
from assay.errors import InputError
from assay.nvd.server.memory import DEFAULT_RESERVE_MIB, RESERVE_ENV

if TYPE_CHECKING:
    import asyncio

    from assay.nvd.server.service import ServiceSettings
    from assay.nvd.storage import BufferFit
    from assay.web.store_state import StoreState


def register(tree: CommandTree) -> None:
    parser = tree.command("serve", help="Serve the NVD API 2.0 from a store.", handler=serve)
    add_options(parser, STORE)
    add_list_option(
        parser,
        "--read-store",
        metavar="URL",
        default=None,
        help="PostgreSQL streaming replicas of --store to read from (several after one "
        "flag, or the flag repeated): reads go to the replicas, writes (API keys, rate-limit counts) to "
        "--store; a replica that stops answering is left out and tried again (docs/scale.md)",
    )
    parser.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)"
    )
    parser.add_argument("--port", type=int, default=8000, help="port to listen on (default 8000)")
    parser.add_argument("--workers", type=int, default=1, help="worker processes (default 1)")
    parser.add_argument(
        "--reserve-memory",
        metavar="MIB",
        default=None,
        help=f"MiB of memory each worker maps at start and keeps for large answers "
        f"(default {DEFAULT_RESERVE_MIB}; 0 for none)",
    )
    parser.add_argument(
        "--compat",
        choices=["nvd-api"],
        default=None,
        help="answer every path without the fields NVD added after 2023 (cveTags, cvssMetricV40), "
        "as /compat/nvd-api/ always does",
    )
    parser.add_argument(
        "--enrich",
        action="store_true",
        help="add assayConfigurations (from CVE 5 records) to CVEs NVD has not analysed, and "
        "let cpeName searches use them (docs/nvd-compatibility.md); off: NVD's bytes",
    )
    parser.add_argument(
        "--snapshots",
        metavar="DIR",
        help="serve the snapshot series `assay store export --publish DIR` writes at "
        "/api/snapshots (docs/snapshots.md)",
    )
    add_service_options(parser)
    add_web_arguments(parser)


# -- the web part: pages, start-up manners, access log -----------------------------------


def add_web_arguments(parser: argparse.ArgumentParser) -> None:
    add_options(parser, CREATE)
    parser.add_argument(
        "--access-log",
        action="store_true",
        help="log one line per request to stderr",
    )
    parser.add_argument(
        "--log-format",
        choices=["common", "json"],
        default="common",
        help="access-log format: Common Log Format or one JSON object per line (default common)",
    )


def prepare_web(args: argparse.Namespace, url: str) -> None:
    """Refuse a missing store and a taken port; print the start-up line (and the
    empty-store warning); configure the access log for the worker processes."""
    from assay.web.app import ACCESS_LOG_ENV
    from assay.web.serving import EMPTY_WARNING, buffers_warning, startup_line

    _refuse_missing_store_or_taken_port(args, url)
    state, fit = _checked_state(url)
    print(
        startup_line(args.host, args.port, max(1, args.workers), state), file=sys.stderr, flush=True
    )
    if fit is not None and not fit.fits:
        print(buffers_warning(fit), file=sys.stderr, flush=True)
    for line in replica_lines(args.read_store or []):
        print(line, file=sys.stderr, flush=True)
    if state.empty:
        print(EMPTY_WARNING, file=sys.stderr, flush=True)
    if args.access_log:
        os.environ[ACCESS_LOG_ENV] = args.log_format
    else:
        os.environ.pop(ACCESS_LOG_ENV, None)


def _refuse_missing_store_or_taken_port(args: argparse.Namespace, url: str) -> None:
    from assay._cli import fatal
    from assay.nvd.storage import store_exists
    from assay.urls import redact_url
    from assay.web.serving import port_problem

    if not args.create and not store_exists(url):
        fatal(
            f"--store {redact_url(url)}: no store there; give --create to make a new, empty "
            "one, or load one with `assay nvd import --store ...`"
        )
    problem = port_problem(args.host, args.port)
    if problem is not None:
        fatal(problem)


def _checked_state(url: str) -> tuple[StoreState, BufferFit | None]:
    """What the store holds, and for PostgreSQL whether its buffer cache holds the full
    text; opening it creates or migrates it once, and fails early on a bad URL or a
    damaged store (exit 2, rather than workers that die)."""
    from assay.nvd.server.app import check_store
    from assay.nvd.storage import buffer_fit, open_store
    from assay.web.store_state import count_state

    store = open_store(url)
    try:
        check_store(store)
        return count_state(store), buffer_fit(store)
    finally:
        store.close()


# -- end of the web part ------------------------------------------------------------------


def serve(args: argparse.Namespace) -> int:
    from assay.nvd.server.memory import reserve_from_text
    from assay.nvd.server.service import SERVICE_ENV

    service = service_settings(args)
    if args.reserve_memory is not None:
        reserve_from_text(args.reserve_memory, "--reserve-memory")
        os.environ[RESERVE_ENV] = args.reserve_memory.strip()
    url = args.store or default_store_url()
    check_read_stores(url, args.read_store or [])
    prepare_web(args, url)
    os.environ[STORE_ENV] = url
    os.environ[READ_STORES_ENV] = "\n".join(args.read_store or [])
    os.environ[SERVICE_ENV] = service.to_environment()
    _set_answer_shape(args)
    # uvicorn stops gracefully on Ctrl-C and then re-raises the signal to the handler it
    # found: make that a no-op so the stop stays clean (no KeyboardInterrupt mid-shutdown).
    previous = signal.signal(signal.SIGINT, _ignore_signal)
    try:
        with shared_metrics(args.workers):
            _run_uvicorn(args, service)
    finally:
        signal.signal(signal.SIGINT, previous)
    print("assay stopped", file=sys.stderr, flush=True)
    return EXIT_OK


def _set_answer_shape(args: argparse.Namespace) -> None:
    """--compat and --enrich, for the worker processes."""
    if args.compat == "nvd-api":
        os.environ["ASSAY_LEGACY_FIELDS_ONLY"] = "1"
    if args.enrich:
        from assay.nvd.server.app import ENRICH_ENV

        os.environ[ENRICH_ENV] = "1"


def check_read_stores(url: str, read_urls: list[str]) -> None:
    """Replicas are PostgreSQL, of a PostgreSQL store: an `InputError` names the option."""
    from assay.urls import redact_url

    def postgres(given: str) -> bool:
        return given.split(":", 1)[0].lower() in ("postgres", "postgresql")

    if read_urls and not postgres(url):
        raise InputError(
            "--read-store", f"needs a PostgreSQL --store (its primary), found {redact_url(url)!r}"
        )
    for given in read_urls:
        if not postgres(given):
            raise InputError(
                "--read-store",
                f"expected a postgresql:// URL of a replica, found {redact_url(given)!r}",
            )


def replica_lines(read_urls: list[str]) -> list[str]:
    """What `assay serve` says of each replica at start: its generation, or why it is
    left out for now (it is tried again while serving). A replica that answers without
    the store is an error: a mistyped URL (exit 2)."""
    from assay._cli import fatal
    from assay.errors import StoreError
    from assay.nvd.storage import buffer_fit, open_store, store_exists
    from assay.urls import redact_url
    from assay.web.serving import buffers_warning

    lines = []
    for number, url in enumerate(read_urls, start=1):
        shown = redact_url(url)
        try:
            if not store_exists(url):
                fatal(f"--read-store {shown}: no store there (is it a replica of --store?)")
            replica = open_store(url, create=False)
            try:
                lines.append(f"replica {number}: {shown}, generation {replica.generation()}")
                fit = buffer_fit(replica)
                if fit is not None and not fit.fits:
                    lines.append(buffers_warning(fit, f"replica {number}: "))
            finally:
                replica.close()
        except StoreError as error:
            lines.append(f"warning: replica {number}: {shown} left out for now: {error}")
    return lines


def _ignore_signal(signum: int, frame: object) -> None:
    return None


def _run_uvicorn(args: argparse.Namespace, service: ServiceSettings) -> None:
    import uvicorn

    uvicorn.run(
        "assay.web.app:app_from_environment",
        factory=True,
        host=args.host,
        port=args.port,
        workers=max(1, args.workers),
        log_level=os.environ.get("ASSAY_LOG_LEVEL", "warning").lower(),
        access_log=False,
        server_header=False,
        http=guarded_protocol(),
        timeout_keep_alive=int(service.idle_timeout + 0.999),
        limit_concurrency=service.max_connections,
    )


# -- the service options (limits, keys, caching, metrics) --------------------------------


def add_service_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("service")
    group.add_argument(
        "--threads",
        type=int,
        default=None,
        help="worker threads per process, so store operations at a time (default 8)",
    )
    group.add_argument(
        "--sqlite-cache",
        metavar="MIB",
        type=int,
        default=None,
        help="SQLite page cache of each whole serving process, all its connections "
        "together (default 128, 0 for no limit; the kernel's file cache holds the rest)",
    )

    group.add_argument(
        "--api-keys",
        choices=["off", "optional", "required"],
        default="off",
        help="off: the apiKey header is ignored (default); optional: a request with an "
        "unknown key gets 404 'Invalid apiKey.' as at NVD; required: every API request "
        "needs a valid key (see assay api-keys)",
    )
    group.add_argument(
        "--rate-limit",
        metavar="nvd|N/S",
        default=None,
        help="nvd: NVD's public limits (5 requests per rolling 30 s without a key, 50 with "
        "one; 403 past them); N/S: N requests per S seconds per client. Counted across "
        "every server on the store",
    )
    group.add_argument(
        "--rate-limit-store",
        metavar="URL",
        default=None,
        help="redis://... to keep the rate-limit count in Redis (needs assay[redis]) "
        "instead of in the store",
    )
    group.add_argument(
        "--cache-control",
        metavar="VALUE",
        default=None,
        help="Cache-Control of the API's answers, beside ETag and Last-Modified "
        "(default 'public, no-cache': caches keep answers and revalidate them)",
    )
    for option, field, unit, text in LIMIT_OPTIONS:
        group.add_argument(option, dest=field, type=float, default=None, metavar=unit, help=text)
    add_list_option(
        group,
        "--allowed-host",
        metavar="NAME",
        default=None,
        help="answer only requests whose Host header is one of these names (*.example.org "
        "for any name under it, * for any). Default: on a loopback --host, localhost, "
        "127.0.0.1 and ::1 (against DNS rebinding); otherwise any",
    )
    group.add_argument(
        "--no-compression",
        action="store_true",
        help="never compress answers (by default gzip or zstd when the client accepts it)",
    )


# (option, settings field, unit, help): numbers > 0, defaults in ServiceSettings.
LIMIT_OPTIONS = (
    ("--head-timeout", "head_timeout", "SECONDS",
     "close a connection whose request head has not all arrived in this time (default 10)"),
    ("--send-timeout", "send_timeout", "SECONDS",
     "drop an answer the client has not read any of for this long (default 60)"),
    ("--idle-timeout", "idle_timeout", "SECONDS",
     "close a keep-alive connection idle this long (default 5)"),
    ("--max-header-size", "max_header_bytes", "BYTES",
     "answer 431 to a larger request head (default 65536)"),
    ("--max-connections", "max_connections", "N",
     "connections per worker process; 503 past them (default 1000)"),
    ("--store-timeout", "store_timeout", "SECONDS",
     "answer 503 when PostgreSQL cannot be reached in this time (default 5)"),
    ("--large-answers", "large_answers", "N",
     "pages of more than 100 records being read or sent at a time per worker process; "
     "others wait their turn (default 4)"),
    ("--upload-threads", "upload_threads", "N",
     "threads per worker process for uploads (/api/scan, /scan, /verify), apart from the "
     "store queries' threads; past them a few wait, then 503 with Retry-After (default 2)"),
    ("--upload-timeout", "upload_timeout", "SECONDS",
     "stop an upload's work after this long, with 422 (default 60)"),
)  # fmt: skip
INTEGER_FIELDS = ("max_header_bytes", "max_connections", "large_answers", "upload_threads")
MAX_LIMIT = 10**9
_LIMIT_KINDS: dict[type, str] = {int: "a whole number", float: "a number"}


@contextlib.contextmanager
def shared_metrics(workers: int) -> Iterator[None]:
    """With several workers, each counts /metrics into files of a directory they share
    (removed at exit), so that any of them answers for all."""
    from assay.nvd.server.metrics import MULTIPROCESS_ENV

    if workers <= 1 or os.environ.get(MULTIPROCESS_ENV):
        yield
        return
    with tempfile.TemporaryDirectory(prefix="assay-metrics-") as folder:
        os.environ[MULTIPROCESS_ENV] = folder
        try:
            yield
        finally:
            del os.environ[MULTIPROCESS_ENV]


def guarded_protocol() -> type[asyncio.Protocol]:
    """uvicorn's HTTP protocol with the head, size and send limits."""
    from assay.nvd.server.guarded import GuardedHttpToolsProtocol

    return GuardedHttpToolsProtocol


def service_settings(args: argparse.Namespace) -> ServiceSettings:
    """The service options as settings; a bad value is an `InputError` naming its option."""
    from assay.nvd.server.service import ServiceSettings

    values: dict[str, object] = {"api_keys": args.api_keys}
    for part in (_process_values, _rate_limit_values, _answer_values, _host_values, _limit_values):
        values.update(part(args))
    return ServiceSettings(**values)  # type: ignore[arg-type]


def _process_values(args: argparse.Namespace) -> dict[str, object]:
    """--threads and --sqlite-cache."""
    from assay.nvd.server.bounds import MAX_SQLITE_CACHE_MIB, MAX_THREADS

    values: dict[str, object] = {}
    if args.threads is not None:
        if not 1 <= args.threads <= MAX_THREADS:
            raise InputError("--threads", f"expected 1 to {MAX_THREADS}, found {args.threads}")
        values["threads"] = args.threads
    if args.sqlite_cache is not None:
        if not 0 <= args.sqlite_cache <= MAX_SQLITE_CACHE_MIB:
            raise InputError(
                "--sqlite-cache",
                f"expected 0 (no limit) to {MAX_SQLITE_CACHE_MIB} MiB, found {args.sqlite_cache}",
            )
        values["sqlite_cache_mib"] = args.sqlite_cache
    return values


def _rate_limit_values(args: argparse.Namespace) -> dict[str, object]:
    """--rate-limit and --rate-limit-store."""
    from assay.nvd.server.ratelimit import parse_policy
    from assay.urls import redact_url

    values: dict[str, object] = {}
    if args.rate_limit is not None:
        values["rate_limit"] = parse_policy(args.rate_limit, "--rate-limit").to_text()
    if args.rate_limit_store is not None:
        if args.rate_limit is None:
            raise InputError("--rate-limit-store", "is only for --rate-limit")
        if not args.rate_limit_store.startswith(("redis://", "rediss://", "unix://")):
            raise InputError(
                "--rate-limit-store",
                f"expected a redis://, rediss:// or unix:// URL, found {redact_url(args.rate_limit_store)!r}",
            )
        values["rate_limit_store"] = args.rate_limit_store
    return values


def _answer_values(args: argparse.Namespace) -> dict[str, object]:
    """--cache-control and --no-compression."""
    values: dict[str, object] = {}
    if args.cache_control is not None:
        if not _printable_ascii(args.cache_control) or len(args.cache_control) > 200:
            raise InputError(
                "--cache-control", "expected printable ASCII of at most 200 characters"
            )
        values["cache_control"] = args.cache_control
    if args.no_compression:
        values["compression"] = False
    return values


def _host_values(args: argparse.Namespace) -> dict[str, object]:
    """--allowed-host, or the default for --host."""
    if args.allowed_host:
        for name in args.allowed_host:
            if not name or not _printable_ascii(name) or " " in name:
                raise InputError("--allowed-host", f"expected a host name, found {name!r}")
        return {"allowed_hosts": tuple(args.allowed_host)}
    from assay.web.hosts import default_allowed_hosts

    return {"allowed_hosts": default_allowed_hosts(getattr(args, "host", "127.0.0.1"))}


def _printable_ascii(text: str) -> bool:
    return text.isascii() and text.isprintable()


def _limit_values(args: argparse.Namespace) -> dict[str, object]:
    """The numeric limits of LIMIT_OPTIONS, and --snapshots."""
    from assay.nvd.server.bounds import MAX_THREADS

    values: dict[str, object] = {
        field: _limit(option, field, getattr(args, field))
        for option, field, _, _ in LIMIT_OPTIONS
        if getattr(args, field) is not None
    }
    values.update(_snapshot_values(args))
    upload_threads = values.get("upload_threads")
    if isinstance(upload_threads, int) and upload_threads > MAX_THREADS:
        raise InputError("--upload-threads", f"expected 1 to {MAX_THREADS}, found {upload_threads}")
    return values


def _limit(option: str, field: str, value: float) -> float:
    """One limit, checked: above 0, at most MAX_LIMIT, and whole for a whole-number field
    (argparse gives floats; such a field keeps the value only if int() does)."""
    convert = int if field in INTEGER_FIELDS else float
    if not 0 < value <= MAX_LIMIT or convert(value) != value:
        raise InputError(
            option,
            f"expected {_LIMIT_KINDS[convert]} above 0 and at most {MAX_LIMIT}, found {value:g}",
        )
    return convert(value)


def _snapshot_values(args: argparse.Namespace) -> dict[str, object]:
    """--snapshots (a command without the option has none)."""
    folder = getattr(args, "snapshots", None)
    if folder is None:
        return {}
    if not os.path.isdir(folder):
        raise InputError("--snapshots", f"{folder}: expected an existing folder")
    return {"snapshots": os.path.abspath(folder)}
