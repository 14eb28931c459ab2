"""One scan request for `assay scan`, `POST /api/scan` and `/scan`: the same inputs give
the same findings and verdict through all three, VEX included, and the same bad input
the same reason (exit 2 on the command line, 4xx over HTTP). The app is the real one,
over a real store (the bundled NVD sample and the OSV sample)."""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st
from starlette.testclient import TestClient
from tests.conftest import ASSETS, make_store_url
from tests.osv.conftest import osv_sample_paths

from assay.audit.request import (
    NamedData,
    RequestFieldError,
    ScanFields,
    ScanLimits,
    fields_from_json,
    parse_scan_request,
)
from assay.audit.run import EMPTY_STORE
from assay.nvd.storage import open_store
from assay.web.app import create_web_app
from assay.web.scan_api import REQUEST_TYPE, plain_filename

# A real VEX document (Chainguard's, via anchore/vunnel: tests/assets/vex/SOURCES.md):
# CVE-2023-45803 (alias of CGA-7qjw-ggh3-pp9f) is `fixed` in urllib3 1.26.16+cgr.0.
VEX = (
    ASSETS / "vex/real/vex/openvex/anchore-vunnel/tests/unit/providers/chainguard_libraries/"
    "test-fixtures/input/openvex/pypi/urllib3.openvex.json"
)
URLLIB3 = "pkg:pypi/urllib3@1.26.16%2Bcgr.0"  # OSV: CVE-2023-43804 and CVE-2023-45803
UV_LOCK = ASSETS / "lockfiles/fastapi-mvc/uv.lock"
RULE = "severity>=LOW"


@pytest.fixture(scope="module")
def store_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    from assay._cli import main

    (url,) = make_store_url("sqlite", tmp_path_factory.mktemp("scan-request"))
    assert main(["nvd", "import", "--store", url, "--bundled", "--json"]) == 0
    paths = [str(p) for p in osv_sample_paths()]
    assert main(["osv", "import", "--store", url, "--json", *paths]) == 0
    return url


@pytest.fixture(scope="module")
def client(store_url: str) -> Iterator[TestClient]:
    store = open_store(store_url)
    try:
        with TestClient(create_web_app(store)) as test_client:
            yield test_client
    finally:
        store.close()


def _cli_json(cli: Callable[..., int], out: Path, *argv: str) -> tuple[int, dict[str, Any]]:
    code = cli("scan", "--format", "json", "--out", str(out), *argv)
    return code, orjson.loads(out.read_bytes())


def _api(client: TestClient, request: dict[str, Any]) -> Any:
    return client.post(
        "/api/scan", content=orjson.dumps(request), headers={"content-type": REQUEST_TYPE}
    )


def _page(client: TestClient, *, vex: bool, **fields: str) -> Any:
    files = [("input", (UV_LOCK.name, UV_LOCK.read_bytes()))]
    if vex:
        files.append(("vex", (VEX.name, VEX.read_bytes())))
    return client.post("/scan", files=files, data=fields)


def _same_answer(document: dict[str, Any]) -> tuple[Any, Any]:
    """What must agree: every component with its findings (VEX statements included), and
    the verdict (the inputs list differs only in how each front end names them)."""
    return document["components"], document["verdict"]


