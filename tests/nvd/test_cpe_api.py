"""The CPE API (`/rest/json/cpes/2.0`) over HTTP, on the 10,000 real products of
cpes-2023, for every backend: envelope, transport, every parameter and error rule.

Expected results come from hand-checked anchors and from evaluating each filter directly
on the JSON records with the pure matching rules of `assay.nvd.cpe`.
"""

from __future__ import annotations

import gzip
import json
import re
from typing import Any
from urllib.parse import quote

import orjson
import pytest
from starlette.testclient import TestClient
from tests.nvd.conftest import CPES_FILE, response

from assay.nvd.cpe import CriteriaRange, criteria_expands_to, matches_match_string, parse_cpe

CPES = "/rest/json/cpes/2.0"
TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}")
ACCESS_ID = "87316812-5F2C-4286-94FE-CC98B9EAEF53"  # cpe:2.3:a:microsoft:access:-:...
DEPRECATED_ID = "50E6FB13-66B2-44EE-9182-73CDAD302B8B"  # 3com tippingpoint_ips (a -> h)


@pytest.fixture(scope="module")
def products() -> list[dict[str, Any]]:
    return [item["cpe"] for item in response(CPES_FILE)["products"]]


@pytest.fixture(scope="module")
def client(products_client: TestClient) -> TestClient:
    return products_client


def body(client: TestClient, query: str) -> dict[str, Any]:
    answer = client.get(f"{CPES}?{query}")
    assert answer.status_code == 200, answer.headers.get("message")
    parsed: dict[str, Any] = answer.json()
    assert parsed["resultsPerPage"] == len(parsed["products"])
    return parsed


def ids(client: TestClient, query: str) -> list[str]:
    return [item["cpe"]["cpeNameId"] for item in body(client, query)["products"]]


def error(client: TestClient, query: str) -> str:
    answer = client.get(f"{CPES}?{query}")
    assert answer.status_code == 404, f"{query} answered {answer.status_code}"
    assert answer.content == b""
    assert answer.headers["content-length"] == "0"
    return answer.headers["message"]


def in_api_order(records: list[dict[str, Any]]) -> list[str]:
    """The documented order: created, then cpeNameId."""
    ordered = sorted(records, key=lambda p: (p["created"], p["cpeNameId"]))
    return [p["cpeNameId"] for p in ordered]


# -- envelope and transport ------------------------------------------------------------


def test_envelope_matches_nvd(client: TestClient) -> None:
    answer = client.get(f"{CPES}?resultsPerPage=3&startIndex=2")
    assert answer.status_code == 200
    assert answer.headers["content-type"] == "application/json"
    assert answer.headers["apikey"] == "No"
    parsed = orjson.loads(answer.content)
    assert list(parsed) == [
        "resultsPerPage", "startIndex", "totalResults", "format", "version", "timestamp", "products",
    ]  # fmt: skip
    assert (parsed["resultsPerPage"], parsed["startIndex"], parsed["totalResults"]) == (3, 2, 10000)
    assert (parsed["format"], parsed["version"]) == ("NVD_CPE", "2.0")
    assert TIMESTAMP.fullmatch(parsed["timestamp"])
    assert b": " not in answer.content[:200]
    for item in parsed["products"]:
        assert list(item) == ["cpe"]


def test_records_are_served_byte_for_byte_as_nvd_sent_them(client: TestClient) -> None:
    original = gzip.decompress(CPES_FILE.read_bytes()).decode()
    decoder = json.JSONDecoder()
    checked = 0
    for match in re.finditer(r"\{\"cpe\":\{\"deprecated\":", original):
        if checked % 37 == 0 or "refs" in original[match.start() : match.start() + 3000]:
            _, end = decoder.raw_decode(original, match.start())
            expected = original[match.start() : end].encode()
            cpe_name_id = orjson.loads(expected)["cpe"]["cpeNameId"]
            served = client.get(f"{CPES}?cpeNameId={cpe_name_id}").content
            assert expected in served, cpe_name_id
        checked += 1
    assert checked == 10000


