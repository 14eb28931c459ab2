"""The security defects of issue 11 §4, each held by a test."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from assay import dsse
from assay.errors import AttestationError
from assay.keys import PublicKey, generate_private_key, load_public_key
from assay.policy.model import BuilderRule
from assay.policy.refs import is_release_tag, parse_version
from assay.verify.checks import builder_rule_matches, repository_matches
from assay.verify.claims import parse_statement, read_claims
from assay.verify.inputs import read_attestations

from .helpers import digest_of, provenance, sign, write_policy

ARTIFACT = b"widget binary\n"


def test_threshold_counts_keys_by_fingerprint_not_label() -> None:
    key = generate_private_key("ed25519")
    public = key.public_key()
    relabelled = PublicKey(public.key, keyid="another-label")
    envelope = dsse.sign(b"x", "t", [key, key])
    # The same key twice under two labels is one key: a threshold of 2 is not met.
    assert not dsse.check_signatures(envelope, [public, relabelled], threshold=2)
    with pytest.raises(Exception, match="1 distinct trusted key"):
        dsse.verify(envelope, [public, relabelled], threshold=2)


def test_in_toto_key_id_is_recognised(asset: Callable[[str], Path]) -> None:
    key = load_public_key(asset("attestation-verifier/key.pub").read_bytes())
    assert key.intoto_keyid.startswith("fe1c6281")
    assert key.intoto_keyid in key.keyids
    generated = generate_private_key("ecdsa-p256").public_key()
    assert len(generated.intoto_keyid) == 64
    assert generated.intoto_keyid != generated.keyid


def test_bounded_work_on_many_signatures() -> None:
    trusted = generate_private_key("ed25519").public_key()
    signers = [generate_private_key("ed25519") for _ in range(4)]
    envelope = dsse.sign(b"payload", "t", signers * 16)  # 64 signatures, none trusted
    assert len(envelope.signatures) == dsse.MAX_SIGNATURES
    start = time.perf_counter()
    for _ in range(1000):
        assert not dsse.check_signatures(envelope, [trusted])
    assert time.perf_counter() - start < 15  # seconds, on a loaded 2-core machine
    # A trusted signature behind the junk is still found when its keyid names the key.
    good = generate_private_key("ed25519")
    mixed = dsse.sign(b"payload", "t", [*signers * 15, *signers[:3], good])
    assert dsse.check_signatures(mixed, [good.public_key()])


def _payload(text: bytes) -> bytes:
    key = generate_private_key("ed25519")
    return dsse.sign(text, dsse.INTOTO_PAYLOAD_TYPE, [key]).to_json()


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        (b'{"_type": "a", "_type": "b"}', "twice"),
        (b'{"subject": [{"digest": {"sha256": "a", "sha256": "b"}}]}', "twice"),
        (b'{"predicateType": "x", "predicatetype": "y"}', "differs in case"),
        (b"[" * 200 + b"]" * 200, "nested"),
    ],
    ids=["duplicate-top", "duplicate-deep", "case-variant", "deep"],
)
def test_payload_duplicates_case_variants_and_depth_are_errors(
    payload: bytes, message: str
) -> None:
    with pytest.raises(AttestationError, match=message):
        parse_statement(payload)


def test_envelope_duplicate_keys_are_errors() -> None:
    envelope = json.loads(_payload(b"{}"))
    text = json.dumps(envelope)[:-1] + ', "payloadType": "text/plain"}'
    with pytest.raises(AttestationError, match="twice"):
        read_attestations(text.encode(), "env.json")


def test_builder_pins_match_the_whole_string() -> None:
    rule = BuilderRule("https://b.example/w.yml", pin="release-tag", max_level=3)
    assert builder_rule_matches(rule, "https://b.example/w.yml@refs/tags/v1.2.3")
    assert not builder_rule_matches(rule, "https://b.example/w.yml@v1.2.3")  # bare tag
    assert not builder_rule_matches(rule, "https://b.example/w.yml@refs/tags/v1.2.3\n")
    assert not is_release_tag("refs/tags/v1.2.\u0663")  # Arabic-Indic digit three
    assert parse_version("v1.2.3\n") is None


def test_source_repository_keeps_scheme_and_ref() -> None:
    recorded = "git+https://github.com/acme/widget@refs/heads/main"
    assert repository_matches("https://github.com/acme/widget", recorded)
    assert repository_matches("github.com/acme/widget", recorded)
    assert not repository_matches("http://github.com/acme/widget", recorded)
    assert repository_matches("https://github.com/acme/widget@refs/heads/main", recorded)
    assert not repository_matches("https://github.com/acme/widget@refs/heads/dev", recorded)


def test_cloud_build_source_material_is_not_a_dependency(asset: Callable[[str], Path]) -> None:
    name = "slsa-verifier/unit/gcb/gcloud-container-tag-notpresent.json"
    path = Path(__file__).resolve().parents[1] / "assets" / "slsa" / name
    attestation = read_attestations(path.read_bytes(), name)[0]
    claims = read_claims(parse_statement(attestation.envelope.payload))
    assert claims.build_type == "https://cloudbuild.googleapis.com/CloudBuildYaml@v0.1"
    assert claims.dependencies
    assert all(d.is_source for d in claims.dependencies)


def test_unwritable_vsa_output_exits_2_before_any_verdict(
    cli: Callable[..., int], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    key = generate_private_key("ed25519")
    pub = tmp_path / "ci.pub"
    pub.write_bytes(key.public_key().to_pem())
    artifact = tmp_path / "widget"
    artifact.write_bytes(ARTIFACT)
    att = tmp_path / "widget.intoto.json"
    att.write_bytes(sign(provenance({"sha256": digest_of(ARTIFACT)}), key))
    policy = write_policy(tmp_path, pub, resourceUri="pkg:generic/widget@1.0")
    code = cli(
        "verify",
        str(artifact),
        "--attestation",
        str(att),
        "--policy",
        str(policy),
        "--vsa-out",
        str(tmp_path / "no-such-dir" / "vsa.json"),
        "--verifier-id",
        "https://verifier.example/assay",
    )
    err = capsys.readouterr().err
    assert code == 2
    assert "no-such-dir" in err
    assert "PASSED" not in err


def test_vsa_with_an_unreal_level_is_not_evidence(
    cli: Callable[..., int], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from assay.verify import vsa

    key = generate_private_key("ed25519")
    vsa_key = generate_private_key("ed25519")
    pub = tmp_path / "ci.pub"
    pub.write_bytes(key.public_key().to_pem())
    vsa_pub = tmp_path / "vsa.pub"
    vsa_pub.write_bytes(vsa_key.public_key().to_pem())
    artifact = tmp_path / "widget"
    artifact.write_bytes(ARTIFACT)
    lib = {"uri": "pkg:generic/libfoo@1.0", "digest": {"sha256": "11" * 32}}
    att = tmp_path / "widget.intoto.json"
    att.write_bytes(sign(provenance({"sha256": digest_of(ARTIFACT)}, dependencies=[lib]), key))
    statement = vsa.build_vsa(
        vsa.VsaInput(
            subjects=[("libfoo", {"sha256": "11" * 32})],
            verifier_id="https://verifier.example/other",
            resource_uri="pkg:generic/libfoo@1.0",
            policy_uri="https://policies.example/lib",
            policy_digest={"sha256": "22" * 32},
            passed=True,
            level=3,
        )
    )
    deps = tmp_path / "deps"
    deps.mkdir()

    def write(levels: list[str]) -> None:
        statement["predicate"]["verifiedLevels"] = levels
        payload = vsa.serialize(statement)
        envelope = dsse.sign(payload, dsse.INTOTO_PAYLOAD_TYPE, [vsa_key])
        (deps / "libfoo.vsa.json").write_bytes(envelope.to_json())

    policy = write_policy(
        tmp_path,
        pub,
        dependencies={"minimumLevel": 2},
        vsaSigners=[
            {
                "name": "other",
                "publicKeys": [str(vsa_pub)],
                "verifierIds": ["https://verifier.example/other"],
            }
        ],
    )
    args = ("verify", str(artifact), "--attestation", str(att), "--policy", str(policy))
    write(["SLSA_BUILD_LEVEL_3"])
    assert cli(*args, "--attestation-dir", str(deps)) == 0
    write(["SLSA_BUILD_LEVEL_7"])
    assert cli(*args, "--attestation-dir", str(deps), "--json") == 1
    report = json.loads(capsys.readouterr().out)
    assert any("verifiedLevels" in r for r in report["dependencies"]["rejectedEvidence"])
