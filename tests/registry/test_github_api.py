"""`assay verify-bundle` without `--bundle`: attestations fetched from GitHub's
attestations API (served on loopback from recorded bundles), paged, inline or through a
Snappy-compressed `bundle_url`, the token sent to the API only; then offline."""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.registry.recorded import Answer, Recorded, serve

from assay._cli import main
from assay.errors import RegistryError
from assay.registry import github

ASSETS = Path(__file__).resolve().parents[1] / "assets" / "registry" / "github"
GOOD = json.loads((ASSETS / "reusable-workflow-attestation.sigstore.json").read_text())
BAD = json.loads((ASSETS / "sigstoreBundle-invalid-signature.json").read_text())
DIGEST = "49a3aa6075e0f49f82843e74b5baa614ad2a588e6675612bf108a0a008c5ac25"
PAGE = f"/repos/malancas/attest-demo/attestations/sha256:{DIGEST}"
WORKFLOW = "github/artifact-attestations-workflows/.github/workflows/attest.yml"


def snappy_literals(data: bytes) -> bytes:
    """Raw Snappy of `data` as literals only (a valid stream any decoder reads)."""
    out = bytearray()
    length = len(data)
    while True:
        byte = length & 0x7F
        length >>= 7
        out.append(byte | (0x80 if length else 0))
        if not length:
            break
    for start in range(0, len(data), 60):
        chunk = data[start : start + 60]
        out.append((len(chunk) - 1) << 2)
        out += chunk
    return bytes(out)


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exit_:
            code = int(exit_.code or 0)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[Recorded]:
    first = {"attestations": [{"bundle": BAD, "repository_id": 1}]}
    second = {"attestations": [{"bundle": None, "bundle_url": "{BASE}/blob/1.json.sn"}]}
    recorded = Recorded(
        {
            f"{PAGE}?per_page=30": Answer(
                json.dumps(first).encode(),
                headers={"Link": f'<{{BASE}}{PAGE}?per_page=30&after=abc>; rel="next"'},
            ),
            f"{PAGE}?per_page=30&after=abc": Answer(json.dumps(second).encode()),
            f"{PAGE}?per_page=1": Answer(
                json.dumps(first).encode(),
                headers={"Link": f'<{{BASE}}{PAGE}?per_page=1&after=abc>; rel="next"'},
            ),
            "/blob/1.json.sn": Answer(snappy_literals(json.dumps(GOOD).encode())),
        }
    )
    monkeypatch.setenv("GH_TOKEN", "gh-secret-token")
    with serve(recorded) as running:
        monkeypatch.setenv("GITHUB_API_URL", running.url)
        yield running


ARGV = [
    "verify-bundle",
    f"sha256:{DIGEST}",
    "--repo",
    "malancas/attest-demo",
    "--signer-workflow",
    WORKFLOW,
]


def test_pages_and_bundle_urls_are_followed_and_the_token_stays_with_the_api(
    api: Recorded, tmp_path: Path
) -> None:
    code, out, err = run([*ARGV, "--cache-dir", str(tmp_path), "--json"])
    assert code == 0, err
    report = json.loads(out)
    assert [b["passed"] for b in report["bundles"]] == [False, True]
    paths = [path for path, _ in api.requests]
    assert paths == [f"{PAGE}?per_page=30", f"{PAGE}?per_page=30&after=abc", "/blob/1.json.sn"]
    tokens = [headers.get("Authorization") for _, headers in api.requests]
    assert tokens == ["Bearer gh-secret-token", "Bearer gh-secret-token", None]
    code, _, err = run([*ARGV, "--cache-dir", str(tmp_path), "--offline"])
    assert code == 0, err
    assert len(api.requests) == 3


def test_limit_stops_after_n_attestations(api: Recorded, tmp_path: Path) -> None:
    code, _, err = run([*ARGV, "--cache-dir", str(tmp_path), "--limit", "1"])
    assert code == 1  # the one attestation fetched does not verify
    assert [path for path, _ in api.requests] == [f"{PAGE}?per_page=1"]
    assert "Loaded 1 attestation(s) from GitHub's attestations API" in err


def test_an_owner_query_and_a_predicate_type_are_asked_of_the_api(
    api: Recorded, tmp_path: Path
) -> None:
    code, _, err = run(
        [
            "verify-bundle",
            f"sha256:{DIGEST}",
            "--owner",
            "malancas",
            "--cache-dir",
            str(tmp_path),
            "--predicate-type",
            "https://slsa.dev/provenance/v1",
        ]
    )
    assert code == 2  # nothing recorded for the organisation: 404
    assert (
        f"/orgs/malancas/attestations/sha256:{DIGEST}?per_page=30&predicate_type="
        "https%3A%2F%2Fslsa.dev%2Fprovenance%2Fv1: HTTP 404 not found"
    ) in err
    assert "gh-secret-token" not in err


def test_api_url_follows_the_hostname() -> None:
    assert github.api_url("github.com", {}) == "https://api.github.com"
    assert github.api_url("acme.ghe.com", {}) == "https://api.acme.ghe.com"
    assert github.api_url("git.example.com", {}) == "https://git.example.com/api/v3"
    assert github.api_url("github.com", {"GITHUB_API_URL": "https://x/api/"}) == "https://x/api"


@given(st.binary(max_size=3000))
def test_snappy_literals_round_trip(data: bytes) -> None:
    assert github.snappy_decompress(snappy_literals(data), 1 << 20, "x") == data


def test_snappy_copies_are_read() -> None:
    # "abcd" then a 1-byte-offset copy of 8 bytes at offset 4: "abcdabcdabcd"
    stream = bytes([12, 3 << 2]) + b"abcd" + bytes([1 | ((8 - 4) << 2), 4])
    assert github.snappy_decompress(stream, 100, "x") == b"abcdabcdabcd"


@pytest.mark.parametrize(
    "stream",
    [
        b"",
        b"\x05\x00a",
        bytes([8, 1 | (4 << 2), 9]),
        b"\xff\xff\xff\xff\xff\x01",
        bytes([2, 8]) + b"abc",
    ],
)
def test_broken_snappy_is_refused(stream: bytes) -> None:
    with pytest.raises(RegistryError):
        github.snappy_decompress(stream, 100, "x")
