"""/verify and /scan over the real app and real stores: forms posted, library verdicts shown."""

from __future__ import annotations

import html
import re
from pathlib import Path

import orjson
from hypothesis import given
from hypothesis import strategies as st
from starlette.testclient import TestClient
from tests.conftest import ASSETS
from tests.web.test_pages import parse

from assay.nvd.storage import open_store
from assay.web.app import create_web_app
from assay.web.scan_page import SCAN_FORM_BYTES
from assay.web.verify_page import VERIFY_FORM_BYTES

GCB_IMAGE = "sha256:1a033b002f89ed2b8ea733162497fb70f1a4049a7f8602d6a33682b4ad9921fd"
GCB_PROVENANCE = ASSETS / "verify/slsa-verifier/cli/gcb_container/v0.2/gcloud-container-github.json"
SIGSTORE_JS_BUNDLE = ASSETS / "sigstore/github-cli/sigstore-js-2.1.0-bundle.json"
UV_LOCK = ASSETS / "lockfiles/fastapi-mvc/uv.lock"
REQUIREMENTS = ASSETS / "lockfiles/sigstore-python/requirements.txt"
TENSORFLOW = "pkg:pypi/tensorflow@2.9.0"  # in the bundled sample: CVE-2022-29194


def alert(page: str) -> str:
    found = re.findall(r'role="alert">(.*?)</p>', page, re.S)
    assert found, "the page shows no error"
    return html.unescape(re.sub(r"<[^>]+>", "", found[0]))


def text(page: str) -> str:
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page)))


def post_verify(
    client: TestClient,
    files: list[tuple[str, tuple[str, bytes]]] | None = None,
    **fields: str,
) -> object:
    return client.post("/verify", files=files or [("attestation", ("", b""))], data=fields)


# -- /verify ---------------------------------------------------------------------------


def test_the_verify_form_lists_the_shipped_policies_and_its_limit(client: TestClient) -> None:
    from assay.policy.builtin import builtin_policies

    page = client.get("/verify")
    assert page.status_code == 200
    for policy in builtin_policies():
        assert f'<option value="{policy.name}"' in page.text
    assert "at most 4 MiB" in page.text
    assert VERIFY_FORM_BYTES == 4 * 1024 * 1024
    links = parse(page.text)
    assert set(links.inputs) <= links.labels
    for name in ("attestation_text", "policy_text", "digests"):
        assert f'<label for="{name}"' in page.text
    assert "<script" not in page.text
    assert '<a href="/verify" aria-current="page">Verify</a>' in page.text
    assert 'href="/scan"' in page.text


def test_gcb_provenance_passes_the_shipped_policy_as_the_library_says(
    client: TestClient,
) -> None:
    from assay.policy import load_policy
    from assay.verify import Artifact, Verifier, read_attestations

    data = GCB_PROVENANCE.read_bytes()
    files = [("attestation", (GCB_PROVENANCE.name, data))]
    page = client.post("/verify", files=files, data={"policy": "gcb", "digests": GCB_IMAGE})
    assert page.status_code == 200
    shown = text(page.text)
    assert "PASSED: SLSA build level 3" in shown
    assert "builtin:gcb" in shown
    assert "signed by gcb-regional-legacy" in shown
    answer = client.post(
        "/verify", files=files, data={"policy": "gcb", "digests": GCB_IMAGE, "format": "json"}
    )
    assert answer.headers["content-type"] == "application/json"
    expected = Verifier(policy=load_policy("builtin:gcb")).verify(
        [Artifact(GCB_IMAGE, {"sha256": GCB_IMAGE.split(":")[1]})],
        read_attestations(data, GCB_PROVENANCE.name),
    )
    assert answer.json()["report"] == orjson.loads(orjson.dumps(expected.to_dict(), default=str))
    assert answer.json()["report"]["passed"] is True


def test_a_digest_the_provenance_does_not_name_fails(client: TestClient) -> None:
    files = [("attestation", (GCB_PROVENANCE.name, GCB_PROVENANCE.read_bytes()))]
    other = "sha256:" + "0" * 64
    page = client.post("/verify", files=files, data={"policy": "gcb", "digests": other})
    assert page.status_code == 200
    shown = text(page.text)
    assert "FAILED" in shown
    assert f"subject [{other}] FAIL" in shown
    without = client.post("/verify", files=files, data={"policy": "gcb"})
    assert "No verdict: no artifact digest was given" in text(without.text)


