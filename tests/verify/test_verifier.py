from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from assay.errors import VerificationError
from assay.keys import PrivateKey, generate_private_key
from assay.policy import BuilderRule, Policy, SourceRule, load_policy
from assay.verify.inputs import read_attestations
from assay.verify.verifier import Artifact, evaluate, verify

from .helpers import BUILDER, REPO, provenance, sign, write_policy

DIGEST = {"sha256": "ab" * 32}


@pytest.fixture
def key() -> PrivateKey:
    return generate_private_key("ed25519")


@pytest.fixture
def policy(tmp_path: Path, key: PrivateKey) -> Policy:
    pub = tmp_path / "k.pub"
    pub.write_bytes(key.public_key().to_pem())
    return load_policy(write_policy(tmp_path, pub))


def run(policy: Policy, envelope: bytes, artifact: dict[str, str] = DIGEST) -> Any:
    attestations = read_attestations(envelope, "att.json")
    return evaluate(policy, [Artifact("widget", artifact)], attestations)


def failed(report: Any) -> set[str]:
    return {c.name for a in report.attestations for c in a.checks if not c.passed} | {
        c.name for c in report.extra_checks if not c.passed
    }


def test_passes_with_every_check_reported(policy: Policy, key: PrivateKey) -> None:
    report = run(policy, sign(provenance(DIGEST), key))
    assert report.passed, failed(report)
    assert report.level == 3
    names = [c.name for c in report.attestations[0].checks]
    for expected in ("signature", "builder", "predicateType", "buildType", "source", "level"):
        assert expected in names
    assert all(c.expected is not None for c in report.attestations[0].checks)
    verify(
        policy, [Artifact("widget", DIGEST)], read_attestations(sign(provenance(DIGEST), key), "a")
    )


def test_untrusted_signature_is_never_parsed(policy: Policy) -> None:
    other = generate_private_key("ed25519")
    report = run(policy, sign(provenance(DIGEST), other))
    assert not report.passed
    attestation = report.attestations[0]
    assert [c.name for c in attestation.checks] == ["signature"]
    assert attestation.claims is None
    with pytest.raises(VerificationError, match="signature"):
        verify(
            policy, [Artifact("w", DIGEST)], read_attestations(sign(provenance(DIGEST), other), "a")
        )


def test_signer_cannot_vouch_for_a_builder_it_is_not_paired_with(
    policy: Policy, key: PrivateKey
) -> None:
    statement = provenance(DIGEST, builder="https://other.example/build.yml@refs/tags/v1.2.3")
    assert failed(run(policy, sign(statement, key))) == {"builder", "level"}


@pytest.mark.parametrize(
    ("builder", "ok"),
    [
        (f"{BUILDER}@refs/tags/v1.2.3", True),
        (f"{BUILDER}@refs/tags/v1.2", False),
        (f"{BUILDER}@refs/heads/main", False),
        (f"{BUILDER}@{'c' * 40}", False),
        (BUILDER, False),
    ],
)
def test_builder_pinned_by_release_tag(
    policy: Policy, key: PrivateKey, builder: str, ok: bool
) -> None:
    assert run(policy, sign(provenance(DIGEST, builder=builder), key)).passed is ok


def test_builder_pinned_by_commit_digest(policy: Policy, key: PrivateKey) -> None:
    commit = "c" * 40
    rule = BuilderRule(BUILDER, None, "commit", (), (commit,), 2)
    signer = dataclasses.replace(policy.signers[0], builders=(rule,))
    pinned = dataclasses.replace(policy, signers=(signer,), minimum_level=2)
    assert run(pinned, sign(provenance(DIGEST, builder=f"{BUILDER}@{commit}"), key)).level == 2
    wrong = run(pinned, sign(provenance(DIGEST, builder=f"{BUILDER}@{'d' * 40}"), key))
    assert "builder" in failed(wrong)


def test_level_is_the_pairs_level_and_minimum_applies(policy: Policy, key: PrivateKey) -> None:
    rule = dataclasses.replace(policy.signers[0].builders[0], max_level=2)
    signer = dataclasses.replace(policy.signers[0], builders=(rule,))
    report = run(dataclasses.replace(policy, signers=(signer,)), sign(provenance(DIGEST), key))
    assert failed(report) == {"level"}


