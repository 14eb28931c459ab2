"""The NVD pages: search, a CVE, a product, a match criteria, product search.

Each handler parses its input into the query the API would run (`assay.nvd.*_query`),
asks the store through the same methods the API uses, and renders a template. Every list
links its JSON twin: the API URL that returns the same records.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

import orjson
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from assay.errors import InputError, QueryError, StoreError
from assay.nvd.cpe_query import MAX_RESULTS_PER_PAGE as CPE_MAX
from assay.nvd.cpe_query import parse_cpe_query
from assay.nvd.cpematch_query import MAX_RESULTS_PER_PAGE as CRITERIA_MAX
from assay.nvd.cpematch_query import parse_cpematch_query
from assay.nvd.cve_match_strings import derived_record
from assay.nvd.cve_query import MAX_RESULTS_PER_PAGE as CVE_MAX
from assay.nvd.cve_query import parse_cve_query
from assay.nvd.history_query import parse_history_query
from assay.nvd.server.store_calls import in_store_thread
from assay.nvd.storage import Page, Store
from assay.web.cve_view import (
    SourcesView,
    cve5_cve_view,
    cve_view,
    cwe_name,
    osv_advisories,
    sources_view,
)
from assay.web.search import DEFAULT_PAGE_SIZE, PAGE_SIZES, Pager, SearchPlan, search_plan
from assay.web.store_state import STORE_UNAVAILABLE, StateCache, log_store_error
from assay.web.templating import cve_href, render

MAX_QUERY_BYTES = 16 * 1024
HISTORY_SHOWN = 200  # changes listed on a CVE page; the JSON twin has them all


def _page_size(request: Request, default: int, maximum: int) -> tuple[int, int]:
    """(resultsPerPage, startIndex) of a listing page, within the API's limits."""
    values: list[int] = []
    for name, fallback in (("resultsPerPage", default), ("startIndex", 0)):
        text = request.query_params.get(name, "").strip()
        if not text:
            values.append(fallback)
            continue
        if not text.isdigit() or len(text) > 9:
            raise QueryError(name, f"{name}: expected a whole number, found {text[:40]!r}")
        values.append(int(text))
    size, start = values
    if not 1 <= size <= maximum:
        raise QueryError("resultsPerPage", f"resultsPerPage: expected 1 to {maximum}, found {size}")
    return size, start


def _records(page: Page) -> list[dict[str, Any]]:
    return [orjson.loads(record) for record in page.records]


