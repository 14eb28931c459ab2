"""A published snapshot series, served by `assay serve --snapshots DIR` or by a plain
static web server, followed by `assay nvd sync --upstream ... --key PUB`: one download per
change set, every signature and digest checked, and a refusal (or pages) when no chain of
snapshots continues the follower's store."""

from __future__ import annotations

import contextlib
import gzip
import json
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, cast

import httpx
import jsonschema
import orjson
import pytest
from tests.conftest import backends, make_store_url
from tests.service.servers import free_port, serving

from assay._cli.nvd import bundled_files
from assay.cve5.kev import read_catalogue
from assay.nvd.dates import format_nvd_timestamp
from assay.nvd.ingest.importer import Importer
from assay.nvd.storage import Store, open_store
from assay.snapshot.kinds import KINDS
from assay.snapshot.sources import SOURCE_KINDS

Cli = Callable[..., int]
KEV = (
    Path(__file__).parent.parent
    / "assets"
    / "cve5"
    / "kev"
    / "known_exploited_vulnerabilities.json"
)


def _cve_lines() -> list[bytes]:
    [cves] = [path for path in bundled_files() if path.name.startswith("nvd-cves")]
    with gzip.open(cves, "rb") as handle:
        return [line.rstrip(b"\n") for line in handle if line.strip()]


def _contents(store: Store) -> dict[str, list[bytes]]:
    return {kind.name: sorted(kind.records(store, None)) for kind in (*KINDS, *SOURCE_KINDS)}


