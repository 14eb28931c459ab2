"""nvdlib 0.9.0 and nvd-api 0.9.1, unchanged, against the running server on loopback:
CPE products, match criteria and change history (spec `nvd-api-behaviour.md` §7)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from tests.live import redirect_nvdlib, serving
from tests.nvd.conftest import CPEMATCH_FILE, CPES_FILE, HISTORY_FILE, response

from assay.nvd.change_record import change_facts
from assay.nvd.cpe_record import cpe_facts
from assay.nvd.cpematch_record import match_facts
from assay.nvd.storage import open_store

ACCESS_ID = "87316812-5F2C-4286-94FE-CC98B9EAEF53"
WINDOWS = "A2572D17-1DE6-457B-99CC-64AFD54487EA"
HISTORY_CVE = "CVE-2019-1010218"


@pytest.fixture(scope="module")
def live_url(products_store_url: str) -> Iterator[str]:
    with serving(products_store_url) as url:
        yield url


@pytest.fixture
def nvdlib_at(live_url: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    return redirect_nvdlib(monkeypatch, live_url)


def test_nvdlib_search_cpe(nvdlib_at: Any) -> None:
    [access] = nvdlib_at.searchCPE(cpeMatchString="cpe:2.3:a:microsoft:access")
    assert access.cpeNameId == ACCESS_ID
    assert access.titles[0].title == "Microsoft Access"
    assert "cpeMatchString=cpe%3A2.3%3Aa%3Amicrosoft%3Aaccess" in nvdlib_at.sent[-1]
    phrase = nvdlib_at.searchCPE(keywordSearch="Microsoft Access", keywordExactMatch=True)
    assert ACCESS_ID in {cpe.cpeNameId for cpe in phrase}
    [by_id] = nvdlib_at.searchCPE(cpeNameId=ACCESS_ID.lower())
    assert by_id.cpeName == "cpe:2.3:a:microsoft:access:-:*:*:*:*:*:*:*"
    [windows] = nvdlib_at.searchCPE(matchCriteriaId=WINDOWS)
    assert windows.cpeName == "cpe:2.3:o:microsoft:windows:-:*:*:*:*:*:*:*"
    dated = nvdlib_at.searchCPE(
        lastModStartDate="2011-01-12 14:35", lastModEndDate="2011-01-12 14:36"
    )
    assert ACCESS_ID in {cpe.cpeNameId for cpe in dated}
    limited = nvdlib_at.searchCPE(cpeMatchString="cpe:2.3:o:cisco:ios", limit=7)
    assert len(limited) == 7
    deprecated = [
        cpe for cpe in nvdlib_at.searchCPE(keywordSearch="TippingPoint") if cpe.deprecated
    ]
    assert deprecated[0].deprecatedBy[0].cpeNameId == "5BD99AF0-33A4-4F35-8D88-6DC02A3BFAD6"


def test_nvdlib_reads_the_whole_dictionary_and_its_generator_pages(nvdlib_at: Any) -> None:
    everything = nvdlib_at.searchCPE()
    expected = [item["cpe"]["cpeNameId"] for item in response(CPES_FILE)["products"]]
    assert sorted(cpe.cpeNameId for cpe in everything) == sorted(expected)
    paged = list(nvdlib_at.searchCPE_V2(cpeMatchString="cpe:2.3:o:cisco:ios"))
    assert len(paged) == len({cpe.cpeNameId for cpe in paged}) > 1000


def test_nvdlib_search_cpe_match(nvdlib_at: Any) -> None:
    criteria = nvdlib_at.searchCPEmatch(cveId="CVE-2022-32223")
    assert len(criteria) == 6
    assert {c.matchCriteriaId for c in criteria} >= {WINDOWS}
    # nvdlib sends the match string unencoded.
    lts = nvdlib_at.searchCPEmatch(matchStringSearch="cpe:2.3:a:nodejs:node.js:*:*:*:*:lts:*:*:*")
    assert len(lts) == 2
    assert "matchStringSearch=cpe:2.3:a:nodejs:node.js:*:*:*:*:lts:*:*:*" in nvdlib_at.sent[-1]
    [windows] = nvdlib_at.searchCPEmatch(matchCriteriaId=WINDOWS)
    assert [m.cpeName.split(":")[-2] for m in windows.matches] == ["*", "x64", "x86"]
    dated = nvdlib_at.searchCPEmatch(
        lastModStartDate="2022-12-07 00:00", lastModEndDate="2022-12-08 00:00"
    )
    assert len(dated) == 2


def test_nvdlib_search_cve_history(nvdlib_at: Any) -> None:
    changes = nvdlib_at.searchCVEHistory(cveId=HISTORY_CVE)
    assert [c.eventName for c in changes] == [
        "Initial Analysis",
        "Reanalysis",
        "CVE Modified",
        "Modified Analysis",
    ]
    assert changes[0].details[0].type == "CVSS V2"
    # nvdlib's documented example: a window and an event with no match.
    assert (
        nvdlib_at.searchCVEHistory(
            cveId=HISTORY_CVE,
            changeStartDate="2021-08-04 00:00",
            changeEndDate="2021-10-23 00:00",
            eventName="CVE Rejected",
        )
        == []
    )
    assert "eventName=CVE%20Rejected" in nvdlib_at.sent[-1]
    [modified] = nvdlib_at.searchCVEHistory(
        cveIds=f"{HISTORY_CVE},CVE-2022-40482", eventName="CVE Modified"
    )
    assert modified.sourceIdentifier == "josh@bress.net"
    assert len(list(nvdlib_at.searchCVEHistory_V2(cveId=HISTORY_CVE))) == 4


def test_nvdlib_surfaces_the_message_header(nvdlib_at: Any) -> None:
    import requests

    with pytest.raises(requests.HTTPError, match="Invalid cpeNameId"):
        nvdlib_at.searchCPE(cpeNameId="bogus")
    with pytest.raises(requests.HTTPError, match="Invalid eventName"):
        nvdlib_at.searchCVEHistory(eventName="Bogus")


def _nvd_api(base: str) -> Any:
    from nvd_api import NvdApiClient

    client = NvdApiClient(wait_time=0)
    client._vulnerabilities_api.api_client.configuration.host = f"{base}/rest/json"
    client._products_api.api_client.configuration.host = f"{base}/rest/json"
    return client


@pytest.mark.parametrize("prefix", ["", "/compat/nvd-api"])
def test_nvd_api_get_cpes(live_url: str, prefix: str) -> None:
    client = _nvd_api(live_url + prefix)
    page = client.get_cpes(
        cpe_match_string="cpe:2.3:a:microsoft",
        keyword_search="Microsoft Access",
        keyword_exact_match=True,
        results_per_page=5,
    )
    assert (page.format, page.total_results) == ("NVD_CPE", 1)
    assert page.products[0].cpe.cpe_name_id == ACCESS_ID
    assert page.products[0].cpe.created == datetime(2007, 8, 23, 21, 5, 57, 937000)
    [windows] = client.get_cpes(match_criteria_id=WINDOWS).products
    assert windows.cpe.cpe_name == "cpe:2.3:o:microsoft:windows:-:*:*:*:*:*:*:*"
    dated = client.get_cpes(
        last_mod_start_date=datetime(2011, 1, 12), last_mod_end_date=datetime(2011, 1, 13)
    )
    assert ACCESS_ID in {p.cpe.cpe_name_id for p in dated.products}


def test_nvd_api_parses_every_real_product(live_url: str) -> None:
    client = _nvd_api(live_url)
    seen: list[str] = []
    for start in range(0, 10000, 2500):
        page = client.get_cpes(results_per_page=2500, start_index=start)
        seen.extend(p.cpe.cpe_name_id for p in page.products)
    assert len(set(seen)) == 10000


@pytest.mark.parametrize("prefix", ["", "/compat/nvd-api"])
def test_nvd_api_get_cpe_match_and_history(live_url: str, prefix: str) -> None:
    from nvd_api.client import EVENT_NAME

    client = _nvd_api(live_url + prefix)
    criteria = client.get_cpe_match(cve_id="CVE-2022-32223")
    assert (criteria.format, criteria.total_results) == ("NVD_CPEMatchString", 6)
    [one] = client.get_cpe_match(cve_id="CVE-2022-32223", match_criteria_id=WINDOWS).match_strings
    assert len(one.match_string.matches) == 3
    first = client.get_cpe_match(results_per_page=1, start_index=0)
    assert (first.results_per_page, first.total_results) == (1, 6)
    history = client.get_cve_history(cve_id=HISTORY_CVE)
    assert [c.change.event_name for c in history.cve_changes] == [
        "Initial Analysis", "Reanalysis", "CVE Modified", "Modified Analysis",
    ]  # fmt: skip
    rejected = client.get_cve_history(
        change_start_date=datetime(2021, 8, 4),
        change_end_date=datetime(2021, 10, 23),
        cve_id=HISTORY_CVE,
        event_name=EVENT_NAME.CVE_REJECTED,
    )
    assert rejected.total_results == 0
    analysed = client.get_cve_history(event_name=EVENT_NAME.INITIAL_ANALYSIS)
    assert [c.change.cve_change_id for c in analysed.cve_changes] == [
        "E52AFC66-FAFE-4393-B7FF-4EC2FA6CB6C4"
    ]


def test_nvd_api_sees_404_as_not_found(live_url: str) -> None:
    from nvd_api.low_api.exceptions import NotFoundException

    client = _nvd_api(live_url)
    with pytest.raises(NotFoundException):
        client.get_cpes(cpe_match_string="INVALID:2.3:*:Microsoft")
    with pytest.raises(NotFoundException):
        client._products_api.get_cpes(cpe_name_id="not-a-uuid")


def test_the_compatibility_path_drops_only_what_nvd_api_cannot_parse(tmp_path: Path) -> None:
    from nvd_api.low_api.exceptions import ApiAttributeError, ApiTypeError, ApiValueError

    product = response(CPES_FILE)["products"][0]["cpe"]
    newer_product = {
        **product,
        "refs": [
            {"ref": "https://example.com/a b", "type": "Vendor"},  # not a URL to nvd-api
            {"ref": "https://example.com/changelog", "type": "Release Notes"},  # unknown type
            {"ref": "https://example.com/", "type": "Vendor"},
        ],
        "cpeNewField": [1],
    }
    criteria = {**response(CPEMATCH_FILE)["matchStrings"][0]["matchString"], "cpeNewField": True}
    change = response(HISTORY_FILE)["cveChanges"][0]["change"]
    newer_change = {
        **change,
        "details": [
            *change["details"],
            {"type": "SSVC", "action": "Added", "newValue": {"exploitation": "none"}},
        ],
    }
    store_url = f"sqlite:///{tmp_path / 'store.db'}"
    store = open_store(store_url)
    store.upsert_cpes([cpe_facts(newer_product)])
    store.upsert_match_strings([match_facts(criteria)])
    store.upsert_changes([change_facts(newer_change)])
    store.close()
    with serving(store_url) as url:
        strict = _nvd_api(url)
        for call in (strict.get_cpes, strict.get_cpe_match, strict.get_cve_history):
            with pytest.raises((ApiAttributeError, ApiTypeError, ApiValueError)):
                call()
        lenient = _nvd_api(f"{url}/compat/nvd-api")
        [item] = lenient.get_cpes().products
        assert [(r.ref, getattr(r, "type", None)) for r in item.cpe.refs] == [
            ("https://example.com/changelog", None),
            ("https://example.com/", "Vendor"),
        ]
        assert item.cpe.titles[0].title == product["titles"][0]["title"]
        [match] = lenient.get_cpe_match().match_strings
        assert len(match.match_string.matches) == 3
        [served] = lenient.get_cve_history().cve_changes
        assert served.change.details[-1].type == "SSVC"
        assert not hasattr(served.change.details[-1], "new_value")
