"""What `assay serve` checks and says before it takes requests.

A store that does not exist is refused (a mistyped path would otherwise become an empty
store answering `totalResults: 0`, which reads as "no vulnerabilities"); a taken port is
one line, not a traceback; the start-up line names the URL, the store (secrets masked),
its counts and its generation.
"""

from __future__ import annotations

import errno
import socket

from assay.nvd.storage import BufferFit
from assay.urls import redact_url
from assay.web.store_state import StoreState


def port_problem(host: str, port: int) -> str | None:
    """Why `host:port` cannot be listened on, or None when it can (checked by binding)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as error:
        return f"--host {host}: cannot resolve it ({error.strerror})"
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as error:
            if error.errno == errno.EADDRINUSE:
                return f"port {port} on {host} is already in use: stop what listens there or give --port"
            if error.errno == errno.EACCES:
                return (
                    f"port {port} on {host}: permission denied (ports below 1024 need privileges)"
                )
            return f"cannot listen on {host}:{port}: {error.strerror}"
    return None


def base_url(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/"


def startup_line(host: str, port: int, workers: int, state: StoreState) -> str:
    """The one line `assay serve` prints when it starts."""
    plural = "s" if workers != 1 else ""
    return (
        f"assay serving {base_url(host, port)} ({workers} worker{plural}) from {redact_url(state.url)}: "
        f"{state.cves:,} CVEs, {state.products:,} products, {state.criteria:,} match criteria, "
        f"generation {state.generation}"
    )


def buffers_warning(fit: BufferFit, where: str = "") -> str:
    """What `assay serve` says of a PostgreSQL store (`where`: which one, when it is
    not the --store) whose buffer cache cannot hold the full-text table and its index
    (`BufferFit.fits` false)."""
    return (
        f"warning: {where}PostgreSQL's shared_buffers ({_size(fit.shared_buffers)}) cannot hold "
        f"the full-text table and its index ({_size(fit.full_text)}): the largest "
        "keywordSearch answers read them again from the operating system each time, which "
        f"can double their time; set shared_buffers to {fit.advised_mib:,} MB or more "
        "(docs/scale.md)"
    )


def _size(size: int) -> str:
    return f"{size / (1 << 20):,.0f} MB" if size >= 1 << 20 else f"{size // 1024:,} kB"


EMPTY_WARNING = (
    "warning: the store is empty: every query answers totalResults 0, which does not mean "
    "'no vulnerabilities'; load it with `assay nvd import` or `assay nvd sync`"
)