def test_trailing_slash_head_and_options(client: TestClient) -> None:
    plain = client.get(f"{CPES}?cpeNameId={ACCESS_ID}")
    slashed = client.get(f"{CPES}/?cpeNameId={ACCESS_ID}")
    assert plain.json()["products"] == slashed.json()["products"]
    head = client.head(f"{CPES}?cpeNameId={ACCESS_ID}")
    assert head.status_code == 200
    assert head.content == b""
    assert int(head.headers["content-length"]) == len(plain.content)
    options = client.options(f"{CPES}/")
    assert options.status_code == 200
    assert "GET" in options.headers["access-control-allow-methods"]


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("foo=1", "Invalid parameter: foo"),
        ("apiKey=abc", "Invalid parameter: apiKey"),
        ("includeDeprecated", "Invalid parameter: includeDeprecated"),
        ("cveId=CVE-2022-32223", "Invalid parameter: cveId"),
        ("resultsPerPage=10001", "resultsPerPage parameter cannot exceed 10000"),
        ("resultsPerPage=-1", "resultsPerPage"),
        ("resultsPerPage=ten", "resultsPerPage"),
        ("startIndex=-5", "startIndex"),
        ("cpeNameId=87316812", "Invalid cpeNameId: expected a UUID"),
        ("cpeNameId=", "cpeNameId requires a value"),
        ("cpeNameId=87316812-5F2C-4286-94FE-CC98B9EAEF5G", "cpeNameId"),
        ("matchCriteriaId=not-a-uuid", "Invalid matchCriteriaId: expected a UUID"),
        (
            "cpeMatchString=INVALID:2.3:*:Microsoft",
            "Invalid cpeMatchString: a CPE 2.3 name must start",
        ),
        ("cpeMatchString=cpe:2.2:a:microsoft", "cpeMatchString"),
        ("cpeMatchString=cpe:2.3:a:b:c:d:e:f:g:h:i:j:k:l", "at most 11 components"),
        ("cpeMatchString=cpe:2.3:x:microsoft", "the part component must be a, o, h or *"),
        ("cpeMatchString=cpe:2.3:a:microsoft\\", "lone backslash"),
        ("keywordExactMatch", "keywordExactMatch requires keywordSearch"),
        ("keywordSearch=", "keywordSearch requires a value"),
        ("keywordSearch=" + "+".join(["w"] * 21), "more than 20 words"),
        ("lastModStartDate=2011-01-01T00:00:00", "Both lastModStartDate and lastModEndDate"),
        ("lastModEndDate=2011-01-01T00:00:00", "Both lastModStartDate and lastModEndDate"),
        (
            "lastModStartDate=yesterday&lastModEndDate=2011-01-01T00:00:00",
            "Invalid ISO 8601 date/time format, see documentation.",
        ),
        (
            "lastModStartDate=2011-01-01T00:00:00&lastModEndDate=2011-05-02T00:00:01",
            "Date range cannot exceed 120 days",
        ),
        (
            "lastModStartDate=2011-02-01T00:00:00&lastModEndDate=2011-01-01T00:00:00",
            "End date must not be before start date",
        ),
    ],
)
def test_every_error_rule_answers_404_naming_the_parameter(
    client: TestClient, query: str, message: str
) -> None:
    assert message in error(client, query)


def test_parameter_names_are_case_insensitive(client: TestClient) -> None:
    assert ids(client, f"CPENAMEID={ACCESS_ID}") == [ACCESS_ID]
    assert len(ids(client, "resultsperpage=2")) == 2
    assert ids(client, "cpematchstring=cpe:2.3:a:microsoft:access") == [ACCESS_ID]


# -- paging and order ------------------------------------------------------------------


def test_default_page_is_everything_up_to_10000(
    client: TestClient, products: list[dict[str, Any]]
) -> None:
    parsed = body(client, "")
    assert parsed["totalResults"] == 10000
    assert parsed["resultsPerPage"] == 10000
    assert [item["cpe"]["cpeNameId"] for item in parsed["products"]] == in_api_order(products)


def test_pages_partition_the_result_exactly_once(client: TestClient) -> None:
    whole = ids(client, "cpeMatchString=cpe:2.3:o:cisco:ios")
    assert len(whole) > 1000
    paged: list[str] = []
    for start in range(0, len(whole), 250):
        paged.extend(
            ids(client, f"cpeMatchString=cpe:2.3:o:cisco:ios&resultsPerPage=250&startIndex={start}")
        )
    assert paged == whole


def test_a_page_past_the_end_is_an_empty_200(client: TestClient) -> None:
    parsed = body(client, "startIndex=20000")
    assert (parsed["totalResults"], parsed["resultsPerPage"], parsed["startIndex"]) == (
        10000,
        0,
        20000,
    )
    zero = body(client, "cpeMatchString=cpe:2.3:a:microsoft&resultsPerPage=0")
    assert zero["products"] == []
    assert zero["totalResults"] > 0


# -- filters ---------------------------------------------------------------------------


