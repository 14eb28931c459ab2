"""`assay fetch REF... --out DIR` then an air-gapped `--attestation-dir DIR`: npm, PyPI
and GitHub answers fetched from loopback servers, verified after the servers stopped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.registry.recorded import Answer, Recorded, serve
from tests.registry.test_github_api import DIGEST as GH_DIGEST
from tests.registry.test_github_api import GOOD, WORKFLOW
from tests.registry.test_npm import V1, run
from tests.registry.test_npm import _sha512 as npm_sha512
from tests.registry.test_pypi import PYPI, SAMPLE, SAMPLE_SHA256


def test_fetch_then_verify_air_gapped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GH_TOKEN", raising=False)
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    page = f"/repos/malancas/attest-demo/attestations/sha256:{GH_DIGEST}?per_page=30"
    recorded = Recorded(
        {
            "/-/npm/v1/attestations/sigstore@2.3.1": Answer(V1.read_bytes()),
            "/pypi/sampleproject/4.0.0/json": Answer(
                json.dumps(
                    {"urls": [{"filename": SAMPLE, "digests": {"sha256": SAMPLE_SHA256}}]}
                ).encode()
            ),
            f"/integrity/sampleproject/4.0.0/{SAMPLE}/provenance": Answer(
                (PYPI / f"{SAMPLE}.provenance").read_bytes()
            ),
            page: Answer(json.dumps({"attestations": [{"bundle": GOOD}]}).encode()),
        }
    )
    out = tmp_path / "evidence"
    with serve(recorded) as server:
        url = server.url
        code, printed, err = run(
            [
                "fetch",
                "npm:sigstore@2.3.1",
                "pypi:sampleproject==4.0.0",
                f"github:malancas/attest-demo@sha256:{GH_DIGEST}",
                "--out",
                str(out),
                "--registry",
                url,
                "--index-url",
                url,
                "--api-url",
                url,
                "--json",
            ]
        )
        assert code == 0, err
        fetched = json.loads(printed)["fetched"]
        assert [f["documents"] for f in fetched] == [1, 2, 1]
    # the servers are gone: only the directory answers
    npm = [
        "verify-npm-package",
        f"sha512:{npm_sha512(V1)}",
        "--source-uri",
        "github.com/sigstore/sigstore-js",
        "--builder-id",
        "https://github.com/actions/runner/github-hosted",
        "--package-name",
        "sigstore",
        "--package-version",
        "2.3.1",
        "--registry",
        url,
        "--attestation-dir",
        str(out),
    ]
    assert run(npm)[0] == 0
    pypi = ["verify-pypi", "sampleproject==4.0.0", "--repository", "pypa/sampleproject"]
    assert run([*pypi, "--index-url", url, "--attestation-dir", str(out)])[0] == 0
    gh = [
        "verify-bundle",
        f"sha256:{GH_DIGEST}",
        "--repo",
        "malancas/attest-demo",
        "--signer-workflow",
        WORKFLOW,
        "--api-url",
        url,
        "--attestation-dir",
        str(out),
    ]
    assert run(gh)[0] == 0
    code, _, err = run([*pypi, "--attestation-dir", str(out)])  # pypi.org was not fetched
    assert code == 2
    assert "offline: https://pypi.org/pypi/sampleproject/4.0.0/json is not in the cache" in err


@pytest.mark.parametrize("ref", ["npm:sigstore", "pypi:sampleproject", "github:a@sha256:00"])
def test_a_malformed_ref_exit_2(ref: str, tmp_path: Path) -> None:
    code, _, err = run(["fetch", ref, "--out", str(tmp_path)])
    assert code == 2
    assert "REF: expected" in err