def test_validation_findings_are_those_of_attest_validate(client: TestClient) -> None:
    from assay.attestation import read_documents

    data = GCB_PROVENANCE.read_bytes()
    answer = client.post(
        "/verify",
        files=[("attestation", (GCB_PROVENANCE.name, data))],
        data={"policy": "gcb", "format": "json"},
    )
    (validation,) = answer.json()["validation"]
    documents = read_documents(data)
    assert [d["findings"] for d in validation["documents"]] == [
        [f.to_dict() for f in d.findings] for d in documents
    ]
    page = client.post(
        "/verify",
        data={"policy": "gcb", "attestation_text": data.decode()},
        files=[("attestation", ("", b""))],
    )
    shown = text(page.text)
    for document in documents:
        for finding in document.findings:
            assert finding.path in shown
            assert finding.message in shown
    assert "pasted attestation" in shown


def test_a_sigstore_bundle_is_verified_offline_and_its_identity_matched(
    client: TestClient,
) -> None:
    files = [("attestation", (SIGSTORE_JS_BUNDLE.name, SIGSTORE_JS_BUNDLE.read_bytes()))]
    answer = client.post(
        "/verify",
        files=files,
        data={"policy": "slsa-github-generator-generic", "format": "json"},
    )
    (bundle,) = answer.json()["sigstoreBundles"]
    assert bundle["verified"] is True
    assert "sigstore/sigstore-js/.github/workflows/release.yml" in bundle["detail"]
    signature = answer.json()["report"]["attestations"][0]["checks"][0]
    assert signature["check"] == "signature"
    assert signature["passed"] is False  # a release workflow, not slsa-github-generator's
    assert "matches no signer" in signature["detail"]


def test_bad_verify_input_is_a_400_naming_what_and_where(client: TestClient) -> None:
    gcb = [("attestation", (GCB_PROVENANCE.name, GCB_PROVENANCE.read_bytes()))]
    cases: list[tuple[list[tuple[str, tuple[str, bytes]]] | None, dict[str, str], str]] = [
        (None, {"policy": "gcb"}, "attestation: expected an attestation"),
        ([("attestation", ("broken.json", b'{"payload": '))], {"policy": "gcb"}, "broken.json"),
        (gcb, {}, "policy: expected exactly one policy"),
        (gcb, {"policy": "gcb", "policy_text": "version: 1"}, "policy: expected exactly one"),
        (gcb, {"policy": "nope"}, "policy: expected one of assay-attest, gcb"),
        (gcb, {"policy": "gcb", "digests": f"{GCB_IMAGE}\nmd5:abc"}, "artifact digests line 2"),
        (gcb, {"policy": "gcb", "digests": "sha256:abc"}, "expected 64 hex digits"),
        (gcb, {"policy_text": "version: 1\nsignerz: []\n"}, "pasted policy: $.signerz"),
        (gcb, {"policy_text": "a: [\n"}, "pasted policy"),
        (
            gcb,
            {
                "policy_text": "version: 1\nbuildTypes: [x]\nsigners:\n"
                "  - publicKeys: [/etc/hostname]\n    builders: [{id: x}]\n"
            },
            "pasted policy: $.signers[0].publicKeys[0]: a policy posted here must carry",
        ),
    ]
    for files, fields, expected in cases:
        page = post_verify(client, files, **fields)
        assert page.status_code == 400, (fields, page.text)
        assert expected in alert(page.text), (expected, alert(page.text))
    refused = post_verify(client, gcb, policy_file="", **{"format": "json"})
    assert refused.status_code == 400
    assert refused.json()["error"].startswith("policy:")


def test_an_uploaded_policy_file_is_read_like_the_command_line_reads_it(
    client: TestClient,
) -> None:
    gcb_yaml = (Path(__file__).resolve().parents[2] / "policies/gcb.yaml").read_bytes()
    files = [
        ("attestation", (GCB_PROVENANCE.name, GCB_PROVENANCE.read_bytes())),
        ("policy_file", ("gcb.yaml", gcb_yaml)),
    ]
    page = client.post("/verify", files=files, data={"digests": GCB_IMAGE})
    # Its keys are file names: refused here, they would be read on the server.
    assert page.status_code == 400
    assert "gcb.yaml: $.signers[0].publicKeys[0]" in alert(page.text)


