"""The work of uploads (`POST /api/scan`, the `/scan` and `/verify` forms), kept apart from
the store queries of the API and the pages.

Uploads run in their own bounded pool of threads (`UploadPool`, `--upload-threads` per
process), never in the threads that answer store queries, so that eight slow scans
cannot hold up a keyword search. A few more uploads may wait for a thread
(`WAITING_PER_THREAD` each); past that, the answer is 503 with `Retry-After` at once
(`UploadsBusy`) rather than a queue without end.

An admitted upload gets a `Budget`: its work must end within `--upload-timeout` seconds
of being admitted, and it stops when its client leaves (the connection's
`http.disconnect`). The work checks its budget at its steps (`Budget.check`, and every
look-up through `BudgetedSource`), raising `UploadStopped`; a step that cannot be cut (one
file being decoded) is bounded by the body size and the component cap instead
(`MAX_UPLOAD_COMPONENTS`, applied while reading).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Final, TypeVar

import anyio
import anyio.to_thread
import orjson
from anyio.lowlevel import RunVar
from starlette.requests import Request
from starlette.responses import Response

from assay.errors import AssayError
from assay.web.templating import render

if TYPE_CHECKING:
    from assay.audit.source import VulnerabilitySource

T = TypeVar("T")

WAITING_PER_THREAD: Final = 2
MAX_UPLOAD_COMPONENTS: Final = 10_000
"""Components of one upload, every input together (a scan costs ~10 ms a component)."""
CHECK_EVERY: Final = 64  # records a budgeted look-up yields between two checks


class UploadsBusy(AssayError):
    """Every upload thread is taken and the waiting line is full."""

    def __init__(self, retry_after: int) -> None:
        super().__init__(
            "the server is busy with other uploads; try again in a few seconds",
        )
        self.retry_after = retry_after


class UploadStopped(AssayError):
    """An upload's work stopped: its budget ran out (`over_budget`) or its client left."""

    def __init__(self, message: str, *, over_budget: bool) -> None:
        super().__init__(message)
        self.over_budget = over_budget


def upload_failure(error: AssayError) -> tuple[int, str, dict[str, str]]:
    """The HTTP status, message and headers of an upload that failed with `error`: 400
    for unusable input, 503 with `Retry-After` when the pool is full, 422 when the budget
    ran out, 499 when the client left, 503 for the store."""
    from assay.errors import InputError

    if isinstance(error, InputError):
        return 400, str(error), {}
    if isinstance(error, UploadsBusy):
        return 503, str(error), {"retry-after": str(error.retry_after)}
    if isinstance(error, UploadStopped):
        return (422 if error.over_budget else 499), str(error), {}
    return 503, error.diagnostics(), {}


def failure_page(
    request: Request, error: AssayError, template: str, context: dict[str, Any], *, as_json: bool
) -> Response:
    """An upload form's answer when its upload failed (`upload_failure`): `{"error": ...}`
    for `format=json`, else the form's page again with the message."""
    status, message, headers = upload_failure(error)
    if as_json:
        return Response(
            orjson.dumps({"error": message}),
            status_code=status,
            media_type="application/json",
            headers=headers,
        )
    context["error"] = message
    page = render(request, template, context, status=status)
    page.headers.update(headers)
    return page