def test_cpe_name_id_is_case_insensitive_and_unknown_ids_are_empty(client: TestClient) -> None:
    assert ids(client, f"cpeNameId={ACCESS_ID.lower()}") == [ACCESS_ID]
    assert ids(client, "cpeNameId=00000000-0000-0000-0000-000000000000") == []


def test_deprecated_records_keep_deprecated_by(client: TestClient) -> None:
    (item,) = body(client, f"cpeNameId={DEPRECATED_ID}")["products"]
    assert item["cpe"]["deprecated"] is True
    assert item["cpe"]["deprecatedBy"] == [
        {
            "cpeName": "cpe:2.3:h:3com:tippingpoint_ips:-:*:*:*:*:*:*:*",
            "cpeNameId": "5BD99AF0-33A4-4F35-8D88-6DC02A3BFAD6",
        }
    ]


@pytest.mark.parametrize(
    "pattern",
    [
        "cpe:2.3:a:microsoft:access",
        "cpe:2.3:a:microsoft:access:*:*:*:*:*:*:*:*",
        "cpe:2.3:a:microsoft:access:::",
        "cpe:2.3:A:MicroSoft:ACCESS",
        quote("cpe:2.3:a:microsoft:access", safe=""),
    ],
)
def test_partial_match_strings_are_padded_and_case_insensitive(
    client: TestClient, pattern: str
) -> None:
    assert ids(client, f"cpeMatchString={pattern}") == [ACCESS_ID]


def test_match_string_escapes_are_honoured(client: TestClient) -> None:
    plain = ids(client, "cpeMatchString=" + quote("cpe:2.3:a:gnu:g++", safe=""))
    escaped = ids(client, "cpeMatchString=" + quote("cpe:2.3:a:gnu:g\\+\\+", safe=""))
    assert plain == escaped != []
    assert ids(client, "cpeMatchString=" + quote("cpe:2.3:a:gnu:g\\+", safe="")) == []


@pytest.mark.parametrize(
    "pattern",
    [
        "cpe:2.3:*:microsoft",
        "cpe:2.3:o:cisco:ios:12.0",
        "cpe:2.3:h:*:*",
        "cpe:2.3:a:apache:tomcat:*:*:*:*:*:*:*:*",
        "cpe:2.3:*:*:*:-",
        "cpe:2.3:o:linux:linux_kernel:2.6.0",
        "cpe:2.3:a:*:*:*:*:*:*:*:*:*:*",
        "cpe:2.3:*:*:*:*:*:*:ja",
    ],
)
def test_match_string_agrees_with_the_pure_rule(
    client: TestClient, products: list[dict[str, Any]], pattern: str
) -> None:
    wanted = parse_cpe(pattern, partial=True)
    expected = in_api_order(
        [
            p
            for p in products
            if matches_match_string(wanted, parse_cpe(p["cpeName"], partial=False))
        ]
    )
    assert ids(client, f"cpeMatchString={quote(pattern, safe='')}") == expected


def _words(product: dict[str, Any]) -> list[str]:
    texts = [t["title"] for t in product.get("titles", [])] + [
        r["ref"] for r in product.get("refs", [])
    ]
    return [word for text in texts for word in re.findall(r"[0-9a-z]+", text.lower())]


@pytest.mark.parametrize(
    "words",
    ["microsoft access", "Micro acc", "apple safari", "fandom", "vpnman", "tipping ips 3com"],
)
def test_keyword_search_is_an_and_of_word_prefixes_over_titles_and_links(
    client: TestClient, products: list[dict[str, Any]], words: str
) -> None:
    wanted = words.lower().split()
    expected = in_api_order(
        [p for p in products if all(any(w.startswith(x) for w in _words(p)) for x in wanted)]
    )
    assert expected
    assert ids(client, f"keywordSearch={quote(words)}") == expected


def test_keyword_search_reaches_reference_links(client: TestClient) -> None:
    # "fandom" appears only in an apple.fandom.com link, never in a title.
    hits = body(client, "keywordSearch=fandom")["products"]
    assert hits
    for item in hits:
        assert not any("fandom" in title["title"].lower() for title in item["cpe"]["titles"])
        assert any("fandom" in ref["ref"] for ref in item["cpe"]["refs"])


def test_keyword_exact_match_is_a_phrase(client: TestClient) -> None:
    both = set(ids(client, "keywordSearch=Access+Microsoft"))
    phrase = set(ids(client, "keywordSearch=Microsoft+Access&keywordExactMatch"))
    reversed_phrase = set(ids(client, "keywordSearch=Access+Microsoft&keywordExactMatch="))
    assert ACCESS_ID in phrase
    assert phrase <= both
    assert ACCESS_ID not in reversed_phrase
    assert ids(client, "keywordSearch=%2B%2B") == []  # punctuation alone matches nothing


