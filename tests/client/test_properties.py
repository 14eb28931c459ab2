"""Property tests: every valid argument set translates; paging yields each record once."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import parse_qsl

import httpx
import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assay.nvd.client import (
    CVE_HISTORY_EVENT_NAMES,
    CVE_TAGS,
    AsyncNvdClient,
    NvdClient,
    build_query,
    encode_query,
)
from assay.nvd.client._params import parameter_names

WIRE_DATE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00")

texts = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1, max_size=20
).filter(str.strip)
cve_ids = st.builds(
    "CVE-{}-{}".format,
    st.integers(1999, 2030),
    st.integers(0, 10**7).map(lambda n: f"{n:04d}"),
)
uuids = st.uuids().map(str)
parts = st.sampled_from(["a", "o", "h", "*"])
components = st.sampled_from(["*", "-", "microsoft", "linux_kernel", "1.2.3", "x64", "de"])
values = st.sampled_from(["microsoft", "linux_kernel", "1.2.3", "x64", "de", "8.83.27"])
cpe_partial = st.tuples(parts, st.lists(components, max_size=10)).map(
    lambda p: ":".join(["cpe", "2.3", p[0], *p[1]])
)
cpe_complete = st.tuples(parts, st.lists(components, min_size=10, max_size=10)).map(
    lambda p: ":".join(["cpe", "2.3", p[0], *p[1]])
)
cpe_names = st.tuples(
    st.sampled_from(["a", "o", "h"]),
    st.lists(values, min_size=3, max_size=3),
    st.lists(components, max_size=7),
).map(lambda p: ":".join(["cpe", "2.3", p[0], *p[1], *p[2]]))
aware = st.datetimes(
    min_value=datetime(2000, 1, 1),
    max_value=datetime(2030, 1, 1),
    timezones=st.sampled_from([UTC, None]),
)


@st.composite
def date_pair(draw: st.DrawFn, start: str, end: str) -> dict[str, Any]:
    begin = draw(aware)
    span = draw(st.timedeltas(timedelta(0), timedelta(days=120)))
    finish = begin + span
    as_text = draw(st.booleans())
    return {
        start: begin.isoformat() if as_text else begin,
        end: finish.isoformat() if as_text else finish,
    }


def maybe(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(st.none(), strategy)


@st.composite
def cves_kwargs(draw: st.DrawFn) -> dict[str, Any]:
    kwargs: dict[str, Any] = {
        "cve_id": draw(maybe(cve_ids)),
        "cve_ids": draw(maybe(st.lists(cve_ids, min_size=1, max_size=5))),
        "cve_tag": draw(maybe(st.sampled_from(CVE_TAGS))),
        "cwe_id": draw(maybe(st.integers(1, 2000).map("CWE-{}".format))),
        "source_identifier": draw(maybe(texts)),
        "has_cert_alerts": draw(st.booleans()),
        "has_cert_notes": draw(st.booleans()),
        "has_kev": draw(st.booleans()),
        "has_oval": draw(st.booleans()),
        "no_rejected": draw(st.booleans()),
        "results_per_page": draw(maybe(st.integers(0, 2000))),
        "start_index": draw(maybe(st.integers(0, 10**6))),
    }
    version = draw(st.sampled_from(["2", "3", "4"]))
    kwargs[f"cvss_v{version}_metrics"] = draw(maybe(st.just("AV:N/AC:L")))
    severities = ["LOW", "MEDIUM", "HIGH"] + ([] if version == "2" else ["CRITICAL"])
    kwargs[f"cvss_v{version}_severity"] = draw(maybe(st.sampled_from(severities)))
    if draw(st.booleans()):
        kwargs["keyword_search"] = draw(texts)
        kwargs["keyword_exact_match"] = draw(st.booleans())
    if draw(st.booleans()):
        kwargs["cpe_name"] = draw(cpe_names)
        kwargs["is_vulnerable"] = draw(st.booleans())
    elif draw(st.booleans()):
        vms = draw(cpe_partial)
        kwargs["virtual_match_string"] = ":".join(vms.split(":")[:5])  # no version field
        for side in ("start", "end"):
            if draw(st.booleans()):
                kwargs[f"version_{side}"] = draw(st.sampled_from(["1.0", "2.6.32", "9"]))
                kwargs[f"version_{side}_type"] = draw(st.sampled_from(["including", "excluding"]))
    for prefix in ("last_mod", "pub", "kev"):
        if draw(st.booleans()):
            kwargs.update(draw(date_pair(f"{prefix}_start_date", f"{prefix}_end_date")))
    return kwargs


@st.composite
def history_kwargs(draw: st.DrawFn) -> dict[str, Any]:
    kwargs: dict[str, Any] = {
        "cve_id": draw(maybe(cve_ids)),
        "event_name": draw(maybe(st.sampled_from(CVE_HISTORY_EVENT_NAMES))),
        "results_per_page": draw(maybe(st.integers(0, 5000))),
        "start_index": draw(maybe(st.integers(0, 10**6))),
    }
    if draw(st.booleans()):
        kwargs.update(draw(date_pair("change_start_date", "change_end_date")))
    return kwargs


@st.composite
def cpes_kwargs(draw: st.DrawFn) -> dict[str, Any]:
    kwargs: dict[str, Any] = {
        "cpe_name_id": draw(maybe(uuids)),
        "cpe_match_string": draw(maybe(cpe_partial)),
        "match_criteria_id": draw(maybe(uuids)),
        "results_per_page": draw(maybe(st.integers(0, 10000))),
        "start_index": draw(maybe(st.integers(0, 10**6))),
    }
    if draw(st.booleans()):
        kwargs["keyword_search"] = draw(texts)
        kwargs["keyword_exact_match"] = draw(st.booleans())
    if draw(st.booleans()):
        kwargs.update(draw(date_pair("last_mod_start_date", "last_mod_end_date")))
    return kwargs


@st.composite
def cpematch_kwargs(draw: st.DrawFn) -> dict[str, Any]:
    kwargs: dict[str, Any] = {
        "cve_id": draw(maybe(cve_ids)),
        "match_criteria_id": draw(maybe(uuids)),
        "match_string_search": draw(maybe(cpe_complete)),
        "results_per_page": draw(maybe(st.integers(0, 500))),
        "start_index": draw(maybe(st.integers(0, 10**6))),
    }
    if draw(st.booleans()):
        kwargs.update(draw(date_pair("last_mod_start_date", "last_mod_end_date")))
    return kwargs


def _check_translation(operation: Any, kwargs: dict[str, Any]) -> None:
    query = build_query(operation, kwargs)
    names = parameter_names(operation)
    given = {k for k, v in kwargs.items() if v is not None and v is not False}
    assert len(query) == len(given)
    for name in given:
        head, *rest = name.split("_")
        wire = head + "".join(p.capitalize() for p in rest)
        assert wire in query
        assert name in names
        value = kwargs[name]
        if value is True:
            assert query[wire] is None
        elif name.endswith("_date"):
            assert WIRE_DATE.fullmatch(query[wire] or "")
    # the encoded string decodes back to the same query (flags as bare names)
    encoded = encode_query(query)
    decoded = parse_qsl(encoded, keep_blank_values=True)
    assert [k for k, _ in decoded] == list(query)
    assert all((query[k] is None and v == "") or query[k] == v for k, v in decoded)
    assert "+" not in encoded  # a literal + would decode as a space
    for part in encoded.split("&") if encoded else []:
        if query[part.split("=", 1)[0]] is None:
            assert "=" not in part


@settings(max_examples=150, deadline=None)
@given(cves_kwargs())
def test_every_valid_cves_argument_set_translates(kwargs: dict[str, Any]) -> None:
    _check_translation("cves", kwargs)


@settings(max_examples=100, deadline=None)
@given(history_kwargs())
def test_every_valid_history_argument_set_translates(kwargs: dict[str, Any]) -> None:
    _check_translation("cvehistory", kwargs)


@settings(max_examples=100, deadline=None)
@given(cpes_kwargs())
def test_every_valid_cpes_argument_set_translates(kwargs: dict[str, Any]) -> None:
    _check_translation("cpes", kwargs)


@settings(max_examples=100, deadline=None)
@given(cpematch_kwargs())
def test_every_valid_cpematch_argument_set_translates(kwargs: dict[str, Any]) -> None:
    _check_translation("cpematch", kwargs)


# --- paging ------------------------------------------------------------------------------


def _record(n: int) -> dict[str, Any]:
    return {
        "cve": {
            "id": f"CVE-2000-{n:04d}",
            "published": "2000-01-01T00:00:00.000",
            "lastModified": "2000-01-01T00:00:00.000",
            "descriptions": [],
            "metrics": {},
            "references": [],
        }
    }


def _paging_service(total: int, caps: list[int], seen: list[tuple[int, int]]) -> Any:
    records = [_record(n) for n in range(total)]

    def handler(request: httpx.Request) -> httpx.Response:
        start = int(request.url.params["startIndex"])
        asked = int(request.url.params["resultsPerPage"])
        cap = caps[len(seen) % len(caps)]  # the service may serve fewer than asked
        seen.append((start, asked))
        chunk = records[start : start + min(asked, cap)]
        body = {
            "resultsPerPage": len(chunk),
            "startIndex": start,
            "totalResults": total,
            "format": "NVD_CVE",
            "version": "2.0",
            "timestamp": "2024-01-01T00:00:00.000",
            "vulnerabilities": chunk,
        }
        return httpx.Response(200, content=orjson.dumps(body))

    return handler


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    total=st.integers(0, 120),
    per_page=st.integers(1, 40),
    caps=st.lists(st.integers(1, 50), min_size=1, max_size=5),
    start=st.integers(0, 130),
)
def test_pages_partition_the_records_exactly_once(
    total: int, per_page: int, caps: list[int], start: int
) -> None:
    seen: list[tuple[int, int]] = []
    transport = httpx.MockTransport(_paging_service(total, caps, seen))
    with NvdClient(wait_time=0, transport=transport) as nvd:
        ids = [cve.id for cve in nvd.iter_cves(start_index=start, results_per_page=per_page)]
    assert ids == [f"CVE-2000-{n:04d}" for n in range(start, total)]
    # no request past the end, except the single one that finds nothing to read
    assert all(asked == per_page for _, asked in seen)
    starts = [s for s, _ in seen]
    if start >= total:
        assert starts == [start]
    else:
        assert all(s < total for s in starts)
        assert starts == sorted(set(starts))


@settings(max_examples=40, deadline=None)
@given(total=st.integers(0, 5000), caps=st.lists(st.integers(100, 3000), min_size=1, max_size=3))
def test_get_all_uses_the_largest_page_and_concatenates(total: int, caps: list[int]) -> None:
    seen: list[tuple[int, int]] = []
    transport = httpx.MockTransport(_paging_service(total, caps, seen))
    with NvdClient(wait_time=0, transport=transport) as nvd:
        result = nvd.get_all_cves()
    assert [item.cve.id for item in result.vulnerabilities] == [
        f"CVE-2000-{n:04d}" for n in range(total)
    ]
    assert {asked for _, asked in seen} == {2000}
    starts = [s for s, _ in seen]
    assert starts == sorted(set(starts))


@settings(max_examples=40, deadline=None)
@given(total=st.integers(0, 80), per_page=st.integers(1, 30), cap=st.integers(1, 30))
def test_async_pages_partition_the_records_exactly_once(
    total: int, per_page: int, cap: int
) -> None:
    import asyncio

    seen: list[tuple[int, int]] = []
    handler = _paging_service(total, [cap], seen)

    async def go() -> list[str]:
        transport = httpx.MockTransport(handler)
        async with AsyncNvdClient(wait_time=0, transport=transport) as nvd:
            return [cve.id async for cve in nvd.iter_cves(results_per_page=per_page)]

    assert asyncio.run(go()) == [f"CVE-2000-{n:04d}" for n in range(total)]
