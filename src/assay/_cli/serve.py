"""`assay serve`: the NVD API 2.0 over HTTP, from a store."""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING

from assay._cli import EXIT_OK, CommandTree
from assay.config import STORE_ENV, default_store_url
from assay.errors import InputError
from assay.nvd.server._memory import DEFAULT_RESERVE_MIB, RESERVE_ENV

if TYPE_CHECKING:
    from assay.nvd.server.service import ServiceSettings


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
    add_service_options(parser)


def serve(args: argparse.Namespace) -> int:
    import uvicorn

    from assay.nvd.server._memory import reserve_from_text
    from assay.nvd.server.service import SERVICE_ENV
    from assay.nvd.storage import open_store

    service = service_settings(args)
    if args.reserve_memory is not None:
        reserve_from_text(args.reserve_memory, "--reserve-memory")
        os.environ[RESERVE_ENV] = args.reserve_memory.strip()
    url = args.store or default_store_url()
    from assay.nvd.server.app import check_store

    store = open_store(url)  # create or migrate once, and fail early on a bad URL
    try:
        check_store(store)  # or on a damaged store (exit 2, rather than workers that die)
    finally:
        store.close()
    os.environ[STORE_ENV] = url
    os.environ[SERVICE_ENV] = service.to_environment()
    if args.compat == "nvd-api":
        os.environ["ASSAY_LEGACY_FIELDS_ONLY"] = "1"
    uvicorn.run(
        "assay.nvd.server.app:app_from_environment",
        factory=True,
        host=args.host,
        port=args.port,
        workers=max(1, args.workers),
        log_level=os.environ.get("ASSAY_LOG_LEVEL", "warning").lower(),
        access_log=False,
        server_header=False,
    )
    return EXIT_OK


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


def service_settings(args: argparse.Namespace) -> ServiceSettings:
    """The service options as settings; a bad value is an `InputError` naming its option."""
    from assay.nvd.server.bounds import MAX_SQLITE_CACHE_MIB, MAX_THREADS
    from assay.nvd.server.service import ServiceSettings

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
    return ServiceSettings(**values)  # type: ignore[arg-type]
