"""One composed web app per backend over the shared sample store."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient

from assay.nvd.storage import open_store
from assay.web.app import create_web_app


@pytest.fixture(scope="module")
def client(sample_store_url: str) -> Iterator[TestClient]:
    store = open_store(sample_store_url)
    try:
        with TestClient(create_web_app(store)) as test_client:
            yield test_client
    finally:
        store.close()