class WebPages:
    def __init__(self, store: Store, state: StateCache) -> None:
        self.store = store
        self.state = state

    async def _ask(self, function: Callable[..., Page], query: object) -> Page:
        return await in_store_thread(self.store, function, query)

    def _error(self, request: Request, status: int, title: str, message: str) -> Response:
        return render(request, "error.html", {"title": title, "message": message}, status=status)

    def _store_down(self, request: Request, error: StoreError) -> Response:
        log_store_error(error)  # (the details name the server: for the log, not the page)
        return self._error(request, 503, "Store unavailable", STORE_UNAVAILABLE)

    def _search_failed(
        self,
        request: Request,
        template: str,
        context: dict[str, Any],
        error: QueryError | StoreError,
    ) -> Response:
        """A search page again with its query's error (400), or the store-down page."""
        if isinstance(error, StoreError):
            return self._store_down(request, error)
        context["error"] = error.reason
        return render(request, template, context, status=400)

    # -- / : search ----------------------------------------------------------------

    async def home(self, request: Request) -> Response:
        if len(request.scope.get("query_string", b"")) > MAX_QUERY_BYTES:
            return self._error(request, 400, "Query too long", f"at most {MAX_QUERY_BYTES} bytes")
        form = dict(request.query_params)
        context: dict[str, Any] = {
            "form": form,
            "page_sizes": PAGE_SIZES,
            "default_page_size": DEFAULT_PAGE_SIZE,
        }
        try:
            state = await in_store_thread(self.store, self.state.read)
        except StoreError as error:
            return self._store_down(request, error)
        context["state"] = state
        try:
            plan = search_plan(form)
            if plan.redirect_cve:
                return RedirectResponse(cve_href(plan.redirect_cve), status_code=303)
            context["plan"] = plan
            if plan.empty:
                return render(request, "index.html", context)
            count_query = parse_cve_query([*plan.pairs, ("resultsPerPage", "0")])
            total = (await self._ask(self.store.search_cves, count_query)).total
            records, json_query = await self._page_of(plan, total)
        except (QueryError, StoreError) as error:
            return self._search_failed(request, "index.html", context, error)
        context.update(
            results=[cve_view(record) for record in records],
            pager=Pager(total, plan.start_index, plan.page_size),
            json_twin=f"/rest/json/cves/2.0?{json_query or plan.api_query(plan.start_index)}",
            page_link=_page_links(request),
        )
        return render(request, "index.html", context)

    async def _page_of(self, plan: SearchPlan, total: int) -> tuple[list[dict[str, Any]], str]:
        """The records the page shows, in its order, and the API query that gives them."""
        api_start, api_size = _api_window(plan, total)
        if api_size <= 0:
            return [], ""
        pairs = [
            *plan.pairs,
            ("resultsPerPage", str(api_size)),
            ("startIndex", str(api_start)),
        ]
        records = _records(await self._ask(self.store.search_cves, parse_cve_query(pairs)))
        if plan.newest_first:
            records.reverse()
        return records, urlencode(pairs)

    # -- /cve/{id} -------------------------------------------------------------------

    async def cve(self, request: Request) -> Response:
        cve_id = request.path_params["cve_id"]
        try:
            query = parse_cve_query([("cveId", cve_id)])
        except QueryError:
            return self._error(
                request, 404, "Not a CVE id", "A CVE id looks like CVE-2024-3094 (CVE-year-number)."
            )
        assert query.cve_id is not None
        if query.cve_id != cve_id:
            return RedirectResponse(cve_href(query.cve_id), status_code=301)
        try:
            page = await self._ask(self.store.search_cves, query)
            history_query = parse_history_query(
                [("cveId", cve_id), ("resultsPerPage", str(HISTORY_SHOWN))]
            )
            history = await self._ask(self.store.search_changes, history_query)
        except StoreError as error:
            return self._store_down(request, error)
        history_twin = f"/rest/json/cvehistory/2.0?{urlencode({'cveId': cve_id})}"
        try:
            cve5, sources = await in_store_thread(self.store, _cve_sources, self.store, cve_id)
        except StoreError as error:
            return self._error(request, 503, "Store unavailable", str(error))
        if page.records:
            view = cve_view(orjson.loads(page.records[0]))
        elif cve5 is not None:
            view = cve5_cve_view(cve5, sources)
        else:
            return _not_in_store(request, cve_id, history.total, history_twin)
        changes = list(_records(history))
        return render(
            request,
            "cve.html",
            {
                "cve": view,
                "sources": sources,
                "nvd_present": bool(page.records),
                "cwe_name": cwe_name,
                "changes": changes,
                "changes_total": history.total,
                "json_twin": f"/rest/json/cves/2.0?{urlencode({'cveId': cve_id})}",
                "history_twin": history_twin,
                "criteria_twin": f"/rest/json/cpematch/2.0?{urlencode({'cveId': cve_id})}",
            },
        )

    # -- /criteria/{id} ---------------------------------------------------------------

    async def criteria(self, request: Request) -> Response:
        criteria_id = request.path_params["criteria_id"]
        try:
            size, start = _page_size(request, 100, CRITERIA_MAX)
            query = parse_cpematch_query([("matchCriteriaId", criteria_id)])
        except QueryError as error:
            return self._error(request, 404, "Not a match criteria id", error.reason)
        try:
            page = await self._ask(self.store.search_match_strings, query)
        except StoreError as error:
            return self._store_down(request, error)
        if page.records:
            raw, derived_from = page.records[0], None
        else:
            derived = await self._derived(request, criteria_id, query.match_criteria_id or "")
            if isinstance(derived, Response):
                return derived
            raw, derived_from = derived
        record = orjson.loads(raw)
        matches = record.get("matches") or []
        return render(
            request,
            "criteria.html",
            {
                "record": record,
                "range_text": _criteria_range(record),
                "matches": matches[start : start + size],
                "pager": Pager(len(matches), start, size),
                "page_link": _page_links(request),
                "json_twin": _criteria_twin(derived_from, query.match_criteria_id),
                "cves_link": "/?" + urlencode({"q": record.get("criteria", "")}),
                "derived_from": derived_from,
            },
        )

    async def _derived(
        self, request: Request, criteria_id: str, wanted: str
    ) -> tuple[bytes, str] | Response:
        """A criteria the store holds no record of, made up from a CVE that names it (as
        the API's `cpematch?cveId=` completes it, docs/nvd-compatibility.md), with that
        CVE's id; else the error page."""
        try:
            derived = await in_store_thread(self.store, derived_record, self.store, wanted)
        except StoreError as error:
            return self._error(request, 503, "Store unavailable", str(error))
        if derived is None:
            return self._error(
                request,
                404,
                "Match criteria not in this store",
                f"No match criteria {criteria_id} here: no CVE of this store names it, "
                "and the store does not hold its record (assay nvd import / sync cpematch).",
            )
        return derived

    # -- /cpe/{name} : one product and its CVEs --------------------------------------------

    async def product(self, request: Request) -> Response:
        name = request.path_params["cpe_name"]
        vulnerable = bool(request.query_params.get("vulnerable"))
        try:
            size, start = _page_size(request, DEFAULT_PAGE_SIZE, CVE_MAX)
            pairs = [("cpeName", name)]
            if vulnerable:
                pairs.append(("isVulnerable", ""))
            paging = [("resultsPerPage", str(size)), ("startIndex", str(start))]
            cve_query = parse_cve_query([*pairs, *paging])
            assert cve_query.cpe_name is not None
            product_query = parse_cpe_query([("cpeMatchString", name), ("resultsPerPage", "50")])
        except QueryError as error:
            return self._error(request, 404, "Not a CPE name", error.reason)
        try:
            products = _records(await self._ask(self.store.search_cpes, product_query))
            cves = await self._ask(self.store.search_cves, cve_query)
        except StoreError as error:
            return self._store_down(request, error)
        wanted = cve_query.cpe_name
        product = next((p for p in products if _same_cpe(p.get("cpeName", ""), wanted)), None)
        return render(
            request,
            "cpe.html",
            {
                "name": name,
                "product": product,
                "vulnerable": vulnerable,
                "results": [cve_view(r) for r in _records(cves)],
                "pager": Pager(cves.total, start, size),
                "page_link": _page_links(request),
                "json_twin": f"/rest/json/cves/2.0?{urlencode([*pairs, *paging])}",
                "product_twin": _product_twin(product, name),
            },
        )

    # -- /cpe : product search ------------------------------------------------------------

    async def products(self, request: Request) -> Response:
        text = request.query_params.get("q", "").strip()
        context: dict[str, Any] = {"q": text, "results": None}
        if not text:
            return render(request, "products.html", context)
        try:
            size, start = _page_size(request, 50, CPE_MAX)
            key = "cpeMatchString" if text.lower().startswith("cpe:") else "keywordSearch"
            pairs = [(key, text), ("resultsPerPage", str(size)), ("startIndex", str(start))]
            query = parse_cpe_query(pairs)
            page = await self._ask(self.store.search_cpes, query)
        except (QueryError, StoreError) as error:
            return self._search_failed(request, "products.html", context, error)
        context.update(
            results=_records(page),
            pager=Pager(page.total, start, size),
            page_link=_page_links(request),
            json_twin=f"/rest/json/cpes/2.0?{urlencode(pairs)}",
        )
        return render(request, "products.html", context)


