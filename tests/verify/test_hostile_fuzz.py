"""Mutated real inputs for every verification reader: a typed error or a result, nothing else.

Each property takes real files (the shipped policies, slsa-verifier's and sigstore-js's
bundles, the test lock files and a signed statement), applies random edits made of
hostile tokens (anchors and aliases, brackets, a byte order mark, `NaN`, lone
surrogates, quotes, NUL, invalid UTF-8) and feeds the result to the reader the commands
use. Anything but an `AssayError` (a `RecursionError`, a `UnicodeError`, a `KeyError`, a
hang) fails. `ASSAY_FUZZ_EXAMPLES` raises the number of inputs per property (default 40;
docs/security.md reports a run with 2,000).
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assay.errors import AssayError
from assay.lockfiles import read_lockfile
from assay.policy.loader import parse_policy
from assay.policy.vulnerabilities import parse_ignore_file
from assay.verify.claims import parse_statement, read_claims

ROOT = Path(__file__).resolve().parents[2]
ASSETS = ROOT / "tests" / "assets"
EXAMPLES = int(os.environ.get("ASSAY_FUZZ_EXAMPLES", "40"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)

TOKENS = [
    b"&a ",
    b"*a",
    b"<<: *a\n",
    b"[" * 40,
    b"{" * 40,
    b"]",
    b"}",
    b"\xef\xbb\xbf",
    b"NaN",
    b"-Infinity",
    b"1e999",
    b'"\\ud800"',
    b"\\udc00",
    b"\x00",
    b"\xff\xfe",
    b"'''",
    b'"""',
    b'"',
    b"'",
    b"#",
    b"=",
    b".",
    b",",
    b"\n",
    b"  - ",
    b": ",
    b"!!python/object:os.system ",
    b"a." * 80 + b"b = 1\n",
]


@st.composite
def mutations(draw: st.DrawFn, base: bytes) -> bytes:
    data = bytearray(base)
    for _ in range(draw(st.integers(1, 6))):
        at = draw(st.integers(0, len(data)))
        kind = draw(st.sampled_from(["insert", "delete", "flip", "repeat"]))
        if kind == "insert":
            data[at:at] = draw(st.sampled_from(TOKENS))
        elif kind == "delete":
            del data[at : at + draw(st.integers(1, 64))]
        elif kind == "flip" and at < len(data):
            data[at] = draw(st.integers(0, 255))
        else:
            data[at:at] = bytes(data[at : at + 16]) * draw(st.integers(2, 50))
    return bytes(data)


def _only_typed_errors(call: Any) -> None:
    with contextlib.suppress(AssayError):  # anything else fails the property
        call()


POLICIES = sorted((ROOT / "policies").glob("*.yaml"))


@FUZZ
@given(st.sampled_from(POLICIES).flatmap(lambda p: mutations(p.read_bytes())))
def test_mutated_policies(data: bytes) -> None:
    _only_typed_errors(lambda: parse_policy(data, source="fuzz.yaml", base_dir=ROOT / "policies"))


IGNORE = b"""ignore:
  - id: CVE-2021-44228
    component: pkg:maven/org.apache.logging.log4j/log4j-core
    reason: JNDI lookups are disabled in this build
    expires: 2031-01-01
"""


@FUZZ
@given(mutations(IGNORE))
def test_mutated_ignore_files(data: bytes) -> None:
    _only_typed_errors(lambda: parse_ignore_file(data, "fuzz.yaml"))


STATEMENT = base64.b64decode(
    json.loads(
        (
            ASSETS
            / "verify"
            / "slsa-verifier"
            / "cli"
            / "gha_maven"
            / "v2.1.0"
            / "binary-linux-amd64-workflow_dispatch.build.slsa"
        ).read_text()
    )["dsseEnvelope"]["payload"]
)


@FUZZ
@given(mutations(STATEMENT))
def test_mutated_signed_payloads(data: bytes) -> None:
    def read() -> None:
        statement = parse_statement(data, where="fuzz")
        read_claims(statement)
        json.dumps(statement)  # what --json and the VSA writer do with it

    _only_typed_errors(read)


LOCKS = sorted(
    p
    for p in (ASSETS / "lockfiles").rglob("*")
    if p.name in ("uv.lock", "poetry.lock", "package-lock.json") and p.stat().st_size < 400_000
)


@FUZZ
@given(
    st.sampled_from(LOCKS).flatmap(lambda p: st.tuples(st.just(p.name), mutations(p.read_bytes())))
)
def test_mutated_lock_files(case: tuple[str, bytes]) -> None:
    name, data = case
    _only_typed_errors(lambda: read_lockfile(data, name))


BUNDLES = [
    ASSETS / "verify" / "slsa-verifier" / "cli" / "gha_maven" / "v2.1.0" / name
    for name in (
        "binary-linux-amd64-workflow_dispatch.build.slsa",
        "binary-linux-amd64-push-v14.build.slsa",
    )
] + [ASSETS / "sigstore" / "github-cli" / "sigstore-js-2.1.0-bundle.json"]


@settings(FUZZ, max_examples=max(EXAMPLES // 4, 10))
@given(st.sampled_from(BUNDLES).flatmap(lambda p: mutations(p.read_bytes())))
def test_mutated_sigstore_bundles(data: bytes) -> None:
    from assay.sigstore import BundleVerifier, default_roots
    from assay.verify.artifact import read_envelopes

    def verify() -> None:
        for label, document in read_envelopes(data, "fuzz.sigstore.json"):
            BundleVerifier(default_roots()).verify(document, label)

    _only_typed_errors(verify)


def _strings(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _strings(v, (*path, k))]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _strings(v, (*path, i))]
    return [path] if isinstance(value, str) and value else []


_MAVEN = json.loads(BUNDLES[0].read_text())
_FIELDS = _strings(_MAVEN)
_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def _hint(path: tuple[Any, ...], text: str, index: int) -> bool:
    """The key name of a signed note's signature line (`— NAME HASH+SIG`): a hint, as in
    Rekor's own verifier, which finds the key by the hash that follows it."""
    if path[-2:] != ("checkpoint", "envelope"):
        return False
    start = text.rfind("\n\u2014 ", 0, index + 1)
    if start < 0:
        return False
    name_end = text.find(" ", start + 3)
    return start + 3 <= index < name_end


@settings(FUZZ, max_examples=max(EXAMPLES // 4, 10))
@given(st.sampled_from(_FIELDS), st.integers(0, 10_000), st.sampled_from(_ALPHABET))
def test_a_changed_character_in_any_field_of_a_bundle_never_verifies(
    path: tuple[Any, ...], at: int, char: str
) -> None:
    """Every string of a real bundle is covered by its signatures, its log entry or the
    verifier's own rules: changing one character anywhere is refused, never verified."""
    import copy

    from assay.errors import AttestationError, VerificationError
    from assay.sigstore import BundleVerifier, default_roots

    document = copy.deepcopy(_MAVEN)
    target = document
    for key in path[:-1]:
        target = target[key]
    text: str = target[path[-1]]
    index = at % len(text)
    if text[index] == char:
        return
    changed = text[:index] + char + text[index + 1 :]
    try:
        same = base64.b64decode(changed, validate=True) == base64.b64decode(text, validate=True)
    except ValueError:
        same = False
    if same or _hint(path, text, index):
        return  # the same bytes, or a hint no signature covers (as a DSSE keyid)
    target[path[-1]] = changed
    try:
        BundleVerifier(default_roots()).verify(document, "tampered")
    except (AttestationError, VerificationError):
        return
    raise AssertionError(f"{path}: {text!r} -> {changed!r} still verified")