def test_the_same_request_gives_the_same_findings_and_verdict_through_all_three(
    cli: Callable[..., int], store_url: str, client: TestClient, tmp_path: Path
) -> None:
    for vex in (False, True):
        argv = [str(UV_LOCK), "--store", store_url, "--purl", URLLIB3, "--fail-on", RULE]
        code, from_cli = _cli_json(
            cli, tmp_path / f"cli-{vex}.json", *argv, *(["--vex", str(VEX)] if vex else [])
        )
        request: dict[str, Any] = {
            "inputs": [{"name": UV_LOCK.name, "content": UV_LOCK.read_text()}],
            "purls": [URLLIB3],
            "failOn": [RULE],
        }
        if vex:
            request["vex"] = [{"name": VEX.name, "content": orjson.loads(VEX.read_bytes())}]
        from_api = _api(client, request)
        assert from_api.status_code == 200, from_api.text
        from_page = _page(client, vex=vex, purls=URLLIB3, fail_on=RULE, format="json")
        assert from_page.status_code == 200, from_page.text
        assert _same_answer(from_api.json()) == _same_answer(from_cli)
        assert _same_answer(from_page.json()) == _same_answer(from_cli)
        findings = {
            v["id"]: v.get("vex", {}).get("status")
            for c in from_cli["components"]
            if c["purl"] == URLLIB3
            for v in c["vulnerabilities"]
        }
        assert findings == {
            "CVE-2023-43804": None,
            "CVE-2023-45803": "fixed" if vex else None,
        }
        suppressed = {f["id"] for f in from_cli["verdict"]["vexSuppressed"]}
        assert suppressed == ({"CVE-2023-45803"} if vex else set())
        assert code == 1  # CVE-2023-43804 is HIGH and no statement speaks of it
        assert from_cli["verdict"]["passed"] is False
        listed = [i for i in from_api.json()["inputs"] if i["format"] == "openvex"]
        assert len(listed) == (1 if vex else 0)


def test_the_page_shows_the_verdict_and_the_vex_status(client: TestClient) -> None:
    page = _page(client, vex=True, purls=URLLIB3, fail_on=RULE)
    assert page.status_code == 200, page.text
    shown = html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page.text)))
    assert "Verdict: FAILED" in shown
    assert "VEX fixed" in shown
    assert "1 not affected or fixed (VEX)" in shown


# (CLI arguments, JSON request, form fields, the reason all three give)
BAD: list[tuple[list[str], dict[str, Any], dict[str, str], str]] = [
    (
        ["--purl", URLLIB3, "--min-confidence", "2"],
        {"purls": [URLLIB3], "minConfidence": 2},
        {"purls": URLLIB3, "min_confidence": "2"},
        "expected a number from 0 to 1, found 2",
    ),
    (
        ["--purl", URLLIB3, "--fail-on", "severity>=SEVERE"],
        {"purls": [URLLIB3], "failOn": ["severity>=SEVERE"]},
        {"purls": URLLIB3, "fail_on": "severity>=SEVERE"},
        "expected a severity NONE/LOW/MEDIUM/HIGH/CRITICAL, found 'SEVERE'",
    ),
    (
        ["--purl", URLLIB3, "--sources", "nvd,ghsa"],
        {"purls": [URLLIB3], "sources": ["nvd", "ghsa"]},
        {"purls": URLLIB3, "sources": "nvd,ghsa"},
        "expected some of nvd, osv, cve5, found 'ghsa'",
    ),
    (
        ["--purl", "pkg:pypi/x@1", "--purl", "not-a-purl"],
        {"purls": ["pkg:pypi/x@1", "not-a-purl"]},
        {"purls": "pkg:pypi/x@1\nnot-a-purl"},
        "expected a package URL",
    ),
    ([], {}, {}, "nothing to scan: expected input files or purls"),
]


@pytest.mark.parametrize("case", BAD)
def test_the_same_bad_input_gives_the_same_reason_through_all_three(
    cli: Callable[..., int],
    store_url: str,
    client: TestClient,
    capsys: pytest.CaptureFixture[str],
    case: tuple[list[str], dict[str, Any], dict[str, str], str],
) -> None:
    argv, request_, form, reason = case
    assert cli("scan", "--store", store_url, *argv) == 2
    assert reason.replace("found 2", "found '2'") in capsys.readouterr().err
    api = _api(client, request_)
    assert api.status_code == 400, api.text
    assert reason in api.json()["error"]
    page = client.post("/scan", files={"input": ("", b"")}, data={**form, "format": "json"})
    assert page.status_code == 400, page.text
    assert reason.replace("found 2", "found '2'") in page.json()["error"]