def test_subject_digest_any_strong_algorithm(policy: Policy, key: PrivateKey) -> None:
    both = {"sha256": "ab" * 32, "sha512": "cd" * 64}
    statement = provenance({"sha512": "cd" * 64})
    assert run(policy, sign(statement, key), both).passed
    report = run(policy, sign(provenance({"sha1": "ab" * 20}), key), {"sha1": "ab" * 20})
    assert not report.passed
    subject = next(c for c in report.attestations[0].checks if c.name.startswith("subject"))
    assert "256 bits" in subject.detail
    assert not run(policy, sign(provenance({"sha256": "ef" * 32}), key)).passed


@pytest.mark.parametrize(
    ("external", "bad"),
    [
        (
            {"workflow": {"repository": REPO, "ref": "refs/tags/v1.4.2", "path": "other.yml"}},
            "externalParameters.workflow.path",
        ),
        (
            {"workflow": {"repository": REPO, "ref": "refs/heads/dev", "path": "build.yml"}},
            "externalParameters.workflow.ref",
        ),
        (
            {
                "workflow": {"repository": REPO, "ref": "refs/tags/v1.4.2", "path": "build.yml"},
                "inputs": {"x": "1"},
            },
            "externalParameters (unknown)",
        ),
    ],
)
def test_external_parameters(
    policy: Policy, key: PrivateKey, external: dict[str, Any], bad: str
) -> None:
    assert bad in failed(run(policy, sign(provenance(DIGEST, external=external), key)))


def test_empty_parameters_are_unset(policy: Policy, key: PrivateKey) -> None:
    external = {
        "workflow": {"repository": REPO, "ref": "refs/tags/v1.4.2", "path": "build.yml"},
        "inputs": {},
        "vars": None,
    }
    assert run(policy, sign(provenance(DIGEST, external=external), key)).passed


def test_allowed_sets(policy: Policy, key: PrivateKey) -> None:
    rules = dataclasses.replace(
        policy.parameters, allowed={"workflow.path": ("a.yml", "build.yml")}, exact={}
    )
    report = run(dataclasses.replace(policy, parameters=rules), sign(provenance(DIGEST), key))
    assert report.passed


@pytest.mark.parametrize(
    ("source", "ok"),
    [
        (SourceRule(repository="github.com/acme/widget"), True),
        (SourceRule(repository="https://github.com/acme/widget"), True),
        (SourceRule(repository="http://github.com/acme/widget"), False),
        (SourceRule(repository="github.com/acme/gadget"), False),
        (SourceRule(repository="github.com/acme/widget", tag="v1.4.2"), True),
        (SourceRule(repository="github.com/acme/widget", tag="v1.4"), False),
        (SourceRule(repository="github.com/acme/widget", versioned_tag="v1.4"), True),
        (SourceRule(repository="github.com/acme/widget", versioned_tag="v1.5"), False),
        (SourceRule(repository="github.com/acme/widget", branch="main"), False),
    ],
)
def test_source_and_refs(policy: Policy, key: PrivateKey, source: SourceRule, ok: bool) -> None:
    report = run(dataclasses.replace(policy, source=source), sign(provenance(DIGEST), key))
    assert report.passed is ok, failed(report)


def test_signer_threshold(tmp_path: Path) -> None:
    a, b = generate_private_key("ed25519"), generate_private_key("ecdsa-p256")
    for name, k in (("a", a), ("b", b)):
        (tmp_path / f"{name}.pub").write_bytes(k.public_key().to_pem())
    path = write_policy(tmp_path, tmp_path / "a.pub")
    document = json.loads(path.read_text())
    document["signers"][0]["publicKeys"] = [str(tmp_path / "a.pub"), str(tmp_path / "b.pub")]
    document["signers"][0]["threshold"] = 2
    path.write_text(json.dumps(document))
    policy = load_policy(path)
    assert not run(policy, sign(provenance(DIGEST), a)).passed
    assert run(policy, sign(provenance(DIGEST), a, b)).passed


def test_multiple_artifacts_need_covering_attestations(policy: Policy, key: PrivateKey) -> None:
    envelope = sign(provenance(DIGEST), key)
    report = evaluate(
        policy,
        [Artifact("one", DIGEST), Artifact("two", {"sha256": "99" * 32})],
        read_attestations(envelope, "a"),
    )
    assert [r.passed for r in report.artifacts] == [True, False]
    assert not report.passed
