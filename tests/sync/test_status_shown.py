"""After a real sync of the five kinds, `/metrics` and the home page of `assay serve` show
each of them, whichever way the upstream was read (date windows or change cursor): the
sync's checkpoint keys and the readers' are the same table's (`assay.nvd.operations`)."""

from __future__ import annotations

import gzip
import html
from collections.abc import Iterator
from pathlib import Path

import httpx
import orjson
import pytest
from tests.live import serving
from tests.service.servers import serving as assay_serve
from tests.service.test_metrics import samples

from assay._cli.nvd import bundled_files
from assay.nvd.ingest.importer import Importer
from assay.nvd.operations import OPERATION_NAMES, OPERATIONS
from assay.nvd.storage import open_store
from assay.nvd.sync import KINDS, Mirror

from .harness import quick_options

CPE_SAMPLE = 200
SOURCES = Path(__file__).parent.parent / "assets" / "nvd" / "sources-20.json.gz"


@pytest.fixture(scope="module")
def small_upstream(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The bundled CVEs, history and match criteria, 200 real CPEs and 20 sources, served
    by the real app on loopback."""
    folder = tmp_path_factory.mktemp("upstream")
    cpe_file = next(path for path in bundled_files() if "cpes" in path.name)
    products = orjson.loads(gzip.decompress(cpe_file.read_bytes()))["products"][:CPE_SAMPLE]
    cpes = folder / "cpes.jsonl"
    cpes.write_bytes(b"\n".join(orjson.dumps(item) for item in products))
    url = f"sqlite:///{folder / 'store.db'}"
    store = open_store(url)
    try:
        files = [path for path in bundled_files() if "cpes" not in path.name]
        report = Importer(store).import_files([*files, cpes, SOURCES])
    finally:
        store.close()
    assert report.ok, report.problems
    with serving(url) as root:
        yield root


@pytest.mark.parametrize("by_cursor", [False, True], ids=["by-date", "by-cursor"])
def test_metrics_and_home_page_show_all_five_kinds(
    small_upstream: str, tmp_path: Path, by_cursor: bool
) -> None:
    mirror_url = f"sqlite:///{tmp_path / 'mirror.db'}"
    store = open_store(mirror_url)
    try:
        options = quick_options(
            f"{small_upstream}/rest/json",
            kinds=KINDS,
            change_cursor=by_cursor,
            page_size=500,
            timeout=30,
        )
        report = Mirror(store, options).run()
    finally:
        store.close()
    assert report.ok, report.problems
    assert [kind.kind for kind in report.kinds] == list(OPERATION_NAMES)
    assert all(kind.fetched > 0 for kind in report.kinds), report.kinds

    with assay_serve(mirror_url, folder=tmp_path) as served:
        found = samples(httpx.get(served.base + "/metrics").text)
        home = html.unescape(httpx.get(served.base + "/").text)
    upstream_time = report.upstream_time
    assert upstream_time is not None
    for name in OPERATION_NAMES:
        label = (("kind", OPERATIONS[name].metric_label),)
        assert found.get(("assay_sync_complete", label)) == 1.0, (name, found)
        stamp = found.get(("assay_sync_checkpoint_timestamp_seconds", label))
        assert stamp is not None, (name, found)
        assert abs(stamp - upstream_time.timestamp()) < 3600, (name, stamp, upstream_time)
        assert f"{name}: {'cursor' if by_cursor else 'incremental'} from" in home, name
    assert small_upstream in home


def test_metrics_show_no_sync_where_there_was_none(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'empty.db'}"
    open_store(url).close()
    with assay_serve(url, folder=tmp_path) as served:
        found = samples(httpx.get(served.base + "/metrics").text)
    assert not [key for key in found if key[0].startswith("assay_sync_")]
