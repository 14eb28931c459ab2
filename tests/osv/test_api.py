"""osv.dev's API v1 served from the store (`assay serve`), on every backend: the shapes
of osv.dev's answers, its paging, its errors, and record by record the answers osv.dev
gave in recorded exchanges (tests/assets/osv/recorded)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient
from tests.conftest import backends, make_store_url
from tests.osv.conftest import OSV_ASSETS, osv_sample_paths

from assay.nvd.server import osv_api
from assay.nvd.server.app import create_app
from assay.nvd.storage import open_store
from assay.osv.importer import OsvImporter

RECORDED = OSV_ASSETS / "recorded"


@pytest.fixture(scope="module", params=backends())
def client(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[TestClient]:
    folder = tmp_path_factory.mktemp(f"osv-api-{request.param}")
    for url in make_store_url(request.param, folder):
        store = open_store(url)
        report = OsvImporter(store).import_paths(
            [*osv_sample_paths(), RECORDED / "records", OSV_ASSETS / "misc" / "dependency-track"]
        )
        assert report.added > 200
        with TestClient(create_app(store)) as test_client:
            yield test_client
        store.close()


def _ids(answer: dict[str, Any]) -> list[str]:
    return [v["id"] for v in answer.get("vulns", [])]


def test_query_by_name_and_by_purl_give_the_same_whole_records(client: TestClient) -> None:
    by_name = client.post(
        "/v1/query",
        json={"package": {"ecosystem": "PyPI", "name": "urllib3"}, "version": "1.26.5"},
    )
    assert by_name.status_code == 200
    assert by_name.headers["content-type"] == "application/json"
    answer = by_name.json()
    assert set(answer) == {"vulns"}
    assert "PYSEC-2023-192" in _ids(answer)
    assert _ids(answer) == sorted(_ids(answer))
    (record,) = [v for v in answer["vulns"] if v["id"] == "PYSEC-2023-192"]
    assert record["aliases"] == ["CVE-2023-43804", "GHSA-v845-jxx5-vc9f"]  # the whole record
    by_purl = client.post("/v1/query", json={"package": {"purl": "pkg:pypi/URLLib3@1.26.5"}})
    assert by_purl.json() == answer
    by_purl_version = client.post(
        "/v1/query", json={"package": {"purl": "pkg:pypi/urllib3"}, "version": "1.26.5"}
    )
    assert by_purl_version.json() == answer
    # Nothing affects it: an empty object, as osv.dev answers.
    fixed = client.post(
        "/v1/query", json={"package": {"ecosystem": "PyPI", "name": "urllib3"}, "version": "99"}
    )
    assert fixed.content == b"{}"
    # Without a version: every record of the package.
    every = client.post("/v1/query", json={"package": {"ecosystem": "PyPI", "name": "urllib3"}})
    assert len(_ids(every.json())) == 9


def test_query_by_commit(client: TestClient) -> None:
    answer = client.post("/v1/query", json={"commit": "775f2b3d8d6d44f3312f9911dcf70b203268f387"})
    assert _ids(answer.json()) == ["OSV-2021-1820"]
    assert client.post("/v1/query", json={"commit": "0" * 40}).content == b"{}"


def test_vulns_by_id(client: TestClient) -> None:
    found = client.get("/v1/vulns/GO-2022-0375")
    assert found.status_code == 200
    assert found.json()["id"] == "GO-2022-0375"
    expected = json.loads((OSV_ASSETS / "go" / "GO-2022-0375.json").read_bytes())
    assert found.json() == expected
    missing = client.get("/v1/vulns/GO-0000-0000")
    assert missing.status_code == 404
    assert missing.json() == {"code": 5, "message": "Bug not found."}
    # A line feed inside the path (schemathesis found it) is still an osv.dev JSON error.
    for path in ("/v1/vulns/GO-%0A2022", "/v1/elsewhere%0Aelse"):
        odd = client.get(path)
        assert odd.status_code == 404, path
        assert odd.headers["content-type"].startswith("application/json"), path


def test_querybatch_answers_ids_and_modified_per_query(client: TestClient) -> None:
    answer = client.post(
        "/v1/querybatch",
        json={
            "queries": [
                {"package": {"ecosystem": "PyPI", "name": "urllib3"}, "version": "1.26.5"},
                {"package": {"ecosystem": "npm", "name": "no-such-thing"}, "version": "1.0.0"},
                {"package": {"purl": "pkg:golang/github.com/treeverse/lakefs@v0.50.0"}},
            ]
        },
    )
    assert answer.status_code == 200
    first, second, third = answer.json()["results"]
    assert second == {}
    assert all(set(v) == {"id", "modified"} for v in first["vulns"])
    (pysec,) = [v for v in first["vulns"] if v["id"] == "PYSEC-2023-192"]
    assert pysec["modified"] == "2023-11-16T18:26:57.000713Z" or pysec["modified"].endswith("Z")
    assert [v["id"] for v in third["vulns"]] == ["GO-2022-0375"]


def test_pages_partition_the_answer(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(osv_api, "PAGE_SIZE", 3)
    query: dict[str, Any] = {"package": {"ecosystem": "PyPI", "name": "urllib3"}}
    seen: list[str] = []
    while True:
        answer = client.post("/v1/query", json=query).json()
        seen += _ids(answer)
        batch = client.post("/v1/querybatch", json={"queries": [query]}).json()["results"][0]
        assert [v["id"] for v in batch["vulns"]] == _ids(answer)
        assert batch.get("next_page_token") == answer.get("next_page_token")
        if "next_page_token" not in answer:
            break
        query = {**query, "page_token": answer["next_page_token"]}
    assert len(seen) == 9
    assert seen == sorted(set(seen))


@pytest.mark.parametrize(
    ("path", "body", "message"),
    [
        ("/v1/query", b"{", "request body: expected JSON"),
        ("/v1/query", b"[]", "query: expected a JSON object"),
        (
            "/v1/query",
            b'{"version": "1"}',
            "query: expected a package (with a version) or a commit",
        ),
        (
            "/v1/query",
            b'{"package": {"name": "x"}, "version": "1"}',
            "query.package.ecosystem: expected a string",
        ),
        (
            "/v1/query",
            b'{"package": {"purl": "pkg:pypi/x@1"}, "version": "2"}',
            "query.version: expected the version in the purl or here",
        ),
        (
            "/v1/query",
            b'{"package": {"purl": "not a purl"}}',
            "query.package.purl: expected a package URL",
        ),
        (
            "/v1/query",
            b'{"package": {"purl": "pkg:pypi/x", "name": "x"}}',
            "query.package: expected a purl or a name",
        ),
        (
            "/v1/query",
            b'{"commit": "abc", "version": "1"}',
            "query: expected a commit, or a package",
        ),
        (
            "/v1/query",
            b'{"package": {"ecosystem": "PyPI", "name": "x"}, "page_token": "zz"}',
            "query.page_token: expected a next_page_token",
        ),
        ("/v1/query", b'{"packages": {}}', "query.packages: unknown field"),
        ("/v1/querybatch", b'{"queries": {}}', "queries: expected an array of queries"),
        (
            "/v1/querybatch",
            b'{"queries": [{"package": 1}]}',
            "queries[0].package: expected a JSON object",
        ),
    ],
)
def test_bad_input_is_a_400_naming_the_field(
    client: TestClient, path: str, body: bytes, message: str
) -> None:
    answer = client.post(path, content=body, headers={"content-type": "application/json"})
    assert answer.status_code == 400
    document = answer.json()
    assert document["code"] == 3
    assert document["message"].startswith(message), document


def test_limits(client: TestClient) -> None:
    too_many = {"queries": [{"commit": "a"}] * 1001}
    answer = client.post("/v1/querybatch", json=too_many)
    assert answer.status_code == 400
    assert "Too many queries" in answer.json()["message"]
    big = b'{"commit": "' + b"a" * (osv_api.MAX_QUERY_BYTES + 1) + b'"}'
    assert client.post("/v1/query", content=big).status_code == 413


def _recorded() -> list[tuple[dict[str, Any], dict[str, Any]]]:
    pairs = []
    for cassette in sorted(RECORDED.glob("*.yaml")):
        for interaction in yaml.safe_load(cassette.read_text())["interactions"]:
            request = json.loads(interaction["request"]["body"])
            response = json.loads(interaction["response"]["body"])
            pairs.append((request, response))
    return pairs


def test_recorded_exchanges_have_the_same_shape(client: TestClient) -> None:
    for request, response in _recorded():
        answer = client.post("/v1/querybatch", content=orjson.dumps(request))
        assert answer.status_code == 200
        results = answer.json()["results"]
        assert len(results) == len(response["results"])
        for ours in results:
            assert set(ours) <= {"vulns", "next_page_token"}
            assert all(set(v) == {"id", "modified"} for v in ours.get("vulns", []))


def test_recorded_answers_record_by_record(client: TestClient) -> None:
    """For Go and PyPI queries: every record osv.dev named that the store holds is named
    here, and the store's other records of the package, older than the recording, are not."""
    held = {p.stem for p in (RECORDED / "records").iterdir()}
    negatives_by_package: dict[tuple[str, str], set[str]] = {}
    for path in (RECORDED / "records").glob("GO-*.json"):
        record = json.loads(path.read_bytes())
        for affected in record["affected"]:
            negatives_by_package.setdefault(("Go", affected["package"]["name"]), set()).add(
                record["id"]
            )
    checked = 0
    for request, response in _recorded():
        answer = client.post("/v1/querybatch", content=orjson.dumps(request)).json()["results"]
        for query, theirs, ours in zip(
            request["queries"], response["results"], answer, strict=True
        ):
            package = query.get("package") or {}
            if package.get("ecosystem") not in ("Go", "PyPI"):
                continue
            named = {v["id"] for v in theirs.get("vulns", [])}
            mine = {v["id"] for v in ours.get("vulns", [])}
            assert named & held <= mine, (query, sorted(named & held - mine))
            others = negatives_by_package.get(("Go", package["name"]), set()) - named
            assert not (mine & others), (query, sorted(mine & others))
            checked += len(named & held)
    assert checked > 100


