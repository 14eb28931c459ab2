from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from assay.keys import generate_private_key

from .helpers import digest_of, provenance, sign, write_policy

ARTIFACT = b"widget binary\n"


@pytest.fixture
def setup(tmp_path: Path) -> dict[str, Path]:
    key = generate_private_key("ed25519")
    vsa_key = generate_private_key("ecdsa-p256")
    paths = {
        "artifact": tmp_path / "widget",
        "pub": tmp_path / "ci.pub",
        "vsa_key": tmp_path / "vsa.key",
        "vsa_pub": tmp_path / "vsa.pub",
        "att": tmp_path / "widget.intoto.json",
        "deps": tmp_path / "deps",
    }
    paths["artifact"].write_bytes(ARTIFACT)
    paths["pub"].write_bytes(key.public_key().to_pem())
    paths["vsa_key"].write_bytes(vsa_key.to_pem())
    paths["vsa_pub"].write_bytes(vsa_key.public_key().to_pem())
    lib = {"uri": "pkg:generic/libfoo@1.0", "digest": {"sha256": "11" * 32}}
    statement = provenance({"sha256": digest_of(ARTIFACT)}, dependencies=[lib])
    paths["att"].write_bytes(sign(statement, key))
    paths["deps"].mkdir()
    lib_statement = provenance({"sha256": "11" * 32}, name="libfoo")
    (paths["deps"] / "libfoo.intoto.json").write_bytes(sign(lib_statement, key))
    (paths["deps"] / "README").write_text("not an attestation")
    paths["policy"] = write_policy(tmp_path, paths["pub"], resourceUri="pkg:generic/widget@1.0")
    return paths


