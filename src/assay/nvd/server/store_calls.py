"""Store operations asked from the event loop: `await in_store_thread(store, fn, *args)`.

They run in a worker thread (the bounded pool of `bounds.py`). On a store whose server can
stop answering without refusing (PostgreSQL behind a network that drops packets, or a
server stuck), a read waits on its socket for ever: such a store says how long an
operation may take (`operation_timeout`, `assay serve --store-timeout`), and the request
stops waiting then with a `StoreError` (the handlers answer 503). The thread stays on
its socket until the connection's own bounds end it (TCP keepalives, `tcp_user_timeout`,
the server's `statement_timeout`: `storage/postgres.py`); it holds one of the store's
pooled connections meanwhile, so at most the pool's size of them are stuck, and further
requests find no free connection within the timeout and get their 503 as promptly.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any, TypeVar

import anyio
import anyio.to_thread

from assay.errors import StoreError

T = TypeVar("T")


class StoreUnresponsive(StoreError):
    """The store did not answer within its operation timeout."""


def operation_timeout(store: object) -> float | None:
    """Seconds an operation on `store` may take before a request gives up (None: no bound,
    for stores on local files)."""
    timeout = getattr(store, "operation_timeout", None)
    return float(timeout) if isinstance(timeout, int | float) and timeout > 0 else None


async def in_store_thread(store: object, function: Callable[..., T], *args: Any) -> T:
    """`function(*args)` in a worker thread, bounded by the store's operation timeout."""
    call = partial(function, *args)
    timeout = operation_timeout(store)
    if timeout is None:
        return await anyio.to_thread.run_sync(call)
    try:
        with anyio.fail_after(timeout):
            return await anyio.to_thread.run_sync(call, abandon_on_cancel=True)
    except TimeoutError:
        raise StoreUnresponsive(f"the store did not answer within {timeout:g} s") from None
