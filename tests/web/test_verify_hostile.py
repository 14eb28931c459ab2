"""Hostile policies, payloads and lock files posted to the real app: a 400 at once, never a 500."""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient
from tests.verify.helpers import provenance, write_policy
from tests.verify.test_hostile_fuzz import EXAMPLES, FUZZ, mutations
from tests.verify.test_hostile_inputs import HOSTILE_PAYLOADS, billion_laughs
from tests.web.test_upload_pages import GCB_PROVENANCE, alert, post_verify

from assay import dsse
from assay.keys import generate_private_key


def test_a_billion_laughs_policy_is_a_400_at_once(client: TestClient) -> None:
    gcb = [("attestation", (GCB_PROVENANCE.name, GCB_PROVENANCE.read_bytes()))]
    laughs = billion_laughs()
    for fields, files in (
        ({"policy_text": laughs.decode()}, gcb),
        ({}, [*gcb, ("policy_file", ("laughs.yaml", laughs))]),
    ):
        started = time.monotonic()
        page = post_verify(client, files, **fields)
        assert time.monotonic() - started < 5
        assert page.status_code == 400, page.text
        message = alert(page.text)
        assert "line 8 column 5" in message, message
        assert "aliases expanded" in message, message
    deep = "version: 1\nsigners: " + "[" * 5000 + "]" * 5000
    page = post_verify(client, gcb, policy_text=deep)
    assert page.status_code == 400
    assert "nesting at most 32 deep" in alert(page.text)


@pytest.mark.parametrize("kind", ["lone-surrogate", "bom", "nan"])
def test_a_hostile_signed_payload_is_a_failed_statement_not_a_500(
    client: TestClient, kind: str
) -> None:
    key = generate_private_key("ecdsa-p256")
    statement = provenance({"sha256": "ab" * 32})
    payload = HOSTILE_PAYLOADS[kind](json.dumps(statement).encode())
    envelope = dsse.sign(payload, dsse.INTOTO_PAYLOAD_TYPE, [key]).to_json()
    with tempfile.TemporaryDirectory() as folder:
        pem = Path(folder) / "ci.pub"
        pem.write_bytes(key.public_key().to_pem())
        policy = json.loads(write_policy(Path(folder), pem).read_text())
    policy["signers"][0]["publicKeys"] = [key.public_key().to_pem().decode()]
    page = post_verify(
        client,
        [("attestation", ("hostile.intoto.json", envelope))],
        policy_text=json.dumps(policy),
        digests=f"sha256:{'ab' * 32}",
        format="json",
    )
    assert page.status_code in (200, 400), page.text
    if page.status_code == 200:
        answer = page.json()
        assert answer["validation"][0]["valid"] is False  # attest validate's findings
        report = answer["report"]
        assert report["passed"] is False
        failed = [c for a in report["attestations"] for c in a["checks"] if not c["passed"]]
        assert any(c["check"] == "statement" for c in failed), failed
    else:
        assert "hostile.intoto.json" in page.json()["error"]


@pytest.mark.parametrize("filename", ["poetry.lock", "uv.lock"])
def test_a_deeply_nested_lock_file_is_a_400_on_scan_and_the_api(
    client: TestClient, filename: str
) -> None:
    data = b"x = " + b"[" * 5000 + b"]" * 5000 + b"\n"
    page = client.post("/scan", files={"input": (filename, data)})
    assert page.status_code == 400, page.text
    assert filename in alert(page.text)
    assert "nesting" in alert(page.text)
    api = client.post(f"/api/scan?filename={filename}", content=data)
    assert api.status_code == 400, api.text
    assert "nesting" in api.text


_KEY = generate_private_key("ecdsa-p256")


def _trusting_policy() -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder:
        pem = Path(folder) / "ci.pub"
        pem.write_bytes(_KEY.public_key().to_pem())
        policy: dict[str, Any] = json.loads(write_policy(Path(folder), pem).read_text())
    policy["signers"][0]["publicKeys"] = [_KEY.public_key().to_pem().decode()]
    return policy


@settings(FUZZ, max_examples=max(EXAMPLES // 4, 10))
@given(mutations(json.dumps(provenance({"sha256": "ab" * 32})).encode()), st.booleans())
def test_mutated_signed_payloads_and_policies_are_never_a_500(
    client: TestClient, payload: bytes, mutate_policy: bool
) -> None:
    envelope = dsse.sign(payload, dsse.INTOTO_PAYLOAD_TYPE, [_KEY]).to_json()
    policy = json.dumps(_trusting_policy()).encode()
    if mutate_policy:  # the same edits, applied to the policy instead
        policy = policy.replace(b'"version": 1', b'"version": 1' + payload[:40], 1)
    page = post_verify(
        client,
        [("attestation", ("fuzz.intoto.json", envelope))],
        policy_text=policy.decode("utf-8", "replace"),
        digests=f"sha256:{'ab' * 32}",
        format="json",
    )
    assert page.status_code in (200, 400), page.text
