"""Every link of the demo store's pages resolves: the store `make run` serves (the bundled
sample) is walked from the home page, the product list and every CVE page. Before, almost
every match-criteria link of a CVE page was a 404: the sample holds the criteria of one
CVE only, and a criteria page read only stored match-criteria records."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import orjson
import pytest
from starlette.testclient import TestClient

from assay._cli import main
from assay.nvd.cve_query import CveQuery
from assay.nvd.storage import open_store
from assay.web.app import create_web_app

EXTERNAL = re.compile(r"^[a-z][a-z0-9+.-]*:|^//")
LINK = re.compile(r'href="([^"#]+)"')


@pytest.mark.slow
def test_every_link_of_the_demo_pages_resolves(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'demo.db'}"
    assert main(["nvd", "import", "--store", url, "--bundled"]) == 0
    store = open_store(url)
    try:
        ids = [
            orjson.loads(r)["id"]
            for r in store.search_cves(CveQuery(results_per_page=2000)).records
        ]
        queue = ["/", "/cpe", *(f"/cve/{cve_id}" for cve_id in ids)]
        seen: set[str] = set()
        broken: Counter[tuple[int, str]] = Counter()
        examples: dict[tuple[int, str], str] = {}
        with TestClient(create_web_app(store)) as client:
            while queue:
                path = queue.pop()
                if path in seen:
                    continue
                seen.add(path)
                answer = client.get(path)
                if answer.status_code != 200:
                    kind = (answer.status_code, re.sub(r"/[^/]+$", "/…", urlsplit(path).path))
                    broken[kind] += 1
                    examples.setdefault(kind, path)
                    continue
                if "text/html" not in answer.headers.get("content-type", ""):
                    continue
                for raw in LINK.findall(answer.text):
                    href = raw.replace("&amp;", "&")
                    if not EXTERNAL.match(href):
                        queue.append(urljoin(path, href))
    finally:
        store.close()
    assert len(seen) > 1000  # the CVE pages, their criteria, products, searches
    assert not broken, {kind: (count, examples[kind]) for kind, count in broken.items()}
