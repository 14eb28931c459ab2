"""Snapshots through an OCI registry (Debian's docker-registry on loopback): pushed as an
artifact with their signatures, pulled back byte for byte, and imported straight from an
oci:// reference."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from tests.registry.conftest import registry  # noqa: F401 - the fixture
from tests.snapshot.test_follow import Central, _contents

from assay.nvd.storage import open_store
from assay.snapshot.oci import ARTIFACT_TYPE, SNAPSHOT_TYPE

Cli = Callable[..., int]


@pytest.fixture
def central(tmp_path: Path, cli: Cli, capsys: pytest.CaptureFixture[str]) -> Central:
    made = Central(tmp_path, cli)
    assert made.publish() == 0
    made.change(150)
    assert made.publish() == 0
    made.store.close()
    made.store = open_store(made.url)
    capsys.readouterr()
    return made


def test_push_pull_and_import_from_a_registry(
    central: Central,
    registry: str,  # noqa: F811 - the fixture
    tmp_path: Path,
    cli: Cli,
    capsys: pytest.CaptureFixture[str],
) -> None:
    try:
        index = json.loads((central.published / "index.json").read_text())
        full, delta = (central.published / entry["name"] for entry in index["snapshots"])
        series = f"oci://{registry}/assay/snapshots:series"
        assert cli("store", "push", series, str(central.published), "--json") == 0
        pushed = json.loads(capsys.readouterr().out)
        assert pushed["files"][0] == "index.json"
        # The artifact as a registry client sees it.
        manifest = httpx.get(
            f"http://{registry}/v2/assay/snapshots/manifests/series",
            headers={"Accept": "application/vnd.oci.image.manifest.v1+json"},
        ).json()
        assert manifest["artifactType"] == ARTIFACT_TYPE
        assert manifest["config"]["mediaType"] == "application/vnd.oci.empty.v1+json"
        types = {
            layer["annotations"]["org.opencontainers.image.title"]: layer["mediaType"]
            for layer in manifest["layers"]
        }
        assert types[full.name] == SNAPSHOT_TYPE
        assert types[full.name + ".intoto.json"] == "application/vnd.dsse.envelope.v1+json"
        pulled = tmp_path / "pulled"
        pulled.mkdir()
        assert cli("store", "pull", series, "--out", str(pulled)) == 0
        for name in pushed["files"]:
            assert (pulled / name).read_bytes() == (central.published / name).read_bytes()
        # One tag per snapshot, imported in order straight from the registry.
        for path, tag in ((full, "full"), (delta, "delta")):
            assert cli("store", "push", f"oci://{registry}/assay/snapshots:{tag}", str(path)) == 0
        url = f"sqlite:///{tmp_path / 'from-registry.db'}"
        references = [f"oci://{registry}/assay/snapshots:{tag}" for tag in ("full", "delta")]
        code = cli(
            "store", "import", *references, "--store", url, "--create",
            "--key", str(central.public),
        )  # fmt: skip
        assert code == 0, capsys.readouterr().err
        target = open_store(url)
        try:
            assert _contents(target) == _contents(central.store)
        finally:
            target.close()
        # A wrong key: refused before anything is written.
        other = tmp_path / "other"
        assert cli("keys", "generate", "--type", "ecdsa-p256", "--out", str(other)) == 0
        capsys.readouterr()
        fresh = f"sqlite:///{tmp_path / 'refused.db'}"
        code = cli(
            "store", "import", "--store", fresh, "--create", "--key", f"{other}.pub", references[0]
        )
        assert code == 2
        assert "does not verify" in capsys.readouterr().err
        assert not (tmp_path / "refused.db").exists()
    finally:
        central.store.close()


def test_a_large_file_is_pushed_and_pulled_a_chunk_at_a_time(
    registry: str,  # noqa: F811 - the fixture
    tmp_path: Path,
) -> None:
    """Neither a push nor a pull holds the whole file: memory stays far below its size."""
    import os
    import tracemalloc

    from assay.registry.client import RegistryClient
    from assay.snapshot import oci

    size = 24 * 1024 * 1024
    source = tmp_path / "assay-snapshot-full-20260101T000000Z.tar.zst"
    with source.open("wb") as out:
        for _ in range(size // (1024 * 1024)):
            out.write(os.urandom(1024 * 1024))
    ref = oci.oci_reference(f"oci://{registry}/assay/large:one", "test")
    pulled = tmp_path / "pulled"
    pulled.mkdir()
    small = tmp_path / "small" / source.name
    small.parent.mkdir()
    small.write_bytes(b"small")
    with RegistryClient() as client:
        oci.push(client, ref, [small])  # (the HTTP modules imported before memory is traced)
        tracemalloc.start()
        try:
            pushed = oci.push(client, ref, [source])
            _, push_peak = tracemalloc.get_traced_memory()
            tracemalloc.reset_peak()
            written = oci.pull(client, ref, pulled)
            _, pull_peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert pushed.files == (source.name,)
    assert written == [pulled / source.name]
    assert (pulled / source.name).read_bytes() == source.read_bytes()
    assert push_peak < 4 * 1024 * 1024, push_peak
    assert pull_peak < 4 * 1024 * 1024, pull_peak


def test_a_pulled_file_whose_content_lacks_its_digest_is_not_kept(tmp_path: Path) -> None:
    import hashlib

    from assay.errors import RegistryError
    from assay.registry.client import OCI_MANIFEST, RegistryClient
    from assay.snapshot import oci

    name = "assay-snapshot-full-20260101T000000Z.tar.zst"
    digest = "sha256:" + hashlib.sha256(b"the snapshot").hexdigest()
    manifest = {
        "schemaVersion": 2,
        "mediaType": OCI_MANIFEST,
        "artifactType": ARTIFACT_TYPE,
        "config": {"mediaType": oci.EMPTY_TYPE, "digest": digest, "size": 2},
        "layers": [
            {
                "mediaType": SNAPSHOT_TYPE,
                "digest": digest,
                "size": 12,
                "annotations": {oci.TITLE: name},
            }
        ],
    }

    def answer(request: httpx.Request) -> httpx.Response:
        if "/manifests/" in request.url.path:
            return httpx.Response(200, json=manifest, headers={"content-type": OCI_MANIFEST})
        return httpx.Response(200, content=b"other bytes!")  # (not the digest's content)

    ref = oci.oci_reference("oci://127.0.0.1:9/assay/wrong:one", "test")
    with (
        RegistryClient(transport=httpx.MockTransport(answer)) as client,
        pytest.raises(RegistryError, match="does not have the digest"),
    ):
        oci.pull(client, ref, tmp_path)
    assert list(tmp_path.iterdir()) == []
