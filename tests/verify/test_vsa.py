from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from assay import dsse
from assay.errors import InputError
from assay.keys import generate_private_key, load_public_key
from assay.verify import vsa

KEY = generate_private_key("ecdsa-p256")
VERIFIER = "https://verifier.example/assay"
RESOURCE = "pkg:generic/widget@1.0"
DIGEST = ("sha256", "ab" * 32)


def summary(**changes: Any) -> dict[str, Any]:
    statement = vsa.build_vsa(
        vsa.VsaInput(
            subjects=[("widget", {"sha256": "ab" * 32})],
            verifier_id=VERIFIER,
            resource_uri=RESOURCE,
            policy_uri="https://policies.example/p",
            policy_digest={"sha256": "cd" * 32},
            passed=True,
            level=3,
            input_attestations=[("att.json", {"sha256": "ef" * 32})],
            dependency_levels={},
            time_verified=dt.datetime(2026, 11, 22, 12, 0, tzinfo=dt.UTC),
        )
    )
    statement["predicate"].update(changes)
    return statement


def envelope(statement: dict[str, Any], key: Any = KEY) -> dsse.Envelope:
    return dsse.sign(vsa.serialize(statement), dsse.INTOTO_PAYLOAD_TYPE, [key])


def check(statement: dict[str, Any], levels: tuple[str, ...] = (), **kw: Any) -> vsa.VsaResult:
    args: dict[str, Any] = {
        "trusted": {VERIFIER: [KEY.public_key()]},
        "subject_digests": [DIGEST],
        "verifier_id": VERIFIER,
        "resource_uri": RESOURCE,
        "levels": levels,
    }
    args.update(kw)
    return vsa.check_vsa(envelope(statement), **args)


def failed(result: vsa.VsaResult) -> list[str]:
    return [c.name + (f"[{c.subject}]" if c.subject else "") for c in result.checks if not c.passed]


def test_issued_vsa_fields() -> None:
    predicate = summary()["predicate"]
    assert predicate["timeVerified"] == "2026-11-22T12:00:00Z"
    assert predicate["verifiedLevels"] == ["SLSA_BUILD_LEVEL_3"]
    assert predicate["policy"] == {
        "uri": "https://policies.example/p",
        "digest": {"sha256": "cd" * 32},
    }
    assert predicate["verifier"]["version"]["assay"]
    assert predicate["dependencyLevels"] == {}
    assert predicate["slsaVersion"] == "1.0"


def test_failed_verification_says_failed_and_omits_unevaluated_dependencies() -> None:
    statement = vsa.build_vsa(
        vsa.VsaInput([("w", {"sha256": "ab" * 32})], VERIFIER, RESOURCE, "u", {}, False, 3)
    )
    assert statement["predicate"]["verificationResult"] == "FAILED"
    assert statement["predicate"]["verifiedLevels"] == ["FAILED"]
    assert "dependencyLevels" not in statement["predicate"]


def test_round_trip_passes_and_lower_levels_are_implied() -> None:
    result = check(summary(), ("SLSA_BUILD_LEVEL_1", "SLSA_BUILD_LEVEL_2", "SLSA_BUILD_LEVEL_3"))
    assert result.passed, failed(result)


@pytest.mark.parametrize(
    ("changes", "levels", "bad"),
    [
        ({"verificationResult": "FAILED", "verifiedLevels": ["FAILED"]}, (), "verificationResult"),
        ({"resourceUri": "pkg:generic/other"}, (), "resourceUri"),
        ({"verifier": {"id": "https://evil.example"}}, (), "verifier.id"),
        (
            {"verifiedLevels": ["SLSA_BUILD_LEVEL_2"]},
            ("SLSA_BUILD_LEVEL_3",),
            "verifiedLevels[SLSA_BUILD_LEVEL_3]",
        ),
        (
            {"verifiedLevels": ["SLSA_BUILD_LEVEL_UNEVALUATED"]},
            ("SLSA_BUILD_LEVEL_1",),
            "verifiedLevels[SLSA_BUILD_LEVEL_1]",
        ),
        (
            {"verifiedLevels": ["SLSA_BUILD_LEVEL_2", "SLSA_BUILD_LEVEL_3"]},
            (),
            "statement.valid,verifiedLevels",
        ),
        (
            {"verifiedLevels": ["SLSA_SOURCE_LEVEL_3"]},
            ("SLSA_BUILD_LEVEL_1",),
            "verifiedLevels[SLSA_BUILD_LEVEL_1]",
        ),
    ],
)
def test_each_step_can_fail(changes: dict[str, Any], levels: tuple[str, ...], bad: str) -> None:
    assert failed(check(summary(**changes), levels)) == bad.split(",")