def test_an_empty_store_is_refused_alike(
    cli: Callable[..., int], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite:///{tmp_path / 'empty.db'}"
    open_store(url).close()
    assert cli("scan", "--store", url, "--purl", URLLIB3) == 2
    assert EMPTY_STORE in capsys.readouterr().err
    store = open_store(url)
    try:
        with TestClient(create_web_app(store)) as client:
            api = _api(client, {"purls": [URLLIB3]})
            page = client.post("/scan", data={"purls": URLLIB3, "format": "json"})
    finally:
        store.close()
    assert (api.status_code, api.json()) == (503, {"error": EMPTY_STORE})
    assert (page.status_code, page.json()) == (503, {"error": EMPTY_STORE})


def test_the_raw_body_and_query_form_of_the_api_is_the_same_request(client: TestClient) -> None:
    raw = client.post(
        f"/api/scan?filename=uv.lock&purl={URLLIB3.replace('%', '%25')}&failOn={RULE}",
        content=UV_LOCK.read_bytes(),
    )
    as_json = _api(
        client,
        {
            "inputs": [{"name": "uv.lock", "content": UV_LOCK.read_text()}],
            "purls": [URLLIB3],
            "failOn": [RULE],
        },
    )
    assert raw.status_code == as_json.status_code == 200
    assert _same_answer(raw.json()) == _same_answer(as_json.json())


BAD_JSON: list[tuple[object, str]] = [
    ([], "$: expected an object"),
    ({"purl": ["pkg:pypi/x@1"]}, "purl: unknown field"),
    ({"purls": "pkg:pypi/x@1", "failOn": [1]}, "failOn: expected an array of strings"),
    ({"inputs": [{"name": "a.json"}]}, "inputs[0].content: expected the file as text or as JSON"),
    ({"inputs": [{"name": "a b", "content": "x"}]}, "inputs[0].name: expected a plain file name"),
    ({"vex": {"name": "v.json"}}, "vex: expected an array of files"),
    ({"failOnConditional": "yes"}, "failOnConditional: expected true or false"),
    ({"minConfidence": [1]}, "minConfidence: expected a number"),
]


@pytest.mark.parametrize(("document", "message"), BAD_JSON)
def test_a_malformed_json_request_names_the_field(document: object, message: str) -> None:
    with pytest.raises(Exception, match=re.escape(message)):
        parse_scan_request(fields_from_json(document, plain_filename))


@given(st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=8))
def test_min_confidence_is_a_number_from_0_to_1_whatever_is_typed(value: float | str) -> None:
    fields = ScanFields(purls=[("pkg:pypi/x@1", "purls")], min_confidence=value)
    try:
        number = float(value)
    except ValueError:
        number = float("nan")
    if value == "":
        assert parse_scan_request(fields).min_confidence == 0.0
    elif 0.0 <= number <= 1.0:
        assert parse_scan_request(fields).min_confidence == number
    else:
        with pytest.raises(RequestFieldError) as refused:
            parse_scan_request(fields)
        assert refused.value.field == "minConfidence"


def test_limits_are_the_front_ends_and_purls_count_once() -> None:
    purls = [("pkg:pypi/x@1", f"line {n}") for n in range(5)]
    request = parse_scan_request(ScanFields(purls=purls), ScanLimits(max_purls=1))
    assert request.purls == (("pkg:pypi/x@1", "line 0"),)
    many = [NamedData(f"f{n}", b"x") for n in range(3)]
    with pytest.raises(RequestFieldError, match="inputs: expected at most 2 inputs, found 3"):
        parse_scan_request(ScanFields(inputs=many), ScanLimits(max_inputs=2))


def test_a_signed_vex_document_is_refused_alike_without_a_trusted_key(
    cli: Callable[..., int],
    store_url: str,
    client: TestClient,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A signed document counts only once its signature verifies: the command line
    without `--vex-key`, and the server (which trusts no VEX signer), refuse it alike."""
    from assay import dsse
    from assay.keys import generate_private_key

    signed = dsse.sign(
        VEX.read_bytes(), dsse.INTOTO_PAYLOAD_TYPE, [generate_private_key("ecdsa-p256")]
    ).to_json()
    path = tmp_path / "signed.openvex.json"
    path.write_bytes(signed)
    reason = "the DSSE envelope is signed, and no trusted key was given to verify it"
    assert cli("scan", "--store", store_url, "--purl", URLLIB3, "--vex", str(path)) == 2
    assert reason in capsys.readouterr().err
    api = _api(
        client,
        {"purls": [URLLIB3], "vex": [{"name": path.name, "content": orjson.loads(signed)}]},
    )
    assert api.status_code == 400, api.text
    assert reason in api.json()["error"]