def test_forms_from_other_sites_other_types_and_oversize_are_refused(client: TestClient) -> None:
    gcb = {"attestation": (GCB_PROVENANCE.name, GCB_PROVENANCE.read_bytes())}
    for path in ("/verify", "/scan"):
        crossed = client.post(
            path, files=gcb, data={"policy": "gcb"}, headers={"origin": "https://evil.example"}
        )
        assert crossed.status_code == 403
        assert "another site" in crossed.text
        assert (
            client.post(
                path, files=gcb, data={"policy": "gcb"}, headers={"sec-fetch-site": "cross-site"}
            ).status_code
            == 403
        )
        assert client.post(path, files=gcb, headers={"origin": "null"}).status_code == 403
        typed = client.post(path, content=b"{}", headers={"content-type": "application/json"})
        assert typed.status_code == 415
        assert "multipart/form-data" in typed.text
        garbled = client.post(
            path,
            content=b"--x\r\nnonsense",
            headers={"content-type": "multipart/form-data; boundary=x"},
        )
        assert garbled.status_code in (400, 200)  # the parser reads what it can
        assert garbled.status_code != 500
    same = client.post(
        "/verify",
        files=gcb,
        data={"policy": "gcb", "digests": GCB_IMAGE},
        headers={"origin": "http://testserver"},
    )
    assert same.status_code == 200
    proxied = client.post(
        "/verify",
        files=gcb,
        data={"policy": "gcb", "digests": GCB_IMAGE},
        headers={"origin": "https://assay.example", "x-forwarded-host": "assay.example"},
    )
    assert proxied.status_code == 200
    big = client.post(
        "/verify",
        files={"attestation": ("big.json", b" " * (VERIFY_FORM_BYTES + 1))},
        data={"policy": "gcb"},
    )
    assert big.status_code == 413
    assert "at most 4 MiB" in big.text
    huge = client.post(
        "/scan",
        content=b"x",
        headers={
            "content-type": "multipart/form-data; boundary=x",
            "content-length": str(SCAN_FORM_BYTES * 100),
        },
    )
    assert huge.status_code == 413
    assert "at most 16 MiB" in huge.text


# -- /scan -----------------------------------------------------------------------------


def test_the_scan_form_states_its_limit_and_labels_every_field(client: TestClient) -> None:
    page = client.get("/scan")
    assert page.status_code == 200
    assert "at most 16 MiB" in page.text
    links = parse(page.text)
    assert set(links.inputs) <= links.labels
    assert '<label for="purls"' in page.text
    assert "<script" not in page.text


def test_a_lock_file_and_purls_show_the_scan_result(client: TestClient) -> None:
    files = [("input", (UV_LOCK.name, UV_LOCK.read_bytes()))]
    page = client.post("/scan", files=files, data={"purls": f"# typed\n{TENSORFLOW}\n"})
    assert page.status_code == 200
    answer = client.post(
        "/scan", files=files, data={"purls": f"# typed\n{TENSORFLOW}\n", "format": "json"}
    )
    result = answer.json()
    shown = text(page.text)
    findings = [
        (c, v) for c in result["components"] for v in c["vulnerabilities"] if not v["conditional"]
    ]
    assert findings, "the sample store has tensorflow's CVE-2022-29194"
    assert f"{len(findings)} finding" in shown
    hrefs = parse(page.text).hrefs
    for component, vulnerability in findings:
        assert f"/cve/{vulnerability['id']}" in hrefs
        assert vulnerability["severity"] in shown
        assert vulnerability["cvss"]["vector"] in shown
        assert f"{component['identifiedBy']} ({component['confidence']:.1f})" in shown
    assert "CVE-2022-29194" in shown
    assert f"{len(result['unidentified'])} unidentified" in shown
    for unidentified in result["unidentified"][:5]:
        assert html.unescape(unidentified["reason"]) in shown
    assert f"Store generation {result['store']['generation']}" in shown
    assert "uv.lock uv-lock" in shown
    assert "purls typed in purl 1" in shown