def test_modified_is_the_record_s(client: TestClient) -> None:
    record = json.loads(Path(OSV_ASSETS / "go" / "GO-2022-0375.json").read_bytes())
    answer = client.post(
        "/v1/querybatch",
        json={"queries": [{"package": {"ecosystem": "Go", "name": "github.com/treeverse/lakefs"}}]},
    ).json()
    assert answer["results"][0]["vulns"] == [{"id": "GO-2022-0375", "modified": record["modified"]}]


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=12,
)
_queries = st.fixed_dictionaries(
    {},
    optional={
        "package": st.fixed_dictionaries(
            {},
            optional={
                "ecosystem": st.sampled_from(["PyPI", "Go", "npm", "Debian:12", ""]) | _json_values,
                "name": st.sampled_from(["urllib3", "x", ""]) | _json_values,
                "purl": st.sampled_from(["pkg:pypi/urllib3@1.0", "pkg:x/y", "nope"]) | _json_values,
            },
        ),
        "version": st.sampled_from(["1.0", "", "v1", "2.0.0-rc.1"]) | _json_values,
        "commit": st.text(max_size=41) | _json_values,
        "page_token": st.text(max_size=12) | _json_values,
    },
)


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=_queries | _json_values, batch=st.booleans())
def test_any_json_body_is_answered_or_refused_never_a_500(
    client: TestClient, body: object, batch: bool
) -> None:
    if batch:
        answer = client.post("/v1/querybatch", content=json.dumps({"queries": [body]}))
    else:
        answer = client.post("/v1/query", content=json.dumps(body))
    assert answer.status_code in (200, 400), answer.text
    document = answer.json()
    if answer.status_code == 400:
        assert document["code"] == 3
        assert document["message"]
