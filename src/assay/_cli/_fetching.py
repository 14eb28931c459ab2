"""What every fetching command shares: the flags that say where evidence comes from
(the network and the cache, the cache only, or a directory written by `assay fetch`), and
the sources they select. Imports nothing heavy at the top."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from assay._cli._options import Argument, exclusive, option

TIMEOUT = option(
    "--timeout", type=float, default=30.0, metavar="SECONDS", help="per request (default 30)"
)

# Where evidence comes from and how long a request may take.
FETCH: tuple[Argument, ...] = (
    exclusive(
        option(
            "--offline", action="store_true", help="verify only from the cache, never the network"
        ),
        option(
            "--attestation-dir",
            metavar="DIR",
            help="verify only from a directory written by `assay fetch --out DIR`",
        ),
    ),
    option("--cache-dir", metavar="DIR", help="the cache (default $XDG_CACHE_HOME/assay)"),
    TIMEOUT,
)


def source_for(args: argparse.Namespace) -> tuple[Any, Any]:
    """(attestation source, registry client to close or None) for the flags."""
    from assay.registry.cache import Cache, CachingClient, OfflineClient, default_cache_dir

    if args.attestation_dir:
        return OfflineClient(Cache(Path(args.attestation_dir))), None
    cache = Cache(Path(args.cache_dir) if args.cache_dir else default_cache_dir())
    if args.offline:
        return OfflineClient(cache), None
    from assay.registry.client import RegistryClient

    client = RegistryClient(timeout=args.timeout)
    return CachingClient(client, cache), client


def api_for(args: argparse.Namespace, headers: dict[str, str] | None = None) -> Any:
    from assay.registry.api import ApiClient
    from assay.registry.cache import Cache, default_cache_dir

    if getattr(args, "attestation_dir", None):
        return ApiClient(cache=Cache(Path(args.attestation_dir)), offline=True)
    cache = Cache(Path(args.cache_dir) if args.cache_dir else default_cache_dir())
    return ApiClient(cache=cache, offline=args.offline, timeout=args.timeout, headers=headers)
