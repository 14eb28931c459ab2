"""`assay serve`: the NVD API 2.0 over HTTP, from a store."""

from __future__ import annotations

import argparse
import os
import signal
import sys

from assay._cli import EXIT_OK, CommandTree
from assay.config import STORE_ENV, default_store_url
from assay.nvd.server._memory import DEFAULT_RESERVE_MIB, RESERVE_ENV


def register(tree: CommandTree) -> None:
    parser = tree.command("serve", help="Serve the NVD API 2.0 from a store.", handler=serve)
    parser.add_argument(
        "--store",
        default=None,
        help=f"store URL (default: ${STORE_ENV} or a SQLite file in the user data directory)",
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
    add_web_arguments(parser)


# -- the web part: pages, start-up manners, access log -----------------------------------


def add_web_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--create",
        action="store_true",
        help="create the store when it does not exist (otherwise a missing store is an error)",
    )
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
    from assay._cli import fatal
    from assay.nvd.storage import open_store
    from assay.web.app import ACCESS_LOG_ENV
    from assay.web.serving import (
        EMPTY_WARNING,
        port_problem,
        startup_line,
        store_exists,
    )
    from assay.web.store_state import count_state, masked_url

    if not args.create and not store_exists(url):
        fatal(
            f"--store {masked_url(url)}: no store there; give --create to make a new, empty "
            "one, or load one with `assay nvd import --store ...`"
        )
    problem = port_problem(args.host, args.port)
    if problem is not None:
        fatal(problem)
    from assay.nvd.server.app import check_store

    store = open_store(url)  # create or migrate once, and fail early on a bad URL
    try:
        check_store(store)  # or on a damaged store (exit 2, rather than workers that die)
        state = count_state(store)
    finally:
        store.close()
    print(
        startup_line(args.host, args.port, max(1, args.workers), state), file=sys.stderr, flush=True
    )
    if state.empty:
        print(EMPTY_WARNING, file=sys.stderr, flush=True)
    if args.access_log:
        os.environ[ACCESS_LOG_ENV] = args.log_format
    else:
        os.environ.pop(ACCESS_LOG_ENV, None)


# -- end of the web part ------------------------------------------------------------------


def serve(args: argparse.Namespace) -> int:
    from assay.nvd.server._memory import reserve_from_text

    if args.reserve_memory is not None:
        reserve_from_text(args.reserve_memory, "--reserve-memory")
        os.environ[RESERVE_ENV] = args.reserve_memory.strip()
    url = args.store or default_store_url()
    prepare_web(args, url)
    os.environ[STORE_ENV] = url
    if args.compat == "nvd-api":
        os.environ["ASSAY_LEGACY_FIELDS_ONLY"] = "1"
    # uvicorn stops gracefully on Ctrl-C and then re-raises the signal to the handler it
    # found: make that a no-op so the stop stays clean (no KeyboardInterrupt mid-shutdown).
    previous = signal.signal(signal.SIGINT, _ignore_signal)
    try:
        _run_uvicorn(args)
    finally:
        signal.signal(signal.SIGINT, previous)
    print("assay stopped", file=sys.stderr, flush=True)
    return EXIT_OK


def _ignore_signal(signum: int, frame: object) -> None:
    return None


def _run_uvicorn(args: argparse.Namespace) -> None:
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
    )
