"""The `Verifier`'s dependency judgement reads the attestations that cover an artifact,
found by identity: an attestation that verified but covers nothing adds no dependency,
even when its file has the name of one that covers."""

from __future__ import annotations

from pathlib import Path

from assay.keys import generate_private_key
from assay.policy import load_policy
from assay.verify import Artifact, Verifier, read_attestations

from .helpers import digest_of, provenance, sign, write_policy


def test_a_verified_attestation_that_covers_nothing_adds_no_dependency(tmp_path: Path) -> None:
    key = generate_private_key("ed25519")
    pub = tmp_path / "ci.pub"
    pub.write_bytes(key.public_key().to_pem())
    policy = load_policy(write_policy(tmp_path, pub))
    artifact = digest_of(b"widget")
    covering = provenance({"sha256": artifact})
    elsewhere = provenance(
        {"sha256": digest_of(b"another artifact")},
        dependencies=[{"uri": "pkg:npm/left-pad@1.3.0", "digest": {"sha256": "b" * 64}}],
    )
    # Two files of one name: the second verifies (a trusted key signed it) but names
    # another artifact.
    attestations = [
        *read_attestations(sign(covering, key), "provenance.intoto.jsonl"),
        *read_attestations(sign(elsewhere, key), "provenance.intoto.jsonl"),
    ]
    report = Verifier(policy=policy).verify(
        [Artifact("widget", {"sha256": artifact})], attestations
    )
    assert report.passed
    assert [a.covering for a in report.artifacts] == [[report.attestations[0]]]
    assert report.attestations[1].claims is not None  # (it verified)
    assert report.dependencies is not None
    judged = report.dependencies.to_dict()
    assert "sha256:" + "b" * 64 not in judged["unverified"]
    assert report.dependencies.levels == {}  # (the source checkout is no dependency)
