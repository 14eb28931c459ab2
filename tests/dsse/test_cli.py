from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest


@pytest.mark.parametrize("kind", ["ed25519", "ecdsa-p256", "rsa-3072"])
def test_generate_sign_verify(
    cli: Callable[..., int], tmp_path: Path, kind: str, capsys: pytest.CaptureFixture[str]
) -> None:
    prefix = tmp_path / "k"
    assert cli("keys", "generate", "--type", kind, "--out", str(prefix)) == 0
    assert (tmp_path / "k.key").stat().st_mode & 0o077 == 0
    statement = tmp_path / "s.json"
    statement.write_text('{"_type": "https://in-toto.io/Statement/v1"}')
    envelope = tmp_path / "e.json"
    assert (
        cli("attest", "sign", "--key", f"{prefix}.key", str(statement), "--out", str(envelope)) == 0
    )
    assert json.loads(envelope.read_text())["payloadType"] == "application/vnd.in-toto+json"
    assert cli("attest", "verify-signature", "--key", f"{prefix}.pub", str(envelope)) == 0
    assert "PASSED" in capsys.readouterr().err


def test_verify_signature_failures(cli: Callable[..., int], tmp_path: Path) -> None:
    for name in ("a", "b"):
        assert cli("keys", "generate", "--type", "ed25519", "--out", str(tmp_path / name)) == 0
    (tmp_path / "s.json").write_text("{}")
    env = tmp_path / "e.json"
    assert (
        cli(
            "attest",
            "sign",
            "--key",
            str(tmp_path / "a.key"),
            str(tmp_path / "s.json"),
            "--out",
            str(env),
        )
        == 0
    )
    assert cli("attest", "verify-signature", "--key", str(tmp_path / "b.pub"), str(env)) == 1
    two = ("--key", str(tmp_path / "a.pub"), "--key", str(tmp_path / "b.pub"))
    assert cli("attest", "verify-signature", *two, "--threshold", "2", str(env)) == 1
    assert cli("attest", "verify-signature", *two, str(env)) == 0
    # Unusable input: not a key, not an envelope.
    assert cli("attest", "verify-signature", "--key", str(env), str(env)) == 2
    assert (
        cli(
            "attest", "verify-signature", "--key", str(tmp_path / "a.pub"), str(tmp_path / "s.json")
        )
        == 2
    )


def test_encrypted_key_needs_its_passphrase(
    cli: Callable[..., int], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KEY_PASS", "correct horse")
    prefix = str(tmp_path / "k")
    assert (
        cli(
            "keys",
            "generate",
            "--type",
            "ecdsa-p256",
            "--out",
            prefix,
            "--passphrase-env",
            "KEY_PASS",
        )
        == 0
    )
    (tmp_path / "s.json").write_text("{}")
    assert cli("attest", "sign", "--key", f"{prefix}.key", str(tmp_path / "s.json")) == 2
    assert (
        cli(
            "attest",
            "sign",
            "--key",
            f"{prefix}.key",
            "--passphrase-env",
            "KEY_PASS",
            str(tmp_path / "s.json"),
        )
        == 0
    )
    assert cli("keys", "generate", "--type", "ed25519", "--out", prefix) == 2  # exists


def test_verify_signature_checks_and_prints_payload_type(
    cli: Callable[..., int], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli("keys", "generate", "--type", "ed25519", "--out", str(tmp_path / "a")) == 0
    (tmp_path / "s.txt").write_text("hello")
    env = tmp_path / "e.json"
    key = str(tmp_path / "a.key")
    sign = ("attest", "sign", "--key", key, "--payload-type", "text/plain", str(tmp_path / "s.txt"))
    assert cli(*sign, "--out", str(env)) == 0
    check = ("attest", "verify-signature", "--key", str(tmp_path / "a.pub"), str(env))
    capsys.readouterr()
    assert cli(*check) == 1  # in-toto expected by default
    assert "payloadType: text/plain" in capsys.readouterr().err
    assert cli(*check, "--payload-type", "text/plain") == 0
    err = capsys.readouterr().err
    assert "payloadType: text/plain" in err
    assert "in-toto" in err
