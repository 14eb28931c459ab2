from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.keys import generate_private_key
from assay.policy import PolicyError, load_policy, parse_policy

POLICIES = Path(__file__).resolve().parents[2] / "policies"


@pytest.fixture
def pub(tmp_path: Path) -> Path:
    path = tmp_path / "k.pub"
    path.write_bytes(generate_private_key("ed25519").public_key().to_pem())
    return path


def _base(pub: Path) -> dict[str, object]:
    return {
        "signers": [{"publicKeys": [str(pub)], "builders": [{"id": "https://b/x"}]}],
        "buildTypes": ["https://t"],
    }


@pytest.mark.parametrize("name", sorted(p.name for p in POLICIES.glob("*.yaml")))
def test_shipped_policies_load(name: str) -> None:
    policy = load_policy(POLICIES / name)
    assert policy.signers
    assert policy.build_types
    assert (
        policy.digest["sha256"]
        == __import__("hashlib").sha256((POLICIES / name).read_bytes()).hexdigest()
    )


def test_defaults(pub: Path) -> None:
    policy = parse_policy(json.dumps(_base(pub)).encode(), source="p.json")
    rule = policy.signers[0].builders[0]
    assert rule.max_level == 1  # the spec's default level
    assert rule.pin == "any"
    assert policy.minimum_level == 1
    assert policy.dependencies is None
    assert policy.uri == "p.json"


def test_yaml_is_accepted(pub: Path) -> None:
    text = f"signers:\n  - publicKeys: [{pub}]\n    builders: [{{id: https://b/x, maxLevel: 2}}]\nbuildTypes: [https://t]\n"
    assert parse_policy(text.encode()).signers[0].builders[0].max_level == 2


@pytest.mark.parametrize(
    ("change", "path", "message"),
    [
        ({"extra": 1}, r"\$\.extra", "unknown field"),
        ({"signers": []}, r"\$\.signers", "at least one trusted signer"),
        ({"buildTypes": []}, r"\$\.buildTypes", "at least one accepted buildType"),
        ({"minimumLevel": 5}, r"\$\.minimumLevel", "build level 0..3"),
        ({"predicateTypes": ["https://x"]}, r"\$\.predicateTypes\[0\]", "expected one of"),
        ({"source": {"versionedTag": "vX"}}, r"\$\.source\.versionedTag", "semantic version"),
        ({"source": {"tag": "v1", "branch": "main"}}, r"\$\.source", "at most one of"),
        ({"externalParameters": {"patterns": {"a": "("}}}, r"patterns\.a", "regular expression"),
        ({"externalParameters": {"allowed": {"a": 1}}}, r"allowed\.a", "non-empty array"),
    ],
)
def test_errors_name_the_path(
    pub: Path, change: dict[str, object], path: str, message: str
) -> None:
    document = {**_base(pub), **change}
    with pytest.raises(PolicyError, match=f"{path}.*{message}"):
        parse_policy(json.dumps(document).encode(), source="p.json")


@pytest.mark.parametrize(
    ("builder", "path", "message"),
    [
        ({"id": "https://b", "pin": "tags"}, r"builders\[0\]\.pin", "expected one of"),
        ({"id": "https://b", "pin": "commit"}, r"builders\[0\]\.commits", "non-empty commits"),
        ({"id": "https://b", "commits": ["abc"]}, r"commits\[0\]", "full lower-case commit"),
        ({"pin": "any"}, r"builders\[0\]", "exactly one of id or idPattern"),
        ({"id": "https://b", "maxLevel": True}, r"maxLevel", "build level"),
    ],
)
def test_builder_errors(pub: Path, builder: dict[str, object], path: str, message: str) -> None:
    document = _base(pub)
    document["signers"] = [{"publicKeys": [str(pub)], "builders": [builder]}]
    with pytest.raises(PolicyError, match=f"{path}.*{message}"):
        parse_policy(json.dumps(document).encode(), source="p.json")