def test_last_modified_window_is_inclusive(
    client: TestClient, products: list[dict[str, Any]]
) -> None:
    start, end = "2011-01-12T14:35:56.427", "2011-01-12T14:36:00.000"
    expected = in_api_order([p for p in products if start <= p["lastModified"] <= end])
    assert ACCESS_ID in expected
    assert ids(client, f"lastModStartDate={start}&lastModEndDate={end}") == expected
    # The same window with an offset: 15:35:56.427+01:00 is 14:35:56.427 UTC.
    assert (
        ids(
            client,
            "lastModStartDate=2011-01-12T15:35:56.427%2B01:00&lastModEndDate=2011-01-12T15:36:00%2B01:00",
        )
        == expected
    )
    assert ACCESS_ID not in ids(
        client, "lastModStartDate=2011-01-12T14:35:56.428&lastModEndDate=2011-01-13T00:00:00"
    )


def test_match_criteria_id_with_a_stored_record_gives_its_matches(client: TestClient) -> None:
    # A2572D17 (cpe:2.3:o:microsoft:windows:-) expands to three names; cpes-2023 holds one.
    found = body(client, "matchCriteriaId=a2572d17-1de6-457b-99cc-64afd54487ea")["products"]
    assert [item["cpe"]["cpeName"] for item in found] == [
        "cpe:2.3:o:microsoft:windows:-:*:*:*:*:*:*:*"
    ]


EXPANDED_FROM_CVES = [
    # (matchCriteriaId in a bundled CVE, its criteria and bounds, products of cpes-2023)
    ("7984C6CE-B4DB-4863-93FB-799BD0BE589A", "cpe:2.3:o:ibm:aix:*:*:*:*:*:*:*:*", {"versionEndIncluding": "3.2"}, 5),
    ("FE76D3D5-34AB-4914-81E5-5AC947241D01", "cpe:2.3:a:apache:http_server:*:*:*:*:*:*:*:*", {"versionEndExcluding": "1.3.0"}, 11),
    ("DD5E0678-45C7-492A-963C-897494D6878F", "cpe:2.3:o:ibm:aix:3.2:*:*:*:*:*:*:*", {}, 1),
]  # fmt: skip


@pytest.mark.parametrize("case", EXPANDED_FROM_CVES, ids=[case[0] for case in EXPANDED_FROM_CVES])
def test_match_criteria_id_without_a_stored_record_is_expanded_from_cve_configurations(
    client: TestClient,
    products: list[dict[str, Any]],
    case: tuple[str, str, dict[str, str], int],
) -> None:
    criteria_id, criteria, bounds, count = case
    rule = CriteriaRange.from_json({"criteria": criteria, **bounds})
    expected = in_api_order(
        [p for p in products if criteria_expands_to(rule, parse_cpe(p["cpeName"], partial=False))]
    )
    assert len(expected) == count
    assert ids(client, f"matchCriteriaId={criteria_id}") == expected


def test_unknown_match_criteria_id_is_empty(client: TestClient) -> None:
    assert ids(client, "matchCriteriaId=00000000-0000-0000-0000-000000000000") == []


def test_filters_combine_with_and(client: TestClient, products: list[dict[str, Any]]) -> None:
    combined = ids(client, "cpeMatchString=cpe:2.3:a:apple&keywordSearch=safari")
    assert combined
    assert set(combined) == set(ids(client, "cpeMatchString=cpe:2.3:a:apple")) & set(
        ids(client, "keywordSearch=safari")
    )
    assert ids(client, f"cpeNameId={ACCESS_ID}&cpeMatchString=cpe:2.3:a:apple") == []


def test_openapi_and_docs_describe_the_products_endpoints(client: TestClient) -> None:
    document = client.get("/openapi.json").json()
    for path, operation, name in (
        ("/rest/json/cvehistory/2.0", "get_cve_history", "eventName"),
        ("/rest/json/cpes/2.0", "get_cpes", "cpeMatchString"),
        ("/rest/json/cpematch/2.0", "get_cpe_match", "matchStringSearch"),
    ):
        described = document["paths"][path]["get"]
        assert described["operationId"] == operation
        assert name in {p["name"] for p in described["parameters"]}
    page = client.get("/docs").text
    assert "NVD_CPEMatchString" in page
    assert "New CVE Received" in page
