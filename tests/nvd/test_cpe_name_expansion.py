"""The CVE API's `cpeName` through match-criteria expansions, against the same filter
computed from the criteria and their version bounds, on the real samples.

Where the match-criteria record of a criteria is stored, `cpeName` uses its dictionary
expansion (`matches[].cpeName`) as NVD does; otherwise it computes the match. Both ways
must agree on every dictionary name of the real expansions; the two cases where they
cannot (a name NVD's dictionary does not hold, a name without a concrete version) are
pinned here and written up in docs/nvd-compatibility.md, "cpeName and match criteria".
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest
from starlette.testclient import TestClient
from tests.conftest import backends, make_store_url
from tests.nvd.conftest import CPEMATCH_FILE, CPES_FILE, CVE_32223_FILE, bundled_cves, response

from assay.nvd.cpe import CriteriaRange, criteria_expands_to, name_matches, parse_cpe
from assay.nvd.ingest.importer import Importer
from assay.nvd.server.app import create_app
from assay.nvd.storage import open_store

CVES = "/rest/json/cves/2.0"
CRITERIA = [item["matchString"] for item in response(CPEMATCH_FILE)["matchStrings"]]
EXPANSION_NAMES = sorted({m["cpeName"] for c in CRITERIA for m in c.get("matches", [])})
WINDOWS_CVES = ["CVE-2022-0016", "CVE-2022-0017", "CVE-2022-0018", "CVE-2022-0021", "CVE-2023-0001"]

# Names both ways must answer alike, beyond every name of the real expansions.
VARIANTS = [
    "cpe:2.3:a:nodejs:node.js:14.14.0",  # in two criteria: `-` (inclusive end) and lts (start)
    "cpe:2.3:a:nodejs:node.js:16.14.0",
    "cpe:2.3:a:NodeJS:Node.js:16.15.1:*:*:*:LTS",
    "cpe:2.3:a:nodejs:node.js:16.16.0:*:*:*:lts:*:*:*",  # the excluded end
    "cpe:2.3:a:nodejs:node.js:18.0.5:*:*:*:-:*:*:*",
    "cpe:2.3:a:nodejs:node.js:16.13.0:*:*:*:-:*:*:*",  # no criteria for this edition
    "cpe:2.3:o:microsoft:windows:-",
    "cpe:2.3:o:microsoft:windows:-:*:*:*:*:*:arm64:*",
    "cpe:2.3:o:microsoft:windows:10",
]
# Where the two ways part: (name, hit when computed, hit through the expansion).
DISAGREEMENTS = [
    # Inside [16.13.0, 16.16.0) but not a version NVD's dictionary holds.
    ("cpe:2.3:a:nodejs:node.js:16.13.3:*:*:*:lts:*:*:*", True, False),
    ("cpe:2.3:a:nodejs:node.js:18.0.4.1:*:*:*:-:*:*:*", True, False),
    # No concrete version: the computed rule lets it match a range, no dictionary name is `-`.
    ("cpe:2.3:a:nodejs:node.js:-:*:*:*:lts:*:*:*", True, False),
]


@pytest.fixture(scope="module", params=backends())
def computed_client(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[TestClient]:
    """The same CVEs without any match-criteria record: every criteria is computed."""
    folder = tmp_path_factory.mktemp(f"computed-{request.param}")
    for url in make_store_url(request.param, folder):
        store = open_store(url)
        report = Importer(store).import_files([bundled_cves(), CVE_32223_FILE])
        assert report.ok, report.problems
        with TestClient(create_app(store)) as client:
            yield client
        store.close()


@pytest.fixture(scope="module")
def expanded_client(products_client: TestClient) -> TestClient:
    return products_client


def hits(client: TestClient, name: str, *, vulnerable: bool = False) -> list[str]:
    query = f"cpeName={quote(name, safe='')}" + ("&isVulnerable" if vulnerable else "")
    answer = client.get(f"{CVES}?{query}")
    assert answer.status_code == 200, answer.headers.get("message")
    return [item["cve"]["id"] for item in answer.json()["vulnerabilities"]]


def test_every_real_expansion_name_lies_within_its_criteria() -> None:
    for record in CRITERIA:
        criteria = CriteriaRange.from_json(record)
        for match in record["matches"]:
            name = parse_cpe(match["cpeName"], partial=False)
            assert criteria_expands_to(criteria, name), match["cpeName"]
            assert name_matches(name, criteria), match["cpeName"]


def test_the_real_dictionary_names_a_criteria_covers_are_in_its_expansion() -> None:
    products = [
        parse_cpe(p["cpe"]["cpeName"], partial=False) for p in response(CPES_FILE)["products"]
    ]
    covered = 0
    for record in CRITERIA:
        criteria = CriteriaRange.from_json(record)
        listed = {parse_cpe(m["cpeName"], partial=False) for m in record["matches"]}
        for name in products:
            if criteria_expands_to(criteria, name):
                assert name in listed
                covered += 1
    assert covered == 1  # cpes-2023 (products created in 2007) holds one: Windows `-`


@pytest.mark.parametrize("name", EXPANSION_NAMES + VARIANTS)
def test_expansion_and_computation_agree(
    computed_client: TestClient, expanded_client: TestClient, name: str
) -> None:
    computed = hits(computed_client, name)
    assert hits(expanded_client, name) == computed
    assert hits(expanded_client, name, vulnerable=True) == hits(
        computed_client, name, vulnerable=True
    )


def test_agreement_covers_real_hits(
    computed_client: TestClient, expanded_client: TestClient
) -> None:
    assert hits(expanded_client, "cpe:2.3:a:nodejs:node.js:16.13.1:*:*:*:lts:*:*:*") == [
        "CVE-2022-32223"
    ]
    windows = hits(expanded_client, "cpe:2.3:o:microsoft:windows:-:*:*:*:*:*:x64:*")
    assert windows == hits(computed_client, "cpe:2.3:o:microsoft:windows:-:*:*:*:*:*:x64:*")
    assert set(windows) == {*WINDOWS_CVES, "CVE-2022-32223"}
    # Windows is the running-on platform (vulnerable: false) in every one of them.
    assert hits(expanded_client, "cpe:2.3:o:microsoft:windows:-", vulnerable=True) == []


@pytest.mark.parametrize(("name", "computed", "expanded"), DISAGREEMENTS)
def test_where_the_two_ways_part(
    computed_client: TestClient,
    expanded_client: TestClient,
    name: str,
    computed: bool,
    expanded: bool,
) -> None:
    expected: dict[bool, list[str]] = {True: ["CVE-2022-32223"], False: []}
    assert hits(computed_client, name) == expected[computed]
    assert hits(expanded_client, name) == expected[expanded]


def test_an_empty_stored_expansion_matches_nothing(tmp_path: Any) -> None:
    """A stored record with no `matches` means NVD's dictionary holds no name for it."""
    store = open_store(f"sqlite:///{tmp_path / 'store.db'}")
    Importer(store).import_files([CVE_32223_FILE])
    from assay.nvd.cpematch_record import match_facts

    lts = next(
        c for c in CRITERIA if c["matchCriteriaId"] == "D9D9B02E-C965-408B-999E-1F3DA09B62AA"
    )
    name = "cpe:2.3:a:nodejs:node.js:16.13.1:*:*:*:lts:*:*:*"
    with TestClient(create_app(store)) as client:
        assert hits(client, name) == ["CVE-2022-32223"]  # computed
        store.upsert_match_strings([match_facts({k: v for k, v in lts.items() if k != "matches"})])
        assert hits(client, name) == []
        store.upsert_match_strings(
            [match_facts({**lts, "lastModified": "2026-06-01T00:00:00.000"})]
        )
        assert hits(client, name) == ["CVE-2022-32223"]
    store.close()
