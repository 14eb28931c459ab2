"""The pages whose form posts files to work on (`/scan`, `/verify`): GET shows the
form; POST reads it in memory (`assay.web.uploads`), does the page's work in an upload
thread (`assay.web.upload_pool`: its own pool, within the upload's time budget,
abandoned when the client leaves) and renders the outcome, or answers it as JSON when
the form asks for it (`format=json`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, Generic, TypeVar

from starlette.requests import Request
from starlette.responses import Response

from assay.errors import AssayError
from assay.nvd.storage import Store
from assay.web.templating import render
from assay.web.upload_pool import Budget, UploadPool, failure_page
from assay.web.uploads import Form, human_bytes, posted_form

Outcome = TypeVar("Outcome")


class UploadFormPages(Generic[Outcome]):
    """GET and POST of one form page; a page says its template, its form's size limit,
    its work and how its outcome is shown."""

    template: ClassVar[str]
    form_bytes: ClassVar[int]

    def __init__(self, store: Store, uploads: UploadPool | None = None) -> None:
        self.store = store
        self.uploads = uploads or UploadPool.default()

    def _page_context(self) -> dict[str, Any]:
        """What the page shows besides the form and its limit."""
        return {}

    def _work(self, form: Form) -> Callable[[Budget], Outcome]:
        """The work the posted form asks for (an `InputError` when it is unusable)."""
        raise NotImplementedError

    def _shown(self, outcome: Outcome) -> dict[str, Any]:
        """What the page shows of an outcome."""
        raise NotImplementedError

    def _json(self, outcome: Outcome) -> bytes:
        raise NotImplementedError

    def _context(self, form: Form | None = None) -> dict[str, Any]:
        return {
            **self._page_context(),
            "limit": human_bytes(self.form_bytes),
            "form": {} if form is None else form.first_values(),
        }

    async def form(self, request: Request) -> Response:
        return render(request, self.template, self._context())

    async def submit(self, request: Request) -> Response:
        form = await posted_form(request, self.form_bytes)
        if isinstance(form, Response):
            return form
        context = self._context(form)
        as_json = form.value("format") == "json"
        try:
            outcome = await self.uploads.run(request, self._work(form))
        except AssayError as error:
            return failure_page(request, error, self.template, context, as_json=as_json)
        if as_json:
            return Response(self._json(outcome), media_type="application/json")
        return render(request, self.template, {**context, **self._shown(outcome)})