class Budget:
    """What one upload may still spend: time until `deadline`, while its client stays."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.deadline = time.monotonic() + seconds
        self.gone = threading.Event()

    def check(self) -> None:
        """Raise `UploadStopped` when the client has left or the time is spent."""
        if self.gone.is_set():
            raise UploadStopped("the client closed the connection", over_budget=False)
        if time.monotonic() > self.deadline:
            raise UploadStopped(
                f"the upload needed more than {self.seconds:g} s of work; "
                "send fewer components at a time",
                over_budget=True,
            )


class UploadPool:
    """`threads` upload threads per event loop, and a bounded line waiting for them."""

    def __init__(self, threads: int, seconds: float) -> None:
        self.threads = threads
        self.seconds = seconds
        self.max_waiting = threads * WAITING_PER_THREAD
        self._limiter: RunVar[anyio.CapacityLimiter] = RunVar("assay_upload_limiter")

    def limiter(self) -> anyio.CapacityLimiter:
        try:
            return self._limiter.get()
        except LookupError:
            limiter = anyio.CapacityLimiter(self.threads)
            self._limiter.set(limiter)
            return limiter

    @classmethod
    def default(cls) -> UploadPool:
        """A pool of the service's default size and budget (`ServiceSettings`)."""
        from assay.nvd.server.service import ServiceSettings

        settings = ServiceSettings()
        return cls(settings.upload_threads, settings.upload_timeout)

    @property
    def retry_after(self) -> int:
        return max(1, min(30, round(self.seconds / 4)))

    async def run(self, request: Request, work: Callable[[Budget], T]) -> T:
        """`work(budget)` in an upload thread; `UploadsBusy` when none is to be had soon,
        `UploadStopped` when the budget ran out or the client left."""
        limiter = self.limiter()
        if limiter.available_tokens < 1 and limiter.statistics().tasks_waiting >= self.max_waiting:
            raise UploadsBusy(self.retry_after)
        budget = Budget(self.seconds)
        outcome: list[T] = []
        failure: list[Exception] = []

        async def watch() -> None:
            """Mark the budget when the client goes (the body is read: what arrives
            next is the disconnect)."""
            while True:
                message = await request.receive()
                if message["type"] == "http.disconnect":
                    budget.gone.set()
                    group.cancel_scope.cancel()  # (a wait for a thread ends at once)
                    return

        async def perform() -> None:
            try:
                outcome.append(
                    await anyio.to_thread.run_sync(_guarded, work, budget, limiter=limiter)
                )
            except Exception as error:  # raised below, outside the task group
                failure.append(error)
            finally:
                group.cancel_scope.cancel()

        async with anyio.create_task_group() as group:
            group.start_soon(watch)
            group.start_soon(perform)
        if failure:
            raise failure[0]
        if not outcome:
            raise UploadStopped("the client closed the connection", over_budget=False)
        return outcome[0]

    async def admitted(self, request: Request, handler: Callable[[Request], Any]) -> Any:
        """Run a whole upload handler in the pool's admission (`/verify`, whose work
        runs its own threads): `UploadsBusy` when the pool is full."""
        limiter = self.limiter()
        if limiter.available_tokens < 1 and limiter.statistics().tasks_waiting >= self.max_waiting:
            raise UploadsBusy(self.retry_after)
        async with limiter:
            return await handler(request)


def _guarded(work: Callable[[Budget], T], budget: Budget) -> T:
    """`work(budget)`, a reader that recursed past Python's limit (a deeply nested TOML,
    YAML or XML that no depth limit of its own caught) being an `InputError`, never a 500."""
    from assay.errors import InputError

    try:
        return work(budget)
    except RecursionError:
        raise InputError(
            "input", "nested too deeply to read (arrays, tables or elements inside each other)"
        ) from None


def check_component_count(count: int, where: str) -> None:
    """The upload's component cap (an `InputError` naming `where` past it)."""
    from assay.errors import InputError

    if count > MAX_UPLOAD_COMPONENTS:
        raise InputError(
            where,
            f"expected at most {MAX_UPLOAD_COMPONENTS} components per upload, found {count}",
        )


class BudgetedSource:
    """A vulnerability source whose every look-up checks an upload's budget first."""

    def __init__(self, inner: VulnerabilitySource, budget: Budget) -> None:
        self._inner = inner
        self._budget = budget

    def status(self) -> Any:
        self._budget.check()
        return self._inner.status()

    def affecting(self, name: Any) -> Sequence[Any]:
        self._budget.check()
        return self._inner.affecting(name)

    def of_product(self, part: str, vendor: str, product: str) -> Sequence[Any]:
        self._budget.check()
        return self._inner.of_product(part, vendor, product)

    def find(self, lookups: Sequence[Any], progress: Any = None) -> Iterator[Any]:
        self._budget.check()
        for count, found in enumerate(self._inner.find(lookups, progress), start=1):
            if count % CHECK_EVERY == 0:
                self._budget.check()
            yield found

    def products_with_reference(self, url: str) -> Sequence[Any]:
        self._budget.check()
        return self._inner.products_with_reference(url)

    def vendors_of(self, product: str) -> Sequence[tuple[str, str]]:
        self._budget.check()
        return self._inner.vendors_of(product)

    def close(self) -> None:
        """The store stays open: the server owns it."""

    def __getattr__(self, name: str) -> Any:
        # The look-ups of other sources the inner one may offer (OSV records by package,
        # CVE 5 records, KEV and EPSS): each checks the budget too, and one the inner source
        # lacks is missing here as well, so protocol checks see what the inner source is.
        if name.startswith("_"):  # never the wrapper's own state (copying, pickling)
            raise AttributeError(name)
        found = getattr(self._inner, name)
        if not callable(found):
            return found

        def checked(*args: Any, **kwargs: Any) -> Any:
            self._budget.check()
            return found(*args, **kwargs)

        return checked
