"""What a verification is asked about is read by one parser (`assay.verify.request`): the
command line (`assay verify`, `assay verify-artifact`) and the `/verify` page accept and
refuse the same artifact digests and attestation files, with the same message.

Before, `sha256:abc` was accepted by `assay verify` (then failed as a check) and refused by
the other two; `sha384:` was refused by `verify-artifact` only."""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from starlette.testclient import TestClient
from tests.conftest import ASSETS

from assay.policy.builtin import PREFIX

GCB_PROVENANCE = ASSETS / "verify/slsa-verifier/cli/gcb_container/v0.2/gcloud-container-github.json"
GO_PROVENANCE = (
    ASSETS
    / "verify/slsa-verifier/cli/gha_go/v2.1.0/binary-linux-amd64-workflow_dispatch.intoto.jsonl"
)
GOOD = "sha256:" + "1a" * 32

DIGESTS = [
    # (input, None when accepted, else the message every reader gives)
    ("sha256:" + "AB" * 32, None),
    ("sha384:" + "ab" * 48, None),
    ("sha512:" + "ab" * 64, None),
    ("sha256:abc", "expected 64 hex digits for sha256, found 3"),
    ("sha384:" + "ab" * 32, "expected 96 hex digits for sha384, found 64"),
    ("sha256:" + "g" * 64, "expected 64 hex digits for sha256, found 'gggg"),
    ("md5:" + "ab" * 16, "expected ALG:HEX with ALG sha256, sha384 or sha512, found 'md5:"),
    ("sha1:" + "ab" * 20, "expected ALG:HEX with ALG sha256, sha384 or sha512, found 'sha1:"),
]


def _alert(page: str) -> str:
    found = re.findall(r'role="alert">(.*?)</p>', page, re.S)
    return html.unescape(re.sub(r"<[^>]+>", "", found[0])) if found else ""


def _page(client: TestClient, digest: str, attestation: tuple[str, bytes]) -> tuple[int, str]:
    answer = client.post(
        "/verify",
        files=[("attestation", attestation)],
        data={"policy": "gcb", "digests": digest},
    )
    return answer.status_code, _alert(answer.text)


def _command(
    cli: Callable[..., int], capsys: pytest.CaptureFixture[str], *argv: str
) -> tuple[int, str]:
    capsys.readouterr()
    code = cli(*argv)
    return code, capsys.readouterr().err


@pytest.mark.parametrize(("digest", "refusal"), DIGESTS, ids=[d for d, _ in DIGESTS])
def test_every_reader_accepts_and_refuses_the_same_digests(
    client: TestClient,
    cli: Callable[..., int],
    capsys: pytest.CaptureFixture[str],
    digest: str,
    refusal: str | None,
) -> None:
    provenance = GCB_PROVENANCE.read_bytes()
    status, alert = _page(client, digest, (GCB_PROVENANCE.name, provenance))
    verify = _command(
        cli, capsys, "verify", digest, "--attestation", str(GCB_PROVENANCE),
        "--policy", f"{PREFIX}gcb",
    )  # fmt: skip
    artifact = _command(
        cli, capsys, "verify-artifact", digest, "--provenance-path", str(GO_PROVENANCE),
        "--source-uri", "github.com/slsa-framework/example-package",
    )  # fmt: skip
    if refusal is None:
        assert status == 200, alert
        assert verify[0] != 2, verify[1]
        assert artifact[0] != 2, artifact[1]
        return
    assert status == 400
    assert f"artifact digests line 1: {refusal}" in alert
    for code, err in (verify, artifact):
        assert code == 2
        assert f"{digest}: {refusal}" in err


def test_an_unsigned_statement_is_refused_alike(
    client: TestClient,
    cli: Callable[..., int],
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    statement = (
        b'{"_type": "https://in-toto.io/Statement/v1", "subject": [{"name": "a", '
        b'"digest": {"sha256": "' + b"1a" * 32 + b'"}}], "predicateType": '
        b'"https://slsa.dev/provenance/v1", "predicate": {}}'
    )
    path = tmp_path / "statement.json"
    path.write_bytes(statement)
    refusal = "expected a signed attestation (a DSSE envelope or a Sigstore bundle)"
    status, alert = _page(client, GOOD, ("statement.json", statement))
    assert status == 400
    assert refusal in alert
    code, err = _command(
        cli, capsys, "verify", GOOD, "--attestation", str(path), "--policy", f"{PREFIX}gcb"
    )
    assert code == 2
    assert refusal in err


def test_a_policy_key_that_is_no_key_is_refused_alike(
    client: TestClient,
    cli: Callable[..., int],
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    # The same policy text, posted and given as a file: the policy reader names the key.
    text = (
        "version: 1\nbuildTypes: [https://example.com/build/v1]\nsigners:\n"
        "  - name: ci\n    publicKeys: ['-----BEGIN PUBLIC KEY-----\\nnot a key\\n"
        "-----END PUBLIC KEY-----\\n']\n    builders: [{id: https://example.com/builder}]\n"
    )
    path = tmp_path / "pasted policy"
    path.write_text(text)
    answer = client.post(
        "/verify",
        files=[("attestation", (GCB_PROVENANCE.name, GCB_PROVENANCE.read_bytes()))],
        data={"policy_text": text, "digests": GOOD},
    )
    assert answer.status_code == 400
    alert = _alert(answer.text)
    assert "$.signers[0].publicKeys[0]" in alert
    code, err = _command(
        cli, capsys, "verify", GOOD, "--attestation", str(GCB_PROVENANCE), "--policy", str(path)
    )
    assert code == 2
    reason = alert.split("$.signers[0].publicKeys[0]", 1)[1]
    assert len(reason) > 10, alert  # the reader says what it expected and found
    assert reason in err