def test_the_json_answer_is_the_api_scan_contract(client: TestClient) -> None:
    data = REQUIREMENTS.read_bytes()
    page = client.post(
        "/scan", files=[("input", ("requirements.txt", data))], data={"format": "json"}
    )
    assert page.status_code == 200
    api = client.post("/api/scan?filename=requirements.txt", content=data)
    assert page.json() == api.json()


def test_bad_scan_input_is_a_400_naming_what_and_where(client: TestClient) -> None:
    # The reasons are those of `assay scan` and POST /api/scan (one request parser,
    # assay.audit.request); the page names each field by its label.
    cases: list[tuple[dict[str, tuple[str, bytes]] | None, dict[str, str], str]] = [
        (None, {}, "SBOM or lock files: nothing to scan: expected input files or purls"),
        (None, {"purls": f"{TENSORFLOW}\nnot-a-purl"}, "purls line 2: expected a package URL"),
        (
            None,
            {"purls": TENSORFLOW, "min_confidence": "2"},
            "Minimum identification confidence: expected a number from 0 to 1, found '2'",
        ),
        (None, {"purls": TENSORFLOW, "fail_on": "severity>=SEVERE"}, "Fail on: expected a"),
        (None, {"purls": TENSORFLOW, "sources": "ghsa"}, "Sources: expected some of nvd"),
        (
            {"input": ("bom.json", b'{"bomFormat": "CycloneDX", "specVersion": "9"}')},
            {},
            "bom.json: $.specVersion",
        ),
        ({"input": ("empty.json", b"  ")}, {}, "empty.json: expected an SBOM or lock file"),
        ({"input": ("notes.md", b"# hello\nworld\n")}, {}, "notes.md: expected a CycloneDX"),
    ]
    for files, fields, expected in cases:
        page = client.post("/scan", files=files or {"input": ("", b"")}, data=fields)
        assert page.status_code == 400, (fields, page.text)
        assert expected in alert(page.text), (expected, alert(page.text))
    as_json = client.post("/scan", data={"purls": "nope", "format": "json"})
    assert as_json.status_code == 400
    assert as_json.json()["error"].startswith("purls line 1")


def test_a_scan_of_an_empty_store_is_a_503(tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path / 'empty.db'}")
    try:
        with TestClient(create_web_app(store)) as client:
            page = client.post("/scan", data={"purls": TENSORFLOW})
            assert page.status_code == 503
            assert "This cannot be scanned: the vulnerability store holds no CVEs" in text(
                page.text
            )
    finally:
        store.close()


def test_the_upload_pages_import_their_half_only_when_posted() -> None:
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from assay.web import verify_page, scan_page\n"
        "heavy = [m for m in sys.modules if m.startswith(('assay.verify', 'assay.policy',"
        " 'assay.sigstore', 'sigstore', 'yaml'))]\n"
        "print(heavy)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]", out


@given(
    digests=st.lists(
        st.sampled_from([("sha256", 64), ("sha384", 96), ("sha512", 128)]).flatmap(
            lambda pair: st.text("0123456789abcdefABCDEF", min_size=pair[1], max_size=pair[1]).map(
                lambda hexdigits: f"{pair[0]}:{hexdigits}"
            )
        ),
        max_size=8,
    ),
    blank=st.sampled_from(["", "  ", "\t"]),
)
def test_digest_lines_are_read_whatever_their_case_and_blank_lines(
    digests: list[str], blank: str
) -> None:
    from assay.web.verify_run import parse_digests

    typed = f"\n{blank}\n".join(f"  {d}  " for d in digests)
    assert parse_digests(typed) == tuple(d.lower() for d in digests)


@given(name=st.text(max_size=400))
def test_uploaded_file_names_shown_are_one_printable_path_part(name: str) -> None:
    from assay.web.uploads import MAX_FILENAME_CHARS, clean_filename

    shown = clean_filename(name)
    assert len(shown) <= MAX_FILENAME_CHARS
    assert "/" not in shown
    assert "\\" not in shown
    assert all(ch.isprintable() for ch in shown)