def _page_links(request: Request) -> Callable[[int], str]:
    """The link to the page starting at an index, the request's other parameters kept."""
    form = dict(request.query_params)
    return lambda start: _with(form, startIndex=str(start))


def _criteria_twin(derived_from: str | None, criteria_id: str | None) -> str:
    """The match criteria API query for the record: by the CVE it was made up from."""
    if derived_from:
        return f"/rest/json/cpematch/2.0?{urlencode({'cveId': derived_from})}"
    return f"/rest/json/cpematch/2.0?{urlencode({'matchCriteriaId': criteria_id})}"


def _product_twin(product: dict[str, Any] | None, name: str) -> str:
    """The CPE API query for the product: by its id when the store holds it."""
    if product and product.get("cpeNameId"):
        return f"/rest/json/cpes/2.0?{urlencode({'cpeNameId': product['cpeNameId']})}"
    return f"/rest/json/cpes/2.0?{urlencode({'cpeMatchString': name})}"


def _with(form: dict[str, str], **changes: str) -> str:
    merged = {**form, **changes}
    return "?" + urlencode({k: v for k, v in merged.items() if v != ""})


def _same_cpe(text: str, wanted: object) -> bool:
    from assay.nvd.cpe import parse_cpe

    try:
        return parse_cpe(text, partial=True) == wanted
    except InputError:
        return False


