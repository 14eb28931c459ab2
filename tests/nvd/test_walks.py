"""`If-Match` on the data generation: a page walk is answered at one generation or told
to begin again (412 naming both generations), on every backend and listing."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st
from starlette.datastructures import Headers
from starlette.testclient import TestClient

from assay.nvd.server.app import create_app
from assay.nvd.server.walks import NOT_A_GENERATION, walk_generation
from assay.nvd.storage import open_store

PATHS = ["/rest/json/cves/2.0", "/rest/json/cpes/2.0", "/rest/json/source/2.0"]


@pytest.fixture(scope="module")
def client(sample_store_url: str) -> Iterator[TestClient]:
    store = open_store(sample_store_url)
    with TestClient(create_app(store)) as client:
        yield client
    store.close()


@pytest.mark.parametrize("path", PATHS)
def test_a_walk_at_the_current_generation_is_answered(client: TestClient, path: str) -> None:
    first = client.get(path, params={"resultsPerPage": 2})
    generation = first.headers["x-assay-generation"]
    for tag in (f'W/"g{generation}"', f'"g{generation}"', "*"):
        page = client.get(
            path, params={"resultsPerPage": 2, "startIndex": 2}, headers={"if-match": tag}
        )
        assert page.status_code == 200, (tag, page.headers.get("message"))
        assert page.headers["x-assay-generation"] == generation


@pytest.mark.parametrize("path", PATHS)
def test_a_walk_from_another_generation_is_told_to_begin_again(
    client: TestClient, path: str
) -> None:
    generation = int(client.get(path, params={"resultsPerPage": 1}).headers["x-assay-generation"])
    old = generation - 1
    page = client.get(path, params={"startIndex": 1}, headers={"if-match": f'W/"g{old}"'})
    assert page.status_code == 412
    assert page.content == b""
    assert page.headers["message"] == (
        f"The walk began at generation {old}; this server now reads generation {generation}: "
        "begin the walk again at startIndex=0"
    )
    assert page.headers["x-assay-generation"] == str(generation)


@pytest.mark.parametrize("tag", ['W/"abc"', "g5", '"g-1"', ""])
def test_an_if_match_naming_no_generation_matches_nothing(client: TestClient, tag: str) -> None:
    page = client.get(PATHS[0], headers={"if-match": tag})
    assert page.status_code == 412
    assert "If-Match names no data generation" in page.headers["message"]


@given(generation=st.integers(min_value=0, max_value=10**18 - 1), weak=st.booleans())
def test_every_generation_tag_reads_back(generation: int, weak: bool) -> None:
    tag = f'{"W/" if weak else ""}"g{generation}"'
    assert walk_generation(Headers({"if-match": tag})) == generation
    assert walk_generation(Headers({"if-match": f'{tag}, W/"g1"'})) == generation


@given(text=st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=30))
def test_any_other_if_match_names_no_generation(text: str) -> None:
    found = walk_generation(Headers({"if-match": text}))
    if text.strip() == "*":
        assert found is None
    elif not re.fullmatch(r'\s*(W/)?"g[0-9]{1,18}"\s*', text.split(",", 1)[0]):
        assert found == NOT_A_GENERATION
