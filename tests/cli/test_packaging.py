"""The package installs whole: shipped policies by name, and the built wheel in a fresh
virtualenv running the README's commands (import the bundled data, serve, query; verify
real provenance under a builtin policy; the postgres extra)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GCB_IMAGE = "sha256:1a033b002f89ed2b8ea733162497fb70f1a4049a7f8602d6a33682b4ad9921fd"
GCB_PROVENANCE = (
    ROOT / "tests/assets/verify/slsa-verifier/cli/gcb_container/v0.2/gcloud-container-github.json"
)
VALID_STATEMENT = ROOT / "tests/assets/slsa/slsa-github-generator/attestation1.intoto"


def test_every_policy_of_the_repository_is_shipped_by_name(
    cli: Callable[..., int], capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli("policies", "list", "--json") == 0
    listed = json.loads(capsys.readouterr().out)["policies"]
    names = sorted(entry["name"] for entry in listed)
    assert names == sorted(path.stem for path in (ROOT / "policies").glob("*.yaml"))
    for entry in listed:
        assert set(entry) == {"name", "reference", "path", "description"}
        assert entry["reference"] == f"builtin:{entry['name']}"
        assert (
            Path(entry["path"]).read_bytes()
            == (ROOT / "policies" / f"{entry['name']}.yaml").read_bytes()
        )
    assert cli("policies", "show", "gcb") == 0
    assert capsys.readouterr().out == (ROOT / "policies/gcb.yaml").read_text()


def test_a_builtin_policy_verifies_like_its_path(
    cli: Callable[..., int], capsys: pytest.CaptureFixture[str]
) -> None:
    base = ("verify", GCB_IMAGE, "--attestation", str(GCB_PROVENANCE), "--json")
    assert cli(*base, "--policy", "builtin:gcb") == 0
    by_name = json.loads(capsys.readouterr().out)
    assert cli(*base, "--policy", str(ROOT / "policies/gcb.yaml")) == 0
    by_path = json.loads(capsys.readouterr().out)
    assert by_name["level"] == by_path["level"] == 3


def test_an_unknown_builtin_policy_is_a_clear_error(
    cli: Callable[..., int], capsys: pytest.CaptureFixture[str]
) -> None:
    base = ("verify", GCB_IMAGE, "--attestation", str(GCB_PROVENANCE))
    assert cli(*base, "--policy", "builtin:nope") == 2
    err = capsys.readouterr().err
    assert "builtin:nope: expected the name of a shipped policy (assay-attest, gcb" in err


# -- the built wheel in a fresh virtualenv ---------------------------------------------


def _env() -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    keep.pop("ASSAY_STORE", None)
    return keep


def _run(
    command: list[str], cwd: Path, *, check: bool = True, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        command, cwd=cwd, env=_env(), capture_output=True, text=True, timeout=timeout, check=False
    )
    if check and done.returncode != 0:
        raise AssertionError(f"{command} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    return done


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), str(ROOT)], ROOT)
    [built] = out.glob("assay-*.whl")
    return built


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("venv")
    _run([sys.executable, "-m", "venv", str(folder / "env")], folder)
    _run([str(folder / "env/bin/pip"), "install", "-q", str(wheel)], folder)
    return folder / "env" / "bin"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.slow
def test_the_wheel_holds_everything_the_commands_refer_to(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for policy in (ROOT / "policies").rglob("*"):
        if policy.is_file():
            assert f"assay/policies/{policy.relative_to(ROOT / 'policies')}" in names, policy
    assert any(name.startswith("assay/data/") and name.endswith(".gz") for name in names)
    assert "assay/py.typed" in names
    metadata = next(name for name in names if name.endswith(".dist-info/METADATA"))
    text = zipfile.ZipFile(wheel).read(metadata).decode()
    assert "License-Expression: Apache-2.0" in text
    assert "Provides-Extra: postgres" in text
    assert 'Requires-Dist: psycopg[binary]>=3.1; extra == "postgres"' in text
    assert not any(
        line.startswith("Requires-Dist: psycopg") and "extra ==" not in line
        for line in text.splitlines()
    )
    assert any(name.endswith(".dist-info/licenses/LICENSE") for name in names)


@pytest.mark.slow
def test_the_readme_commands_in_a_fresh_virtualenv(venv: Path, wheel: Path, tmp_path: Path) -> None:
    assay = str(venv / "assay")
    assert _run([assay, "--version"], tmp_path).stdout.startswith("assay ")
    store = f"sqlite:///{tmp_path / 'nvd.db'}"
    imported = _run([assay, "nvd", "import", "--store", store, "--bundled", "--json"], tmp_path)
    assert json.loads(imported.stdout)["records"]["cve"]["added"] > 0
    port = _free_port()
    server = subprocess.Popen(
        [assay, "serve", "--store", store, "--port", str(port), "--reserve-memory", "0"],
        cwd=tmp_path, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        url = f"http://127.0.0.1:{port}/rest/json/cves/2.0?cveId=CVE-2024-23113"
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(url, timeout=5) as answer:
                    body = json.loads(answer.read())
                break
            except OSError:
                assert server.poll() is None, server.stderr.read() if server.stderr else ""
                assert time.monotonic() < deadline, "the server did not answer within 60 s"
                time.sleep(0.2)
        assert body["vulnerabilities"][0]["cve"]["id"] == "CVE-2024-23113"
    finally:
        server.terminate()
        server.wait(timeout=30)
        if server.stderr is not None:
            server.stderr.close()
    validated = _run([assay, "attest", "validate", str(VALID_STATEMENT)], tmp_path)
    assert validated.stdout.startswith("valid ")
    verified = _run(
        [assay, "verify", GCB_IMAGE, "--attestation", str(GCB_PROVENANCE),
         "--policy", "builtin:gcb", "--json"],
        tmp_path,
    )  # fmt: skip
    assert json.loads(verified.stdout)["level"] == 3
    assert "builtin:slsa-github-generator-go" in _run([assay, "policies", "list"], tmp_path).stdout
    assert "complete -F _assay assay" in _run(
        [assay, "completion", "bash"], tmp_path
    ).stdout.replace("-o filenames -o bashdefault ", "")
    assert _run([assay, "man"], tmp_path).stdout.startswith(".TH ASSAY 1")
    # Without the postgres extra a PostgreSQL store is refused with the way to get it...
    refused = _run(
        [assay, "nvd", "import", "--store", "postgresql://nobody@127.0.0.1:1/none", "--bundled"],
        tmp_path,
        check=False,
    )
    assert refused.returncode == 2
    assert "pip install 'assay[postgres]'" in refused.stderr
    assert "Traceback" not in refused.stderr
    # ... and the extra brings the driver.
    _run([str(venv / "pip"), "install", "-q", f"{wheel}[postgres]"], tmp_path)
    _run([str(venv / "python"), "-c", "import psycopg, psycopg_pool"], tmp_path)