def test_unevaluated_and_verified_properties_are_accepted() -> None:
    statement = summary(
        verifiedLevels=[
            "SLSA_BUILD_LEVEL_UNEVALUATED",
            "SLSA_BUILD_REPRODUCED",
            "SLSA_SOURCE_LEVEL_2",
        ]
    )
    result = check(
        statement, ("SLSA_BUILD_LEVEL_UNEVALUATED", "SLSA_BUILD_REPRODUCED", "SLSA_SOURCE_LEVEL_1")
    )
    assert result.passed, failed(result)


def test_wrong_subject_and_predicate_type() -> None:
    assert failed(check(summary(), subject_digests=[("sha256", "00" * 32)])) == [
        "subject[sha256:" + "00" * 32 + "]"
    ]
    statement = summary()
    statement["predicateType"] = "https://slsa.dev/verification_summary/v0.2"
    assert failed(check(statement)) == ["predicateType"]


def test_verifier_is_bound_to_its_key() -> None:
    other = generate_private_key("ed25519")
    # The VSA is signed by a key trusted for another verifier: it must not pass as VERIFIER's.
    result = vsa.check_vsa(
        envelope(summary(), other),
        trusted={VERIFIER: [KEY.public_key()], "https://other.example": [other.public_key()]},
        subject_digests=[DIGEST],
        verifier_id=VERIFIER,
        resource_uri=RESOURCE,
    )
    assert failed(result) == ["verifier.id"]
    unsigned = vsa.check_vsa(
        envelope(summary(), other),
        trusted={VERIFIER: [KEY.public_key()]},
        subject_digests=[DIGEST],
        verifier_id=VERIFIER,
        resource_uri=RESOURCE,
    )
    assert [c.name for c in unsigned.checks] == ["signature"]


def test_subject_digest_is_required() -> None:
    with pytest.raises(InputError, match="at least one subject digest"):
        check(summary(), subject_digests=[])
    with pytest.raises(InputError, match="ALG:VALUE"):
        vsa.parse_digest("abc")


def test_level_helpers() -> None:
    assert vsa.implies("SLSA_BUILD_LEVEL_3", "SLSA_BUILD_LEVEL_1")
    assert not vsa.implies("SLSA_BUILD_LEVEL_1", "SLSA_BUILD_LEVEL_3")
    assert not vsa.implies("SLSA_SOURCE_LEVEL_3", "SLSA_BUILD_LEVEL_1")
    assert not vsa.implies("SLSA_BUILD_LEVEL_UNEVALUATED", "SLSA_BUILD_LEVEL_0")
    assert vsa.highest_levels(["SLSA_BUILD_LEVEL_1", "X", "SLSA_BUILD_LEVEL_3"]) == [
        "SLSA_BUILD_LEVEL_3",
        "X",
    ]


def test_real_vsa_from_slsa_verifier(asset: Callable[[str], Path]) -> None:
    key = load_public_key(
        asset("slsa-verifier/cli/vsa/gce/v1/vsa_signing_public_key.pem").read_bytes()
    )
    (env,) = dsse.read_envelopes(
        asset("slsa-verifier/cli/vsa/gce/v1/gke-gce-pre.bcid-vsa.jsonl").read_bytes()
    )
    verifier = "https://bcid.corp.google.com/verifier/bcid_package_enforcer/v0.1"
    result = vsa.check_vsa(
        env,
        trusted={verifier: [key]},
        subject_digests=[("gce_image_id", "8970095005306000053")],
        verifier_id=verifier,
        resource_uri="gce_image://gke-node-images:gke-12615-gke1418000-cos-101-17162-463-29-c-cgpv1-pre",
        levels=["BCID_L1", "SLSA_BUILD_LEVEL_2", "SLSA_BUILD_LEVEL_1"],
    )
    assert result.passed, failed(result)
    assert json.loads(env.payload)["predicate"]["verifiedLevels"] == [
        "BCID_L1",
        "SLSA_BUILD_LEVEL_2",
    ]
