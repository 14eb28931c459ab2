"""Hostile policies, payloads and lock files: a clear error at once, never a hang or a traceback.

- YAML policies and ignore files: a document is bounded with its aliases expanded (a
  1.3 KB file of chained anchors stands for billions of nodes), in nodes and in depth.
- Signed payloads: one strict parser for every command (`verify` refuses what
  `attest validate` refuses: a byte order mark, `NaN`, a number out of range, a lone
  surrogate).
- TOML lock files: nesting past the JSON limit is an error naming the file.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assay.errors import AssayError, AttestationError, InputError
from assay.keys import generate_private_key
from assay.lockfiles import MAX_JSON_DEPTH, LockfileError, read_lockfile
from assay.policy.loader import PolicyError, parse_policy
from assay.policy.vulnerabilities import parse_ignore_file
from assay.verify.claims import parse_statement

from .helpers import digest_of, provenance, write_policy

ARTIFACT = b"widget binary\n"


def billion_laughs(levels: int = 10, width: int = 9) -> bytes:
    """Chained anchors: level n is `width` aliases of level n - 1 (width ** levels leaves)."""
    lines = ["version: 1", 'l0: &l0 ["lol"]']
    for level in range(1, levels):
        lines.append(f"l{level}: &l{level} [{', '.join([f'*l{level - 1}'] * width)}]")
    lines.append(f"signers: [*l{levels - 1}]")
    return ("\n".join(lines) + "\n").encode()


def finishes(call: Callable[[], Any], seconds: float = 5.0) -> BaseException | None:
    """Run `call` in a thread; fail unless it ends within `seconds`. Returns what it raised."""
    outcome: list[BaseException | None] = []

    def run() -> None:
        try:
            call()
        except BaseException as error:  # handed to the test
            outcome.append(error)
        else:
            outcome.append(None)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert outcome, f"still running after {seconds} s"
    return outcome[0]


# -- YAML ------------------------------------------------------------------------------


def test_a_billion_laughs_policy_is_refused_at_once_naming_where() -> None:
    data = billion_laughs()
    assert len(data) < 1400
    error = finishes(lambda: parse_policy(data, source="laughs.yaml"))
    assert isinstance(error, PolicyError), repr(error)
    assert error.where == "laughs.yaml line 8 column 5"  # l6: 9 ** 6 nodes
    assert "at most 200000 nodes with aliases expanded" in error.reason


@pytest.mark.parametrize(
    ("text", "where", "reason"),
    [
        (b"a: &a [1, *a]\n", "p.yaml line 1 column 11", "no alias inside the node it names"),
        (b"a: &a {b: *a}\n", "p.yaml line 1 column 11", "no alias inside the node it names"),
        (b"version: 1\nsigners: *s\n", "p.yaml line 2 column 10", "undefined alias 's'"),
        (
            b"a: &a " + b"[" * 20 + b"]" * 20 + b"\nb: " + b"[" * 20 + b"*a" + b"]" * 20,
            "p.yaml line 2 column 24",
            "nesting at most 32 deep with aliases expanded, found more (alias *a)",
        ),
        (b"version: 1\nversion: 1\n", "p.yaml line 2 column 1", "'version' twice"),
        (b"a: " + b"[" * 100 + b"]" * 100, "p.yaml line 1", "nesting at most 32 deep"),
        (b"a:\n" + b"".join(b"  " * i + b"- \n" for i in range(1, 80)), "p.yaml line", "nest"),
        (b"a: " + b"{b: " * 5000 + b"}" * 5000, "p.yaml line 1", "nesting"),
        (b"\x00version: 1\n", "p.yaml", "unacceptable character"),
        (b"\x80version: 1\n", "p.yaml", "expected"),
    ],
    ids=[
        "recursive",
        "recursive-mapping",
        "undefined",
        "deep-through-alias",
        "duplicate",
        "flow-deep",
        "block-deep",
        "very-deep",
        "nul",
        "not-utf-8",
    ],
)
def test_policy_yaml_aliases_depth_and_duplicates_are_refused_by_position(
    text: bytes, where: str, reason: str
) -> None:
    error = finishes(lambda: parse_policy(text, source="p.yaml"))
    assert isinstance(error, PolicyError), repr(error)
    assert error.where.startswith(where), error.where
    assert reason in error.reason, error.reason


def test_the_verify_command_refuses_a_billion_laughs_policy_with_exit_2(
    cli: Callable[..., int], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    policy = tmp_path / "laughs.yaml"
    policy.write_bytes(billion_laughs())
    artifact = tmp_path / "widget"
    artifact.write_bytes(ARTIFACT)
    codes: list[int] = []
    error = finishes(
        lambda: codes.append(
            cli("verify", str(artifact), "--attestation", str(artifact), "--policy", str(policy))
        )
    )
    assert error is None, repr(error)
    assert codes == [2]
    err = capsys.readouterr().err
    assert f"{policy} line 8 column 5" in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    "text",
    [
        b"ignore: &x [*x]\n",
        b"ignore:\n" + b"".join(b"  " * i + b"- \n" for i in range(1, 80)),
        b"ignore: " + b"[" * 5000 + b"]" * 5000,
        billion_laughs().replace(b"version: 1\n", b"").replace(b"signers:", b"ignore:"),
    ],
    ids=["recursive", "block-deep", "flow-very-deep", "laughs"],
)
def test_an_ignore_file_is_read_by_the_same_safe_reader(text: bytes) -> None:
    error = finishes(lambda: parse_ignore_file(text, "ignore.yaml"))
    assert isinstance(error, InputError), repr(error)
    assert error.where.startswith("ignore.yaml line"), error.where


def test_anchors_and_merge_keys_within_the_bounds_are_read() -> None:
    shipped = Path(__file__).resolve().parents[2] / "policies" / "gcb.yaml"
    assert b"*gcb-builders" in shipped.read_bytes()
    policy = parse_policy(shipped.read_bytes(), source="gcb.yaml", base_dir=shipped.parent)
    assert policy.signers[0].builders == policy.signers[-1].builders


# -- signed payloads -------------------------------------------------------------------

HOSTILE_PAYLOADS = {
    "bom": lambda text: b"\xef\xbb\xbf" + text,
    "nan": lambda text: text.replace(b'"name": "widget"', b'"name": "widget", "n": NaN'),
    "infinity": lambda text: text.replace(b'"name": "widget"', b'"name": "widget", "n": -Infinity'),
    "huge-number": lambda text: text.replace(b'"name": "widget"', b'"name": "widget", "n": 1e999'),
    "lone-surrogate": lambda text: text.replace(b'"name": "widget"', b'"name": "\\ud800"'),
    "latin-1": lambda text: text.replace(b'"name": "widget"', b'"name": "\xe9"'),
    "utf-16": lambda text: text.decode().encode("utf-16"),
}


def _statement_bytes() -> bytes:
    return json.dumps(provenance({"sha256": digest_of(ARTIFACT)})).encode()


@pytest.mark.parametrize("kind", sorted(HOSTILE_PAYLOADS))
def test_a_payload_attest_validate_refuses_is_refused_by_the_verifier(kind: str) -> None:
    payload = HOSTILE_PAYLOADS[kind](_statement_bytes())
    assert payload != _statement_bytes()
    with pytest.raises(AttestationError, match="payload"):
        parse_statement(payload, where="widget.intoto.json")


@pytest.mark.parametrize("kind", sorted(HOSTILE_PAYLOADS))
def test_verify_and_attest_validate_agree_on_a_hostile_signed_payload(
    kind: str,
    cli: Callable[..., int],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from assay import dsse

    key = generate_private_key("ed25519")
    pub = tmp_path / "ci.pub"
    pub.write_bytes(key.public_key().to_pem())
    artifact = tmp_path / "widget"
    artifact.write_bytes(ARTIFACT)
    payload = HOSTILE_PAYLOADS[kind](_statement_bytes())
    attestation = tmp_path / "widget.intoto.json"
    attestation.write_bytes(dsse.sign(payload, dsse.INTOTO_PAYLOAD_TYPE, [key]).to_json())
    policy = write_policy(tmp_path, pub)
    verify = cli(
        "verify",
        str(artifact),
        "--attestation",
        str(attestation),
        "--policy",
        str(policy),
        "--json",
    )
    verified = capsys.readouterr()
    validate = cli("attest", "validate", str(attestation))
    validated = capsys.readouterr()
    assert validate != 0, validated
    assert verify == 1, verified.err
    report = json.loads(verified.out)
    failed = [c for a in report["attestations"] for c in a["checks"] if not c["passed"]]
    assert failed, verified.out
    assert failed[0]["check"] == "statement", failed
    assert "payload" in failed[0]["detail"]
    assert "Traceback" not in verified.err + validated.err


# -- TOML lock files -------------------------------------------------------------------


@pytest.mark.parametrize("filename", ["poetry.lock", "uv.lock"])
@pytest.mark.parametrize(
    "text",
    [
        "x = " + "[" * 5000 + "]" * 5000 + "\n",
        "x = " + "{a = " * 5000 + "1" + "}" * 5000 + "\n",
        "x = " + "[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1) + "\n",
        "[" + ".".join(["a"] * 5000) + "]\n",
        ".".join(["a"] * 5000) + " = 1\n",
    ],
    ids=["arrays", "inline-tables", "just-past-the-limit", "table-header", "dotted-key"],
)
def test_a_deeply_nested_toml_lock_file_is_an_error_naming_it(filename: str, text: str) -> None:
    with pytest.raises(LockfileError) as caught:
        read_lockfile(text.encode(), filename)
    assert caught.value.filename == filename
    assert f"nesting at most {MAX_JSON_DEPTH} deep" in caught.value.reason


@pytest.mark.parametrize("filename", ["poetry.lock", "uv.lock"])
def test_toml_nesting_within_the_limit_is_read(filename: str) -> None:
    depth = MAX_JSON_DEPTH - 2
    text = "x = " + "[" * depth + "]" * depth + '\n# "[[[" in a comment\ny = "[[[["\n'
    try:
        read_lockfile(text.encode(), filename)
    except AssayError as error:
        problem: AssayError | None = error
    else:
        problem = None
    assert "nesting" not in str(problem)


# TOML values whose strings hold what the scan must skip: brackets, quotes, `#`, dots.
_tricky = st.text(alphabet="[]{}#.\"'\\=,ab \n", max_size=8)
toml_values = st.recursive(
    st.integers(0, 9) | st.floats(0, 9, allow_nan=False).map(lambda f: round(f, 2)) | _tricky,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from("abc"), inner),
    max_leaves=12,
)


def _toml(value: Any, how: int) -> str:
    if isinstance(value, str):
        if how % 3 == 0 and "'" not in value and "\n" not in value:
            return f"'{value}'"
        if how % 3 == 1 and '"""' not in value and value[-1:] != '"' and value[:1] != "\n":
            return '"""' + value.replace("\\", "\\\\") + '"""'
        return json.dumps(value)  # a TOML basic string
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v, how + i) for i, v in enumerate(value)) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {_toml(v, how + 1)}" for k, v in value.items()) + "}"
    return str(value)


def _nesting(value: Any) -> int:
    if isinstance(value, list | dict):
        items = value.values() if isinstance(value, dict) else value
        return 1 + max((_nesting(v) for v in items), default=0)
    return 0


@given(toml_values, st.integers(0, 2), st.integers(1, 6))
def test_the_toml_depth_scan_counts_only_real_nesting(value: Any, how: int, limit: int) -> None:
    import tomllib

    from assay.lockfiles._toml import _too_deep_at

    text = f"# a [comment] {{\n[t]\nx = {_toml(value, how)}\n"
    assert tomllib.loads(text)["t"]["x"] == value
    assert (_too_deep_at(text, limit) is None) == (_nesting(value) <= limit)
