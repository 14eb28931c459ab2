"""The Rekor look-up of legacy envelopes, against a real HTTP server on loopback.

The server answers `POST /api/v1/log/entries/retrieve` as Rekor does, with an entry
built from the real envelope (its payload hash and certificate) and signed with a log
key made here: a trusted root made of the shipped public-good root with that key as
its Rekor key. Everything the answer must carry for slsa-verifier's behaviour is
recorded: the entry body, integrated time, log id and index, the signed entry
timestamp, and an inclusion proof with a signed checkpoint.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
import rfc8785
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

from assay._cli import main
from assay.sigstore.roots import shipped_root

ASSETS = Path(__file__).resolve().parents[1] / "assets"
LEGACY = (
    ASSETS
    / "verify"
    / "slsa-verifier"
    / "cli"
    / "gha_go"
    / "v1.2.2"
    / "binary-linux-amd64-workflow_dispatch.intoto.jsonl"
)
DIGEST = "sha256:3e74797065520c7d1129d91f5322917be3f0ab92e5b01c52b5cc2459fb73cb70"
SOURCE = "github.com/slsa-framework/example-package"


class _Log:
    """A one-entry log: its key, and the answer to a search for the envelope."""

    def __init__(self, envelope: dict[str, Any], *, offset: timedelta) -> None:
        self.key = ec.generate_private_key(ec.SECP256R1())
        der = self.key.public_key().public_bytes(
            serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        self.der = der
        self.log_id = hashlib.sha256(der).digest()
        signature = envelope["signatures"][0]
        cert = x509.load_pem_x509_certificate(signature["cert"].encode())
        payload = base64.b64decode(envelope["payload"])
        body = {
            "apiVersion": "0.0.1",
            "kind": "intoto",
            "spec": {
                "content": {
                    "hash": {
                        "algorithm": "sha256",
                        "value": hashlib.sha256(json.dumps(envelope).encode()).hexdigest(),
                    },
                    "payloadHash": {
                        "algorithm": "sha256",
                        "value": hashlib.sha256(payload).hexdigest(),
                    },
                },
                "publicKey": base64.b64encode(signature["cert"].encode()).decode(),
            },
        }
        canonical = rfc8785.dumps(body)
        self.body = base64.b64encode(canonical).decode()
        self.integrated = int((cert.not_valid_before_utc + offset).timestamp())
        root = hashlib.sha256(b"\x00" + canonical).digest()
        set_payload = rfc8785.dumps(
            {
                "body": self.body,
                "integratedTime": self.integrated,
                "logID": self.log_id.hex(),
                "logIndex": 7,
            }
        )
        note = f"rekor.test - 1\n1\n{base64.b64encode(root).decode()}\n"
        note_sig = self.key.sign(note.encode(), ec.ECDSA(hashes.SHA256()))
        checkpoint = (
            note
            + "\n\u2014 rekor.test "
            + base64.b64encode(self.log_id[:4] + note_sig).decode()
            + "\n"
        )
        self.answer = [
            {
                "a" * 64: {
                    "body": self.body,
                    "integratedTime": self.integrated,
                    "logID": self.log_id.hex(),
                    "logIndex": 7,
                    "verification": {
                        "signedEntryTimestamp": base64.b64encode(
                            self.key.sign(set_payload, ec.ECDSA(hashes.SHA256()))
                        ).decode(),
                        "inclusionProof": {
                            "logIndex": 0,
                            "rootHash": root.hex(),
                            "treeSize": 1,
                            "hashes": [],
                            "checkpoint": checkpoint,
                        },
                    },
                }
            }
        ]

    def trusted_root(self) -> dict[str, Any]:
        root = json.loads(shipped_root("public-good").data)
        tlog = root["tlogs"][0]
        tlog["logId"] = {"keyId": base64.b64encode(self.log_id).decode()}
        tlog["publicKey"]["rawBytes"] = base64.b64encode(self.der).decode()
        tlog["publicKey"]["keyDetails"] = "PKIX_ECDSA_P256_SHA_256"
        root["tlogs"] = [tlog]
        return root


class _Handler(BaseHTTPRequestHandler):
    answers: ClassVar[list[Any]] = []
    requests: ClassVar[list[Any]] = []

    def do_POST(self) -> None:
        length = int(self.headers["Content-Length"])
        request = json.loads(self.rfile.read(length))
        type(self).requests.append((self.path, request))
        body = json.dumps(type(self).answers[-1]).encode()
        self.send_response(200 if self.path == "/api/v1/log/entries/retrieve" else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        return None


@pytest.fixture(scope="module")
def rekor() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _verify(
    rekor: str, root: Path, capsys: pytest.CaptureFixture[str], *extra: str
) -> tuple[int, str, str]:
    argv = [
        "verify-artifact",
        DIGEST,
        "--provenance-path",
        str(LEGACY),
        "--source-uri",
        SOURCE,
        "--rekor-url",
        rekor,
        "--trusted-root",
        str(root),
        "--only-trusted-roots",
        *extra,
    ]
    try:
        code = main(argv)
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    out = capsys.readouterr()
    return code, out.out, out.err


def _setup(tmp_path: Path, offset: timedelta) -> tuple[_Log, Path]:
    envelope = json.loads(LEGACY.read_text().splitlines()[0])
    log = _Log(envelope, offset=offset)
    root = tmp_path / "root.json"
    root.write_text(json.dumps(log.trusted_root()))
    return log, root


def test_the_entry_found_in_rekor_makes_a_legacy_envelope_pass(
    rekor: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log, root = _setup(tmp_path, timedelta(minutes=1))
    _Handler.answers.append(log.answer)
    code, out, err = _verify(rekor, root, capsys, "--json")
    assert code == 0, err
    signature = json.loads(out)["envelopes"][0]["signature"]
    assert signature["transparencyLog"] == {"proof": "rekor-lookup", "checked": True, "logIndex": 7}
    assert signature["verifiedTimes"][0]["source"] == "transparency-log"
    path, request = _Handler.requests[-1]
    assert path == "/api/v1/log/entries/retrieve"
    proposed = request["entries"][0]
    assert (proposed["kind"], proposed["apiVersion"]) == ("intoto", "0.0.1")
    assert json.loads(proposed["spec"]["content"]["envelope"]) == json.loads(LEGACY.read_text())


def test_an_entry_logged_after_the_certificate_expired_fails(
    rekor: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log, root = _setup(tmp_path, timedelta(hours=1))
    _Handler.answers.append(log.answer)
    code, _, err = _verify(rekor, root, capsys)
    assert code == 1
    assert "outside the certificate's validity" in err


def test_an_entry_signed_after_the_log_key_expired_fails(
    rekor: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log, root = _setup(tmp_path, timedelta(minutes=1))
    document = log.trusted_root()
    when = datetime.fromtimestamp(log.integrated, tz=UTC)
    document["tlogs"][0]["publicKey"]["validFor"] = {
        "start": "2021-01-01T00:00:00Z",
        "end": (when - timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    root.write_text(json.dumps(document))
    _Handler.answers.append(log.answer)
    code, _, err = _verify(rekor, root, capsys)
    assert code == 1
    assert "Rekor key" in err
    assert "was not valid at the entry's integrated time" in err


def test_an_entry_signed_by_an_untrusted_log_fails(
    rekor: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log, root = _setup(tmp_path, timedelta(minutes=1))
    other, _ = _setup(
        tmp_path / "other" if (tmp_path / "other").mkdir() is None else tmp_path,
        timedelta(minutes=1),
    )
    _Handler.answers.append(other.answer)
    code, _, err = _verify(rekor, root, capsys)
    assert code == 1
    assert "did not verify" in err
    assert log.log_id != other.log_id


def test_no_entry_fails(rekor: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, root = _setup(tmp_path, timedelta(minutes=1))
    _Handler.answers.append([])
    code, _, err = _verify(rekor, root, capsys)
    assert code == 1
    assert "one matching Rekor entry" in err


def test_rekor_unreachable_is_a_failure_that_names_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, root = _setup(tmp_path, timedelta(minutes=1))
    code, _, err = _verify("http://127.0.0.1:9", root, capsys)
    assert code == 1
    assert "Rekor search at http://127.0.0.1:9 failed" in err


def test_assay_verify_with_a_policy_looks_the_legacy_envelope_up_in_rekor(
    rekor: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The same look-up through `assay verify` and the shipped Go builder policy: the
    # entry found in Rekor stands for the log proof, nothing is waived.
    log, root = _setup(tmp_path, timedelta(minutes=1))
    _Handler.answers.append(log.answer)
    argv = [
        "verify",
        DIGEST,
        "--attestation",
        str(LEGACY),
        "--policy",
        "builtin:slsa-github-generator-go",
        "--rekor-url",
        rekor,
        "--trusted-root",
        str(root),
        "--only-trusted-roots",
        "--json",
    ]
    try:
        code = main(argv)
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    out = capsys.readouterr()
    assert code == 0, out.err
    report = json.loads(out.out)
    assert report["transparencyLogWaived"] is False
    certificate = report["attestations"][0]["certificate"]
    assert certificate["transparencyLog"] == {
        "proof": "rekor-lookup",
        "checked": True,
        "logIndex": 7,
    }
    # Without the look-up or a waiver the same envelope is refused.
    argv = [*argv[: argv.index("--rekor-url")], "--trusted-root", str(root), "--only-trusted-roots"]
    try:
        code = main(argv)
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    assert code == 1
    assert "--rekor-url" in capsys.readouterr().err
