"""A real registry on loopback: Debian's `docker-registry` (distribution v2).

The fixture writes a config (temporary storage, 127.0.0.1 and a free port), starts the
binary and waits until `/v2/` answers; tests skip cleanly only when the binary is absent.
`push_layout` pushes an OCI layout directory with assay's own registry client.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from assay.registry.client import RegistryClient, RegistryError
from assay.registry.reference import Reference

REGISTRY_BINARY = shutil.which("docker-registry") or "/usr/bin/docker-registry"
ASSETS = Path(__file__).resolve().parents[1] / "assets" / "registry"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="session")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """host:port of a running registry (session-wide; tests use their own repositories)."""
    if not Path(REGISTRY_BINARY).is_file():
        pytest.skip("docker-registry is not installed")
    root = tmp_path_factory.mktemp("registry")
    port = _free_port()
    config = root / "config.yml"
    config.write_text(
        "version: 0.1\n"
        "log:\n  level: error\n  accesslog:\n    disabled: true\n"
        f"storage:\n  filesystem:\n    rootdirectory: {root / 'data'}\n"
        "  delete:\n    enabled: true\n"
        f"http:\n  addr: 127.0.0.1:{port}\n"
    )
    log = (root / "registry.log").open("wb")
    process = subprocess.Popen(
        [REGISTRY_BINARY, "serve", str(config)], stdout=log, stderr=subprocess.STDOUT
    )
    host = f"127.0.0.1:{port}"
    try:
        for _ in range(200):
            try:
                if httpx.get(f"http://{host}/v2/", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if process.poll() is not None:
                raise RuntimeError(f"docker-registry exited: {(root / 'registry.log').read_text()}")
            time.sleep(0.05)
        else:
            raise RuntimeError("docker-registry did not answer")
        yield host
    finally:
        process.terminate()
        process.wait(timeout=10)
        log.close()


def push_layout(layout: Path, ref: Reference) -> list[str]:
    """Push every blob and manifest of an OCI layout to `ref`'s repository; cosign's
    attestation manifest is tagged `sha256-HEX.att` for the image index it annotates.
    Image manifests whose layers the layout leaves out are skipped (their digests are
    all a verification needs). Returns the digests of the manifests pushed."""
    index = json.loads((layout / "index.json").read_text())
    blobs = layout / "blobs" / "sha256"
    pushed = []
    with RegistryClient() as client:
        for path in sorted(blobs.iterdir()):
            client.push_blob(ref, path.read_bytes())
        image = next(
            m["digest"]
            for m in index["manifests"]
            if m.get("annotations", {}).get("kind", "").startswith("dev.cosignproject.cosign/image")
        )
        for descriptor in index["manifests"]:
            data = (blobs / descriptor["digest"].split(":", 1)[1]).read_bytes()
            kind = descriptor.get("annotations", {}).get("kind", "")
            tag = (
                image.replace(":", "-") + ".att" if kind.endswith("/atts") else descriptor["digest"]
            )
            try:
                client.push_manifest(ref, tag, data, descriptor["mediaType"])
            except RegistryError:
                continue
            pushed.append(descriptor["digest"])
    return pushed