def test_signer_errors(pub: Path, tmp_path: Path) -> None:
    document = _base(pub)
    document["signers"] = [
        {"publicKeys": [str(tmp_path / "missing.pub")], "builders": [{"id": "x"}]}
    ]
    with pytest.raises(PolicyError, match=r"publicKeys\[0\].*cannot read key file"):
        parse_policy(json.dumps(document).encode(), source="p.json")
    document["signers"] = [{"publicKeys": [str(pub)], "builders": []}]
    with pytest.raises(PolicyError, match="at least one builder"):
        parse_policy(json.dumps(document).encode(), source="p.json")
    document["signers"] = [{"publicKeys": [str(pub)], "threshold": 2, "builders": [{"id": "x"}]}]
    with pytest.raises(PolicyError, match=r"threshold.*at most 1"):
        parse_policy(json.dumps(document).encode(), source="p.json")


def test_relative_key_paths_follow_the_policy_file(pub: Path, tmp_path: Path) -> None:
    document = _base(Path(pub.name))
    (tmp_path / "policy.json").write_text(json.dumps(document))
    policy = load_policy(tmp_path / "policy.json")
    assert policy.uri.startswith("file://")
    assert len(policy.signers[0].keys) == 1


def test_not_yaml_is_unusable() -> None:
    with pytest.raises(PolicyError, match="expected YAML or JSON"):
        parse_policy(b"{ not: [json", source="p.yaml")
    with pytest.raises(PolicyError, match="expected an object"):
        parse_policy(b"- a\n- b\n", source="p.yaml")


@pytest.mark.parametrize(
    ("text", "found"),
    [
        (b'{"version": 1, "version": 1}', "'version' twice"),
        (b"version: 1\nversion: 1\n", "'version' twice"),
        (b"signers:\n  - name: a\n    name: b\n", "'name' twice"),
        (b"[" * 5000 + b"]" * 5000, "nest"),
        (b"a: " + b"[" * 5000 + b"]" * 5000, "nest"),
    ],
    ids=["json-duplicate", "yaml-duplicate", "yaml-nested-duplicate", "json-deep", "yaml-deep"],
)
def test_duplicate_keys_and_deep_nesting_are_refused(text: bytes, found: str) -> None:
    with pytest.raises(PolicyError, match=found):
        parse_policy(text, source="p.yaml")


@pytest.mark.parametrize(
    ("identity", "path", "message"),
    [
        ({"subject": "x"}, r"identity\.issuer", "OIDC issuer"),
        ({"issuer": "https://i"}, r"identity", "exactly one of subject or subjectPattern"),
        (
            {"issuer": "https://i", "subjectPattern": "("},
            r"identity\.subjectPattern",
            "regular expression",
        ),
        ({"issuer": "https://i", "subject": "x", "runner": "y"}, r"identity\.runner", "unknown"),
        (
            {"issuer": "https://i", "subject": "x", "runnerEnvironment": 1},
            r"identity\.runnerEnvironment",
            "non-empty string",
        ),
        ("https://i", r"identity", "expected an object"),
    ],
)
def test_identity_signer_errors_name_the_path(identity: object, path: str, message: str) -> None:
    document = {
        "signers": [{"identity": identity, "builders": [{"id": "https://b/x"}]}],
        "buildTypes": ["https://t"],
    }
    with pytest.raises(PolicyError, match=f"p.json: \\$\\.signers\\[0\\]\\.{path}.*{message}"):
        parse_policy(json.dumps(document).encode(), source="p.json")


def test_identity_signer_is_an_identity_rule() -> None:
    document = {
        "signers": [
            {
                "identity": {
                    "issuer": "https://token.actions.githubusercontent.com",
                    "subjectPattern": "https://github\\.com/acme/.+",
                    "sourceRepository": "https://github.com/acme/widget",
                    "sourceRepositoryRef": "refs/heads/main",
                    "sourceRepositoryDigest": "a" * 40,
                    "workflowRef": "refs/heads/main",
                    "buildTrigger": "push",
                    "runnerEnvironment": "github-hosted",
                },
                "builders": [{"id": "https://b/x"}],
            }
        ],
        "buildTypes": ["https://t"],
    }
    rule = parse_policy(json.dumps(document).encode(), source="p.json").signers[0].identity
    assert rule is not None
    assert rule.subject_pattern is not None
    assert rule.subject is None
    assert rule.extensions["runnerEnvironment"] == "github-hosted"
    assert len(rule.extensions) == 6