@contextlib.contextmanager
def _static_server(folder: Path) -> Iterator[str]:
    """Python's own static file server over `folder`."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1",
         "--directory", str(folder)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}/"
    try:
        for _ in range(200):
            with contextlib.suppress(httpx.HTTPError):
                httpx.get(base, timeout=1)
                break
            time.sleep(0.05)
        yield base
    finally:
        process.terminate()
        process.wait(timeout=10)


class Central:
    """The central mirror: a store, its key, and the folder it publishes into."""

    def __init__(self, folder: Path, cli: Cli) -> None:
        self.folder = folder
        self.cli = cli
        self.published = folder / "published"
        self.published.mkdir()
        self.url = f"sqlite:///{folder / 'central.db'}"
        self.store = open_store(self.url)
        prefix = folder / "central"
        assert cli("keys", "generate", "--type", "ecdsa-p256", "--out", str(prefix)) == 0
        self.key, self.public = Path(f"{prefix}.key"), Path(f"{prefix}.pub")
        self.lines = _cve_lines()
        self._import(self.lines[:150])
        cast(Any, self.store).replace_kev(read_catalogue(KEV.read_bytes(), str(KEV)))

    def _import(self, lines: list[bytes]) -> None:
        path = self.folder / "cves.jsonl"
        path.write_bytes(b"\n".join(lines) + b"\n")
        assert Importer(self.store).import_files([path]).ok

    def change(self, start: int) -> None:
        """New CVEs and one changed record."""
        changed = orjson.loads(self.lines[0])
        changed["lastModified"] = format_nvd_timestamp(datetime.now(UTC) - timedelta(minutes=1))
        changed["descriptions"][0]["value"] = f"Changed at {start}."
        self._import([*self.lines[start : start + 10], orjson.dumps(changed)])

    def publish(self) -> int:
        return self.cli(
            "store", "export", "--store", self.url, "--publish", str(self.published),
            "--key", str(self.key),
        )  # fmt: skip


@pytest.fixture
def central(tmp_path: Path, cli: Cli, capsys: pytest.CaptureFixture[str]) -> Iterator[Central]:
    made = Central(tmp_path, cli)
    try:
        assert made.publish() == 0
        made.change(150)
        assert made.publish() == 0
        capsys.readouterr()
        yield made
    finally:
        made.store.close()


@pytest.fixture(params=backends())
def follower_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    folder = tmp_path / f"follower-{request.param}"
    folder.mkdir()
    yield from make_store_url(request.param, folder)


def _sync(cli: Cli, url: str, upstream: str, public: Path, *extra: str) -> int:
    return cli(
        "nvd", "sync", "--store", url, "--upstream", upstream, "--key", str(public), "--json",
        *extra,
    )  # fmt: skip


def _applied(capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    applied: list[dict[str, Any]] = json.loads(capsys.readouterr().out)["applied"]
    return applied


def test_the_index_lists_each_snapshot_with_its_generations(central: Central) -> None:
    index = json.loads((central.published / "index.json").read_text())
    full, delta = index["snapshots"]
    assert full["since"] is None
    assert delta["since"] == full["generation"] < delta["generation"]
    assert delta["records"] == 11  # 10 new CVEs and one changed
    for entry in (full, delta):
        assert (central.published / entry["name"]).stat().st_size == entry["bytes"]
        assert entry["signatures"] == {"dsse": entry["name"] + ".intoto.json"}
    # Nothing written since: nothing published.
    assert central.publish() == 0
    assert len(json.loads((central.published / "index.json").read_text())["snapshots"]) == 2


@pytest.mark.parametrize("server", ["assay", "static"])
def test_a_follower_applies_the_chain_then_each_new_delta(  # noqa: PLR0917 - fixtures
    central: Central,
    follower_url: str,
    server: str,
    tmp_path: Path,
    cli: Cli,
    capsys: pytest.CaptureFixture[str],
) -> None:
    with contextlib.ExitStack() as stack:
        if server == "assay":
            served = stack.enter_context(
                serving(central.url, "--snapshots", str(central.published), folder=tmp_path)
            )
            upstream = f"{served.base}/rest/json"
        else:
            upstream = stack.enter_context(_static_server(central.published))
        assert _sync(cli, follower_url, upstream, central.public) == 0
        assert len(_applied(capsys)) == 2  # the full snapshot, then the delta
        follower = open_store(follower_url)
        try:
            assert _contents(follower) == _contents(central.store)
            central.change(160)
            assert central.publish() == 0
            capsys.readouterr()
            assert _sync(cli, follower_url, upstream, central.public) == 0
            [applied] = _applied(capsys)
            assert applied["records"] == 11
            assert _contents(follower) == _contents(central.store)
            assert _sync(cli, follower_url, upstream, central.public) == 0
            assert _applied(capsys) == []  # up to date: nothing downloaded
        finally:
            follower.close()


def test_the_api_lists_and_serves_only_the_published_files(
    central: Central, tmp_path: Path
) -> None:
    with serving(central.url, "--snapshots", str(central.published), folder=tmp_path) as served:
        listed = httpx.get(f"{served.base}/api/snapshots").json()
        assert listed == json.loads((central.published / "index.json").read_text())
        name = listed["snapshots"][0]["name"]
        answer = httpx.get(f"{served.base}/api/snapshots/{name}")
        assert answer.status_code == 200
        assert answer.content == (central.published / name).read_bytes()
        signature = httpx.get(f"{served.base}/api/snapshots/{name}.intoto.json")
        assert signature.status_code == 200
        (central.published / "stray.snap").write_bytes(b"not listed")
        for path in ("stray.snap", "..%2Fcentral.db", "nothing"):
            assert httpx.get(f"{served.base}/api/snapshots/{path}").status_code == 404
        # The API description lists the two paths, and the index answers its schema.
        described = httpx.get(f"{served.base}/openapi.json").json()["paths"]
        index_schema = described["/api/snapshots"]["get"]["responses"]["200"]["content"]
        jsonschema.validate(listed, index_schema["application/json"]["schema"])
        assert "/api/snapshots/{name}" in described


def test_no_chain_is_refused_or_read_by_pages(
    central: Central, tmp_path: Path, cli: Cli, capsys: pytest.CaptureFixture[str]
) -> None:
    """A store that holds data no snapshot brought (here: synced by pages) gets no
    snapshots: refused with --snapshots-only, else read by pages."""
    url = f"sqlite:///{tmp_path / 'paged.db'}"
    with serving(central.url, "--snapshots", str(central.published), folder=tmp_path) as served:
        upstream = f"{served.base}/rest/json"
        assert cli("nvd", "sync", "--store", url, "--upstream", upstream, "--kinds", "cves") == 0
        capsys.readouterr()
        assert _sync(cli, url, upstream, central.public, "--snapshots-only") == 2
        assert "no snapshot of the series brought" in capsys.readouterr().err
        assert _sync(cli, url, upstream, central.public, "--kinds", "cves") == 0
        assert "reading pages instead" in capsys.readouterr().err


def test_a_gap_or_a_changed_file_changes_nothing(
    central: Central, tmp_path: Path, cli: Cli, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite:///{tmp_path / 'follower.db'}"
    index_path = central.published / "index.json"
    index = json.loads(index_path.read_text())
    full, delta = index["snapshots"]
    with _static_server(central.published) as upstream:
        # Only the full snapshot listed: the follower reaches it.
        index_path.write_text(json.dumps({**index, "snapshots": [full]}))
        assert _sync(cli, url, upstream, central.public, "--snapshots-only") == 0
        capsys.readouterr()
        # A later delta whose base is not where the follower is: a gap.
        index_path.write_text(json.dumps(index))
        central.change(160)
        assert central.publish() == 0
        later = json.loads(index_path.read_text())["snapshots"][-1]
        assert later["since"] == delta["generation"]
        index_path.write_text(json.dumps({**index, "snapshots": [full, later]}))
        assert _sync(cli, url, upstream, central.public, "--snapshots-only") == 2
        err = capsys.readouterr().err
        assert f"generation {full['generation']}" in err
        assert "no chain" in err
        # The delta listed again, but its file changed on the server: refused.
        index_path.write_text(json.dumps({**index, "snapshots": [full, delta]}))
        data = (central.published / delta["name"]).read_bytes()
        (central.published / delta["name"]).write_bytes(data[:-1] + bytes([data[-1] ^ 1]))
        store = open_store(url)
        try:
            before = store.generation()
            assert _sync(cli, url, upstream, central.public, "--snapshots-only") == 2
            assert "SHA-256" in capsys.readouterr().err
            assert store.generation() == before
        finally:
            store.close()


def test_required_keys_cover_the_snapshot_api(
    central: Central, tmp_path: Path, cli: Cli, capsys: pytest.CaptureFixture[str]
) -> None:
    # /api/snapshots serves the store's whole content: `--api-keys required` covers it
    # like every other answer of the server.
    capsys.readouterr()
    assert cli("api-keys", "create", "mirror", "--store", central.url, "--json") == 0
    key = json.loads(capsys.readouterr().out)["key"]
    published = str(central.published)
    with serving(
        central.url, "--api-keys", "required", "--snapshots", published, folder=tmp_path
    ) as served:
        listing = f"{served.base}/api/snapshots"
        refused = httpx.get(listing)
        assert refused.status_code == 401
        assert "API key" in refused.json()["error"]
        name = httpx.get(listing, headers={"apiKey": key}).json()["snapshots"][0]["name"]
        assert httpx.get(f"{listing}/{name}").status_code == 401
        assert httpx.get(f"{listing}/{name}", headers={"apiKey": key}).status_code == 200