def test_verify_passes_and_issues_a_signed_vsa(
    cli: Callable[..., int],
    setup: dict[str, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "vsa.json"
    code = cli(
        "verify",
        str(setup["artifact"]),
        "--attestation",
        str(setup["att"]),
        "--policy",
        str(setup["policy"]),
        "--attestation-dir",
        str(setup["deps"]),
        "--vsa-out",
        str(out),
        "--vsa-key",
        str(setup["vsa_key"]),
        "--verifier-id",
        "https://verifier.example/assay",
        "--json",
    )
    report = json.loads(capsys.readouterr().out)
    assert code == 0, report
    assert report["dependencyLevels"] == {"SLSA_BUILD_LEVEL_3": 1}
    checks = report["attestations"][0]["checks"]
    assert all({"check", "expected", "found", "passed"} <= set(c) for c in checks)
    code = cli(
        "verify-vsa",
        str(out),
        "--subject-digest",
        f"sha256:{digest_of(ARTIFACT)}",
        "--verifier-id",
        "https://verifier.example/assay",
        "--key",
        str(setup["vsa_pub"]),
        "--resource-uri",
        "pkg:generic/widget@1.0",
        "--level",
        "SLSA_BUILD_LEVEL_2",
    )
    assert code == 0
    predicate = json.loads(__import__("base64").b64decode(json.loads(out.read_text())["payload"]))[
        "predicate"
    ]
    assert predicate["inputAttestations"][0]["digest"]["sha256"] == digest_of(
        setup["att"].read_bytes()
    )
    assert predicate["dependencyLevels"] == {"SLSA_BUILD_LEVEL_3": 1}


def test_verify_fails_with_exit_1_and_a_failed_vsa(
    cli: Callable[..., int],
    setup: dict[str, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    setup["artifact"].write_bytes(b"tampered")
    out = tmp_path / "vsa.json"
    code = cli(
        "verify",
        str(setup["artifact"]),
        "--attestation",
        str(setup["att"]),
        "--policy",
        str(setup["policy"]),
        "--vsa-out",
        str(out),
        "--verifier-id",
        "https://verifier.example/assay",
    )
    assert code == 1
    assert "FAILED" in capsys.readouterr().err
    statement = json.loads(out.read_text())  # unsigned: the statement itself
    assert statement["predicate"]["verifiedLevels"] == ["FAILED"]
    assert "dependencyLevels" not in statement["predicate"]


def test_dependency_minimum_without_evidence_fails(
    cli: Callable[..., int], setup: dict[str, Path]
) -> None:
    document = json.loads(setup["policy"].read_text())
    document["dependencies"] = {"minimumLevel": 2}
    setup["policy"].write_text(json.dumps(document))
    args = (
        "verify",
        str(setup["artifact"]),
        "--attestation",
        str(setup["att"]),
        "--policy",
        str(setup["policy"]),
    )
    assert cli(*args) == 1
    assert cli(*args, "--attestation-dir", str(setup["deps"])) == 0


@pytest.mark.parametrize(
    "change",
    [
        lambda s: ("--policy", str(s["artifact"])),
        lambda s: ("--attestation", str(s["artifact"])),
        lambda s: ("--vsa-out", "x.json"),
    ],
    ids=["bad-policy", "bad-attestation", "vsa-without-verifier"],
)
def test_unusable_input_exits_2(
    cli: Callable[..., int],
    setup: dict[str, Path],
    change: Callable[[dict[str, Path]], tuple[str, ...]],
    capsys: pytest.CaptureFixture[str],
) -> None:
    base = {"--attestation": str(setup["att"]), "--policy": str(setup["policy"])}
    extra = change(setup)
    if extra[0] in base:
        base[extra[0]] = extra[1]
        extra = ()
    args = [a for pair in base.items() for a in pair]
    assert cli("verify", str(setup["artifact"]), *args, *extra) == 2
    err = capsys.readouterr().err
    assert "assay: error:" in err
    assert "Traceback" not in err


def test_digest_arguments_and_missing_artifacts(
    cli: Callable[..., int], setup: dict[str, Path]
) -> None:
    base = ("--attestation", str(setup["att"]), "--policy", str(setup["policy"]))
    assert cli("verify", f"sha256:{digest_of(ARTIFACT)}", *base) == 0
    assert cli("verify", "no-such-file", *base) == 2


def test_real_cloud_build_provenance(
    cli: Callable[..., int], asset: Callable[[str], Path], capsys: pytest.CaptureFixture[str]
) -> None:
    policy = str(Path(__file__).resolve().parents[2] / "policies" / "gcb.yaml")
    image = "sha256:1a033b002f89ed2b8ea733162497fb70f1a4049a7f8602d6a33682b4ad9921fd"
    good = str(asset("slsa-verifier/cli/gcb_container/v0.2/gcloud-container-github.json"))
    assert cli("verify", image, "--attestation", good, "--policy", policy, "--json") == 0
    report = json.loads(capsys.readouterr().out)
    assert report["level"] == 3
    assert report["attestations"][0]["signedBy"] == ["gcb-regional-legacy"]
    tampered = str(
        asset("slsa-verifier/cli/gcb_container/v0.2/gcloud-container-mismatch-payload-digest.json")
    )
    assert cli("verify", image, "--attestation", tampered, "--policy", policy) == 1
    assert "no trusted signer" in capsys.readouterr().err


def test_sigstore_bundle_is_verified_and_the_policy_decides(
    cli: Callable[..., int], asset: Callable[[str], Path], capsys: pytest.CaptureFixture[str]
) -> None:
    # The certificate verifies and matches the delegator identity, but the reusable
    # workflow it delegated to (slsa-framework/example-trw) is not a builder of the
    # shipped policy, and the digest names no subject.
    policy = str(
        Path(__file__).resolve().parents[2] / "policies" / "slsa-github-generator-delegator.yaml"
    )
    bundle = str(
        asset("slsa-verifier/cli/gha_delegator/v1.10.0/binary-linux-amd64-push-v14.build.slsa")
    )
    digest = "sha256:" + "00" * 32
    assert cli("verify", digest, "--attestation", bundle, "--policy", policy, "--json") == 1
    report = json.loads(capsys.readouterr().out)
    checks = {c["check"]: c for c in report["attestations"][0]["checks"]}
    assert checks["signature"]["passed"]
    assert report["attestations"][0]["certificate"]["identity"]["sourceRepositoryUri"] == (
        "https://github.com/slsa-framework/example-package"
    )
    assert not checks["builder"]["passed"]
    assert "example-trw" in checks["builder"]["found"]


def test_real_in_toto_provenance_with_json_key_and_missing_dependency(
    cli: Callable[..., int],
    asset: Callable[[str], Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    key = asset("attestation-verifier/key.pub")  # securesystemslib JSON key format
    policy = tmp_path / "policy.yaml"
    policy.write_text(
        "signers:\n"
        f"  - publicKeys: [{key}]\n"
        "    builders:\n"
        "      - id: https://github.com/slsa-framework/slsa-github-generator/.github/workflows/builder_go_slsa3.yml\n"
        "        pin: release-tag\n"
        "        maxLevel: 3\n"
        "buildTypes: [https://slsa-framework.github.io/github-actions-buildtypes/workflow/v1]\n"
        "minimumLevel: 3\n"
    )
    digest = "sha256:58eaf5a78d580f5dbd49d31a5b733094169b31bfdf49055b74bcac2877d8f58c"
    attestation = str(asset("attestation-verifier/build.fe1c6281.json"))
    args = ("verify", digest, "--attestation", attestation, "--policy", str(policy), "--json")
    # Signed by the in-toto key (found by its securesystemslib key id), but the statement
    # has no externalParameters, which provenance v1 requires: `attest validate` rejects
    # it, so verification cannot pass.
    assert cli(*args) == 1
    report = json.loads(capsys.readouterr().out)
    checks = {c["check"]: c for c in report["attestations"][0]["checks"]}
    assert checks["signature"]["passed"]
    assert not checks["statement.valid"]["passed"]
    assert "$.predicate.buildDefinition.externalParameters" in checks["statement.valid"]["found"][0]


def test_dependency_without_evidence_is_counted_at_level_0(
    cli: Callable[..., int],
    setup: dict[str, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    base = ("verify", str(setup["artifact"]), "--attestation", str(setup["att"]))
    out = tmp_path / "vsa.json"
    args = (*base, "--policy", str(setup["policy"]), "--json")
    vsa_args = ("--vsa-out", str(out), "--verifier-id", "https://verifier.example/assay")
    assert cli(*args, "--attestation-dir", str(empty), *vsa_args) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["dependencyLevels"] == {"SLSA_BUILD_LEVEL_0": 1}
    assert report["dependencies"]["unverified"] == ["sha256:" + "11" * 32]
    assert json.loads(out.read_text())["predicate"]["dependencyLevels"] == {"SLSA_BUILD_LEVEL_0": 1}


def test_a_dependency_known_only_by_sha1_is_a_dependency_not_source(
    cli: Callable[..., int], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`sha1` is a file digest in in-toto's DigestSet, not a VCS revision (`gitCommit`): a
    tarball known by it was built by someone and counts in `dependencyLevels`."""
    from assay.verify.claims import read_claims

    key = generate_private_key("ed25519")
    pub = tmp_path / "ci.pub"
    pub.write_bytes(key.public_key().to_pem())
    artifact = tmp_path / "widget"
    artifact.write_bytes(ARTIFACT)
    tarball = {"uri": "https://downloads.example/libbar-2.0.tar.gz", "digest": {"sha1": "a" * 40}}
    revision = {"uri": "https://github.com/acme/lib", "digest": {"gitCommit": "b" * 40}}
    statement = provenance({"sha256": digest_of(ARTIFACT)}, dependencies=[tarball, revision])
    claims = read_claims(statement)
    kinds = {d.uri: d.is_source for d in claims.dependencies}
    assert kinds[tarball["uri"]] is False
    assert kinds[revision["uri"]] is True
    attestation = tmp_path / "widget.intoto.json"
    attestation.write_bytes(sign(statement, key))
    empty = tmp_path / "empty"
    empty.mkdir()
    out = tmp_path / "vsa.json"
    code = cli(
        "verify", str(artifact), "--attestation", str(attestation),
        "--policy", str(write_policy(tmp_path, pub, resourceUri="pkg:generic/widget@1.0")),
        "--attestation-dir", str(empty),
        "--json", "--vsa-out", str(out), "--verifier-id", "https://verifier.example/assay",
    )  # fmt: skip
    captured = capsys.readouterr()
    assert code == 0, captured.err
    report = json.loads(captured.out)
    assert report["dependencyLevels"] == {"SLSA_BUILD_LEVEL_0": 1}
    assert report["dependencies"]["unverified"] == ["sha1:" + "a" * 40]
    assert json.loads(out.read_text())["predicate"]["dependencyLevels"] == {"SLSA_BUILD_LEVEL_0": 1}


def test_a_v02_builder_inside_a_v1_predicate_fails_verification_naming_it(
    cli: Callable[..., int], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    key = generate_private_key("ed25519")
    pub = tmp_path / "ci.pub"
    pub.write_bytes(key.public_key().to_pem())
    artifact = tmp_path / "widget"
    artifact.write_bytes(ARTIFACT)
    statement = provenance({"sha256": digest_of(ARTIFACT)})
    statement["predicate"]["builder"] = {"id": "https://evil.example/builder"}
    attestation = tmp_path / "widget.intoto.json"
    attestation.write_bytes(sign(statement, key))
    code = cli(
        "verify", str(artifact), "--attestation", str(attestation),
        "--policy", str(write_policy(tmp_path, pub)), "--json",
    )  # fmt: skip
    report = json.loads(capsys.readouterr().out)
    assert code == 1
    checks = {c["check"]: c for c in report["attestations"][0]["checks"]}
    assert not checks["statement.valid"]["passed"]
    assert any("$.predicate.builder" in f for f in checks["statement.valid"]["found"])


def test_verify_judges_two_files_of_one_name_each_by_its_digest(
    cli: Callable[..., int],
    setup: dict[str, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    for folder, content in (("a", ARTIFACT), ("b", b"another build\n")):
        Path(folder).mkdir()
        (Path(folder) / "app").write_bytes(content)
    for order in (["a/app", "b/app"], ["b/app", "a/app"]):
        code = cli(
            "verify", *order, "--attestation", str(setup["att"]),
            "--policy", str(setup["policy"]), "--json",
        )  # fmt: skip
        report = json.loads(capsys.readouterr().out)
        assert code == 1
        assert {a["name"]: a["passed"] for a in report["artifacts"]} == {
            "a/app": True,
            "b/app": False,
        }
