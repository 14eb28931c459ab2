"""`ApiSource`: vulnerabilities from an NVD API 2.0 (NVD itself, or an assay server).

The same queries as `StoreSource`, sent through assay's `NvdClient` with its pacing,
retries and time-outs (docs/client.md): NVD allows 5 requests per 30 s without a key and
50 with one, so a scan of many components against NVD itself is slow by NVD's design;
against an assay server there is no such limit (`wait_time=0`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import orjson

from assay.audit.model import SourceStatus
from assay.audit.source import PRODUCT_SAMPLE, DictionaryProduct, Found, Lookup, Record
from assay.errors import ClientError, InputError
from assay.nvd.cpe import Cpe, parse_cpe
from assay.urls import redact_url

__all__ = ["ApiSource"]

NVD_HOST = "services.nvd.nist.gov"


class ApiSource:
    """A `VulnerabilitySource` over an NVD API 2.0 base URL (`.../rest/json`)."""

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str | None = None,
        wait_time: int | None = None,
        transport: Any = None,
    ) -> None:
        from assay.nvd.client import NvdClient, base_url_problem

        problem = base_url_problem(base_url)
        if problem is not None:
            raise InputError("base_url", problem)
        if wait_time is None:
            # NVD's published limits (docs/client.md); an assay server has none.
            wait_time = (600 if api_key else 6000) if NVD_HOST in base_url else 0
        self.base_url = base_url
        self.shown_url = redact_url(base_url)
        """What messages and reports show: without a password or secret query values."""
        self._client = NvdClient(
            wait_time=wait_time,
            api_key=api_key,
            base_url=base_url.rstrip("/"),
            transport=transport,
            request_timeout=125_000,
        )
        self._cache: dict[str, Record] = {}

    def _cves(self, **params: Any) -> list[Record]:
        from assay.nvd.client import NvdClientError

        try:
            return [self._keep(cve.raw) for cve in self._client.iter_cves(**params)]
        except NvdClientError as error:
            raise ClientError(f"{self.shown_url}: {error}") from error

    def _keep(self, record: Record) -> Record:
        key = str(record.get("id"))
        return self._cache.setdefault(key, record)

    def status(self) -> SourceStatus:
        from assay.nvd.client import NvdClientError

        try:
            result = self._client.get_cves(results_per_page=1, start_index=0)
        except NvdClientError as error:
            raise ClientError(f"{self.shown_url}: {error}") from error
        return SourceStatus(
            generation=None,
            last_sync=result.timestamp or None,
            cve_count=result.total_results,
            url=self.shown_url,
        )

    def affecting(self, name: Cpe) -> Sequence[Record]:
        return self._cves(cpe_name=name.formatted(), is_vulnerable=True)

    def of_product(self, part: str, vendor: str, product: str) -> Sequence[Record]:
        return self._cves(virtual_match_string=f"cpe:2.3:{part}:{vendor}:{product}")

    def find(
        self, lookups: Sequence[Lookup], progress: Callable[[int], None] | None = None
    ) -> Iterator[Found]:
        # One request (or page run) per look-up: the API answers one filter at a time.
        found: dict[str, tuple[Record, list[int]]] = {}
        for index, lookup in enumerate(lookups):
            name = lookup.name
            records = (
                self.of_product(name.part, name.vendor, name.product)
                if lookup.product_wide
                else self.affecting(name)
            )
            for record in records:
                found.setdefault(str(record.get("id")), (record, []))[1].append(index)
            if progress is not None:
                progress(index + 1)
        for record, indexes in found.values():
            yield orjson.dumps(record), tuple(indexes)

    def products_with_reference(self, url: str) -> Sequence[DictionaryProduct]:
        from assay.nvd.client import NvdClientError

        words = url.split("://", 1)[-1]
        try:
            result = self._client.get_cpes(
                keyword_search=words, keyword_exact_match=True, results_per_page=200
            )
        except NvdClientError as error:
            raise ClientError(f"{self.shown_url}: {error}") from error
        found = []
        for item in result.products:
            raw = item.cpe.raw
            cpe = _parsed(raw.get("cpeName"), partial=False)
            if cpe is None:
                continue
            refs = tuple(str(r.get("ref")) for r in raw.get("refs") or () if isinstance(r, dict))
            found.append(DictionaryProduct(cpe, refs))
        return found

    def vendors_of(self, product: str) -> Sequence[tuple[str, str]]:
        from assay.nvd.client import NvdClientError

        try:
            pattern = f"cpe:2.3:*:*:{product}"
            products = self._client.get_cpes(
                cpe_match_string=pattern, results_per_page=PRODUCT_SAMPLE
            )
            cves = self._client.get_cves(
                virtual_match_string=pattern, results_per_page=PRODUCT_SAMPLE
            )
        except (NvdClientError, ValueError) as error:
            raise ClientError(f"{self.shown_url}: {error}") from error
        named = (_parsed(item.cpe.raw.get("cpeName"), partial=False) for item in products.products)
        hit = (
            cpe
            for vulnerability in cves.vulnerabilities
            for cpe in _criteria(vulnerability.cve.raw)
            if cpe.product == product
        )
        found = {(cpe.part, cpe.vendor): None for cpe in (*named, *hit) if cpe is not None}
        return list(found)

    def close(self) -> None:
        self._client.close()


def _parsed(text: object, *, partial: bool) -> Cpe | None:
    """A CPE name as the API gave it, or None when it is not one."""
    try:
        return parse_cpe(str(text), partial=partial)
    except InputError:
        return None


def _criteria(record: Record) -> Iterator[Cpe]:
    """The criteria of a record's configurations (top-level nodes, as NVD 2.0 gives them)."""
    for configuration in record.get("configurations") or ():
        for node in configuration.get("nodes") or ():
            for match in node.get("cpeMatch") or ():
                cpe = _parsed(match.get("criteria"), partial=True)
                if cpe is not None:
                    yield cpe
