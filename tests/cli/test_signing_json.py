"""`attest sign` and `attest verify-signature`: `--json`, thresholds by fingerprint,
unwritable outputs, and a payload with a repeated key through `assay verify`."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.verify.helpers import digest_of, provenance, write_policy

from assay import dsse
from assay.keys import PrivateKey, generate_private_key

STATEMENT = {
    "_type": "https://in-toto.io/Statement/v1",
    "subject": [{"name": "widget", "digest": {"sha256": "ab" * 32}}],
    "predicateType": "https://example.com/predicate/v1",
    "predicate": {},
}


def _keys(tmp_path: Path, name: str) -> tuple[PrivateKey, Path, Path]:
    key = generate_private_key("ed25519")
    private, public = tmp_path / f"{name}.key", tmp_path / f"{name}.pub"
    private.write_bytes(key.to_pem())
    public.write_bytes(key.public_key().to_pem())
    return key, private, public


def _run(
    cli: Callable[..., int], capsys: pytest.CaptureFixture[str], *argv: str
) -> tuple[int, str, str]:
    code = cli(*argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_sign_json_and_verify_signature_json(
    cli: Callable[..., int], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    key, private, public = _keys(tmp_path, "a")
    statement = tmp_path / "statement.json"
    statement.write_text(json.dumps(STATEMENT))
    envelope = tmp_path / "envelope.json"
    code, out, _ = _run(
        cli, capsys, "attest", "sign", "--key", str(private), "--out", str(envelope), "--json",
        str(statement),
    )  # fmt: skip
    assert code == 0
    signed = json.loads(out)
    fingerprint = key.public_key().fingerprint()
    assert signed["out"] == str(envelope)
    assert signed["payloadType"] == dsse.INTOTO_PAYLOAD_TYPE
    assert [k["fingerprint"] for k in signed["signedBy"]] == [fingerprint]
    assert json.loads(envelope.read_text()) == signed["envelope"]
    code, out, _ = _run(
        cli, capsys, "attest", "verify-signature", "--key", str(public), "--json", str(envelope)
    )
    report = json.loads(out)
    assert code == 0
    assert report["passed"] is True
    assert report["signedBy"][0]["fingerprint"] == fingerprint
    assert report["payloadSha256"] == digest_of(statement.read_bytes())
    # A wrong payload type: the JSON says so, exit 1.
    code, out, _ = _run(
        cli, capsys, "attest", "verify-signature", "--key", str(public), "--json",
        "--payload-type", "text/plain", str(envelope),
    )  # fmt: skip
    assert code == 1
    assert json.loads(out)["passed"] is False
    assert "payloadType" in json.loads(out)["error"]


def test_threshold_counts_distinct_keys_by_fingerprint(
    cli: Callable[..., int], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    key_a, _, public_a = _keys(tmp_path, "a")
    key_b, _, public_b = _keys(tmp_path, "b")
    same_a = tmp_path / "a-again.pub"  # the same key under another file name
    same_a.write_bytes(key_a.public_key().to_pem())
    payload = json.dumps(STATEMENT).encode()
    twice_a = tmp_path / "twice-a.json"  # two signatures by one key
    twice_a.write_bytes(dsse.sign(payload, dsse.INTOTO_PAYLOAD_TYPE, [key_a, key_a]).to_json())
    both = tmp_path / "both.json"
    both.write_bytes(dsse.sign(payload, dsse.INTOTO_PAYLOAD_TYPE, [key_a, key_b]).to_json())

    def check(envelope: Path, *keys: Path) -> tuple[int, dict[str, object]]:
        argv = ["attest", "verify-signature", "--threshold", "2", "--json", str(envelope)]
        code, out, _ = _run(cli, capsys, *argv, "--key", *map(str, keys))
        return code, json.loads(out)

    code, report = check(both, public_a, public_b)
    assert code == 0
    assert len({k["fingerprint"] for k in report["signedBy"]}) == 2  # type: ignore[union-attr]
    # One key listed twice is one key: threshold 2 cannot be met.
    code, report = check(both, public_a, same_a)
    assert code == 1
    assert "1 distinct trusted key" in str(report["error"])
    # Two signatures by one key count once.
    code, report = check(twice_a, public_a, public_b)
    assert code == 1
    assert report["signedBy"] == []
    assert report["signatures"] == 2


def test_sign_out_to_an_unwritable_path_is_exit_2_and_prints_nothing(
    cli: Callable[..., int], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    _, private, _ = _keys(tmp_path, "a")
    statement = tmp_path / "statement.json"
    statement.write_text(json.dumps(STATEMENT))
    target = tmp_path / "missing" / "envelope.json"
    for extra in ([], ["--json"]):
        code, out, err = _run(
            cli, capsys, "attest", "sign", "--key", str(private), "--out", str(target), *extra,
            str(statement),
        )  # fmt: skip
        assert code == 2
        assert str(target) in err
        assert out == ""
        assert "Traceback" not in err
        assert not target.exists()


def test_a_payload_with_a_repeated_key_through_assay_verify_is_exit_2(
    cli: Callable[..., int], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    key, _, public = _keys(tmp_path, "ci")
    artifact = tmp_path / "widget"
    artifact.write_bytes(b"widget\n")
    good = json.dumps(provenance({"sha256": digest_of(b"widget\n")}))
    # The same statement with `predicateType` given twice: signed by a trusted key, it
    # still cannot be verified, since two readers could see two statements.
    repeated = good[:-1] + ', "predicateType": "https://slsa.dev/provenance/v0.2"}'
    envelope = tmp_path / "widget.intoto.json"
    envelope.write_bytes(dsse.sign(repeated.encode(), dsse.INTOTO_PAYLOAD_TYPE, [key]).to_json())
    policy = write_policy(tmp_path, public)
    argv = ["verify", str(artifact), "--attestation", str(envelope), "--policy", str(policy)]
    code, out, err = _run(cli, capsys, *argv)
    assert code == 2
    assert str(envelope) in err
    assert "duplicate key" in err
    assert "PASSED" not in err + out
    # The same statement without the repeated key passes.
    envelope.write_bytes(dsse.sign(good.encode(), dsse.INTOTO_PAYLOAD_TYPE, [key]).to_json())
    assert _run(cli, capsys, *argv)[0] == 0
