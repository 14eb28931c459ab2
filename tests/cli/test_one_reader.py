"""One reader of attestation files: every command sees the same statements in a file.

The same files go to `attest validate`, `attest verify-signature`, `verify`,
`verify-artifact` and `verify-vsa` through the command line. A command either reads the
file (exit 0 or 1) and then counts as many statements as `attest validate` lists, or
cannot use what the file holds and says so (exit 2, naming the file and what it found).
A malformed file, a repeated key or nesting too deep is exit 2 for every one of them.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

ASSETS = Path(__file__).resolve().parents[1] / "assets"
VERIFY = ASSETS / "verify"
KEY = VERIFY / "attestation-verifier" / "key.pub"
DIGEST = "sha256:" + "00" * 32

FILES = {
    "statement": VERIFY / "attestation-verifier" / "build.json",
    "dsse-envelope": VERIFY / "attestation-verifier" / "build.fe1c6281.json",
    "intoto-jsonl": VERIFY
    / "slsa-verifier/cli/gha_go/v1.2.2/binary-linux-amd64-workflow_dispatch.intoto.jsonl",
    "sigstore-bundle": VERIFY
    / "slsa-verifier/cli/gha_delegator/v2.1.0/binary-linux-amd64-workflow_dispatch.build.slsa",
    "two-bundles-jsonl": ASSETS
    / "sigstore"
    / "github-cli"
    / "sigstore-js-2.1.0_with_2_bundles.jsonl",
}


def _bad_files(directory: Path) -> dict[str, Path]:
    envelope = FILES["dsse-envelope"].read_text()
    duplicate = envelope.rstrip().removesuffix("}") + ', "payloadType": "text/plain"}'
    deep = '{"payloadType": "x", "payload": "", "signatures": [], "x": ' + "[" * 70 + "]" * 70 + "}"
    files = {
        "malformed": '{"payloadType": "application/vnd.in-toto+json", "payload": ',
        "duplicate-key": duplicate,
        "too-deep": deep,
        "not-an-object": "[1, 2, 3]",
        "bad-line-in-jsonl": FILES["intoto-jsonl"].read_text().strip() + "\nnot json\n",
    }
    result = {}
    for name, text in files.items():
        path = directory / f"{name}.json"
        path.write_text(text)
        result[name] = path
    return result


COMMANDS: dict[str, Callable[[str], list[str]]] = {
    "validate": lambda f: ["attest", "validate", "--json", f],
    "verify-signature": lambda f: ["attest", "verify-signature", "--key", str(KEY), "--json", f],
    "verify": lambda f: [
        "verify",
        DIGEST,
        "--attestation",
        f,
        "--policy",
        "builtin:slsa-github-generator-delegator",
        "--json",
    ],
    "verify-artifact": lambda f: [
        "verify-artifact",
        DIGEST,
        "--provenance-path",
        f,
        "--source-uri",
        "github.com/slsa-framework/example-package",
        "--json",
    ],
    "verify-vsa": lambda f: [
        "verify-vsa",
        f,
        "--subject-digest",
        DIGEST,
        "--verifier-id",
        "https://verifier.example",
        "--key",
        str(KEY),
        "--resource-uri",
        "pkg:generic/x",
        "--json",
    ],
}

# What each command can use: None means it reads the file (exit 0 or 1); a string is
# the refusal (exit 2) it must give, naming what the file holds.
CANNOT_USE: dict[tuple[str, str], str] = {
    ("statement", "verify-signature"): "found statement",
    ("statement", "verify"): "unsigned in-toto statement",
    ("statement", "verify-artifact"): "expected a Sigstore bundle or a DSSE envelope signed",
    ("statement", "verify-vsa"): "unsigned in-toto statement",
    ("dsse-envelope", "verify-artifact"): "expected a Sigstore bundle or a DSSE envelope signed",
    ("two-bundles-jsonl", "verify-signature"): "expected one DSSE envelope",
    ("two-bundles-jsonl", "verify-vsa"): "expected one VSA envelope, found 2",
}


def _run(
    cli: Callable[..., int], capsys: pytest.CaptureFixture[str], argv: list[str]
) -> tuple[int, str, str]:
    code = cli(*argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def _count(command: str, output: str) -> int:
    document = json.loads(output)
    if command == "validate":
        return len(document["files"][0]["documents"])
    if command == "verify":
        return len(document["attestations"])
    if command == "verify-artifact":
        return len(document["envelopes"])
    return 1  # verify-signature and verify-vsa read exactly one envelope


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("kind", sorted(FILES))
def test_every_command_reads_the_same_statements(
    cli: Callable[..., int], capsys: pytest.CaptureFixture[str], kind: str, command: str
) -> None:
    path = str(FILES[kind])
    code, out, _ = _run(cli, capsys, COMMANDS["validate"](path))
    assert code in {0, 1}
    statements = _count("validate", out)
    code, out, err = _run(cli, capsys, COMMANDS[command](path))
    refusal = CANNOT_USE.get((kind, command))
    if refusal is None:
        assert code in {0, 1}, err
        assert _count(command, out) == statements
    else:
        assert code == 2, out
        assert path in err
        assert refusal in err
        assert "Traceback" not in err


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize(
    "bad",
    [
        ("malformed", "invalid JSON"),
        ("duplicate-key", "duplicate key"),
        ("too-deep", "nesting at most 64 deep"),
        ("not-an-object", "expected a JSON object"),
        ("bad-line-in-jsonl", "line 2"),
    ],
)
def test_every_command_refuses_an_unusable_file_alike(
    cli: Callable[..., int],
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    command: str,
    bad: tuple[str, str],
) -> None:
    kind, reason = bad
    path = str(_bad_files(tmp_path)[kind])
    code, out, err = _run(cli, capsys, COMMANDS[command](path))
    assert code == 2
    text = err + out  # validate --json reports the unreadable file in its document
    assert path in text
    assert reason in text
    assert "Traceback" not in text


@pytest.mark.parametrize("command", ["validate", "verify", "verify-signature"])
def test_a_pipe_is_read_only_up_to_the_limit(
    cli: Callable[..., int], capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str
) -> None:
    from assay.attestation.files import MAX_FILE_BYTES

    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)

    def feed() -> None:
        try:
            with fifo.open("wb") as handle:
                chunk = b" " * (1 << 20)
                for _ in range(MAX_FILE_BYTES // len(chunk) + 2):
                    handle.write(chunk)
        except BrokenPipeError:
            pass

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    code, out, err = _run(cli, capsys, COMMANDS[command](str(fifo)))
    writer.join(timeout=10)
    assert code == 2
    assert f"expected at most {MAX_FILE_BYTES} bytes" in err + out