def _criteria_range(record: dict[str, Any]) -> str:
    from assay.web.cve_view import version_range

    return version_range(record)


def _cve_sources(store: object, cve_id: str) -> tuple[Any, SourcesView]:
    """The CVE 5 record (`assay.cve5.record.CveRecord`, or None) and what every source
    the store holds says of `cve_id`; nothing for a store without those tables."""
    record = None
    kev: dict[str, Any] | None = None
    epss: tuple[float, float, str, str] | None = None
    if hasattr(store, "cve5_records"):
        from assay.cve5.record import read_record
        from assay.nvd.storage.cve5 import cve5_store

        tables = cve5_store(store)
        raw = tables.cve5_records([cve_id]).get(cve_id)
        record = None if raw is None else read_record(raw, f"stored CVE 5 record {cve_id}")
        entry = tables.kev_entries([cve_id]).get(cve_id)
        kev = None if entry is None else entry.to_dict()
        scored = tables.epss_scores([cve_id]).get(cve_id)
        if scored is not None:
            epss = (scored[0].score, scored[0].percentile, scored[1], scored[2])
    by_alias = getattr(store, "osv_by_alias", None)
    osv = osv_advisories(by_alias(cve_id)) if callable(by_alias) else []
    return record, sources_view(cve_id, record, kev=kev, epss=epss, osv=osv)


def _api_window(plan: SearchPlan, total: int) -> tuple[int, int]:
    """(startIndex, resultsPerPage) of the API page that holds the page shown."""
    if not plan.newest_first:
        return plan.start_index, plan.page_size
    # The API orders by publication, oldest first: take the page from the end.
    end = max(0, total - plan.start_index)
    api_start = max(0, end - plan.page_size)
    return api_start, end - api_start


def _not_in_store(request: Request, cve_id: str, changes: int, history_twin: str) -> Response:
    message = (
        "The mirror holds no record with this id. It may be newer than the last "
        "import or sync, or reserved but not published."
    )
    if changes:
        message += f" It does hold {changes} change history entries for it."
    return render(
        request,
        "error.html",
        {
            "title": f"{cve_id} is not in this store",
            "message": message,
            "json_twin": history_twin if changes else None,
        },
        status=404,
    )
