"""Shipped policies take parameters: one `builtin:` policy verifies any repository
(`--param repository=github.com/ORG/REPO`), its values validated as the fields they fill.
Before, the shipped policies were pinned to the example repositories and verifying one's
own repository needed a copied YAML."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assay.policy import load_policy
from assay.policy.loader import PolicyError, parse_policy

GO = "builtin:slsa-github-generator-go"


def test_the_defaults_keep_the_shipped_behaviour() -> None:
    policy = load_policy(GO)
    assert policy.source.repository == "github.com/slsa-framework/example-package"
    assert (policy.source.branch, policy.source.tag, policy.source.versioned_tag) == (
        None,
        None,
        None,
    )
    assert policy.arguments == {"repository": "github.com/slsa-framework/example-package"}


@pytest.mark.parametrize(
    "name",
    [
        "slsa-github-generator-go",
        "slsa-github-generator-generic",
        "slsa-github-generator-container-based",
        "slsa-github-generator-delegator",
    ],
)
def test_a_repository_and_a_tag_reach_the_source_rule_and_the_signer_identity(name: str) -> None:
    policy = load_policy(f"builtin:{name}", {"repository": "github.com/acme/app", "tag": "v1.2.3"})
    assert (policy.source.repository, policy.source.tag) == ("github.com/acme/app", "v1.2.3")
    identities = [s.identity for s in policy.signers if s.identity is not None]
    assert identities
    assert all(
        i.extensions.get("sourceRepository") == "https://github.com/acme/app" for i in identities
    )


def test_an_unknown_parameter_is_refused_naming_what_the_policy_takes() -> None:
    with pytest.raises(PolicyError) as caught:
        load_policy(GO, {"repo": "github.com/acme/app"})
    assert caught.value.where.endswith("$.parameters")
    assert "'repo' is not a parameter" in caught.value.reason
    assert "repository" in caught.value.reason


def test_a_value_is_checked_by_its_pattern_and_by_the_field_it_fills() -> None:
    with pytest.raises(PolicyError) as caught:
        load_policy(GO, {"repository": "gitlab.com/acme/app"})
    assert caught.value.where.endswith("$.parameters.repository")
    with pytest.raises(PolicyError, match="semantic version"):
        load_policy(GO, {"versionedTag": "not-a-version"})
    with pytest.raises(PolicyError, match="at most one of branch, tag, versionedTag"):
        load_policy(GO, {"branch": "main", "tag": "v1"})


def test_a_placeholder_inside_a_string_needs_a_value() -> None:
    document = b"""version: 1
parameters: {org: {}}
predicateTypes: [https://slsa.dev/provenance/v1]
buildTypes: [https://example.com/build]
signers: [{name: k, keys: [k.pub]}]
source: {repository: "github.com/${org}/app"}
"""
    with pytest.raises(PolicyError) as caught:
        parse_policy(document, source="p.yaml")
    assert caught.value.where == "p.yaml: $.source.repository"
    assert "needs a value for parameter 'org'" in caught.value.reason


@given(tag=st.from_regex(r"v[0-9A-Za-z._-]{1,20}", fullmatch=True))
def test_any_tag_given_is_the_tag_checked(tag: str) -> None:
    assert load_policy(GO, {"tag": tag}).source.tag == tag


@pytest.mark.slow
def test_the_command_line_takes_param_and_refuses_a_wrong_one(tmp_path: Path) -> None:
    attestation = tmp_path / "a.json"
    attestation.write_text("{}")
    done = subprocess.run(
        [sys.executable, "-m", "assay", "verify", "sha256:" + "0" * 64, "--attestation",
         str(attestation), "--policy", GO, "--param", "nope=1"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "'nope' is not a parameter" in done.stderr
    assert "Traceback" not in done.stderr
