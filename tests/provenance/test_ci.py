"""CI recognition: each system's documented variables, mapped to builder, invocation, source."""

from __future__ import annotations

import pytest

from assay.provenance import SourceRevision, detect_ci, git_uri

SHA = "9f4a1b1d3c0e2f5a6b7c8d9e0f1a2b3c4d5e6f70"

# Variables as each CI sets them (names and shapes from the systems' documentation).
GITHUB = {
    "GITHUB_ACTIONS": "true",
    "GITHUB_SERVER_URL": "https://github.com",
    "GITHUB_REPOSITORY": "acme/widget",
    "GITHUB_WORKFLOW_REF": "acme/widget/.github/workflows/release.yml@refs/tags/v1.2.0",
    "GITHUB_RUN_ID": "7403117312",
    "GITHUB_RUN_ATTEMPT": "2",
    "GITHUB_SHA": SHA,
    "GITHUB_REF": "refs/tags/v1.2.0",
}
GITLAB = {
    "GITLAB_CI": "true",
    "CI": "true",
    "CI_SERVER_URL": "https://gitlab.example.com",
    "CI_PROJECT_PATH": "acme/widget",
    "CI_PROJECT_URL": "https://gitlab.example.com/acme/widget",
    "CI_RUNNER_ID": "42",
    "CI_JOB_URL": "https://gitlab.example.com/acme/widget/-/jobs/1234",
    "CI_COMMIT_SHA": SHA,
    "CI_COMMIT_BRANCH": "main",
}
JENKINS = {
    "JENKINS_URL": "https://jenkins.example.com/",
    "JOB_URL": "https://jenkins.example.com/job/widget/",
    "BUILD_URL": "https://jenkins.example.com/job/widget/17/",
    "GIT_URL": "git@github.com:acme/widget.git",
    "GIT_COMMIT": SHA,
    "GIT_BRANCH": "origin/main",
}
BUILDKITE = {
    "BUILDKITE": "true",
    "BUILDKITE_ORGANIZATION_SLUG": "acme",
    "BUILDKITE_PIPELINE_SLUG": "widget",
    "BUILDKITE_BUILD_URL": "https://buildkite.com/acme/widget/builds/88",
    "BUILDKITE_JOB_ID": "0190c6a4-6e7c-4d32-9c4e-0a4f1f9c5b11",
    "BUILDKITE_REPO": "https://github.com/acme/widget.git",
    "BUILDKITE_COMMIT": SHA.upper(),
    "BUILDKITE_BRANCH": "main",
    "BUILDKITE_TAG": "v1.2.0",
}


def test_github_actions() -> None:
    facts = detect_ci(GITHUB)
    assert facts is not None
    assert facts.platform == "github-actions"
    assert facts.builder_id == (
        "https://github.com/acme/widget/.github/workflows/release.yml@refs/tags/v1.2.0"
    )
    assert (
        facts.invocation_id == "https://github.com/acme/widget/actions/runs/7403117312/attempts/2"
    )
    assert facts.source == SourceRevision(
        "git+https://github.com/acme/widget", SHA, "refs/tags/v1.2.0"
    )
    assert facts.source.uri == "git+https://github.com/acme/widget@refs/tags/v1.2.0"


def test_gitlab_ci() -> None:
    facts = detect_ci(GITLAB)
    assert facts is not None
    assert facts.platform == "gitlab-ci"
    assert facts.builder_id == "https://gitlab.example.com/acme/widget/-/runners/42"
    assert facts.invocation_id == "https://gitlab.example.com/acme/widget/-/jobs/1234"
    assert facts.source == SourceRevision(
        "git+https://gitlab.example.com/acme/widget", SHA, "refs/heads/main"
    )


def test_gitlab_tag_pipeline() -> None:
    env = {k: v for k, v in GITLAB.items() if k != "CI_COMMIT_BRANCH"} | {"CI_COMMIT_TAG": "v2"}
    facts = detect_ci(env)
    assert facts is not None
    assert facts.source is not None
    assert facts.source.ref == "refs/tags/v2"


def test_jenkins() -> None:
    facts = detect_ci(JENKINS)
    assert facts is not None
    assert facts.platform == "jenkins"
    assert facts.builder_id == "https://jenkins.example.com/job/widget/"
    assert facts.invocation_id == "https://jenkins.example.com/job/widget/17/"
    # scp-like remote, remote-tracking branch name
    assert facts.source == SourceRevision(
        "git+https://github.com/acme/widget", SHA, "refs/heads/main"
    )


def test_buildkite_tag_wins_over_branch_and_commit_is_lowercased() -> None:
    facts = detect_ci(BUILDKITE)
    assert facts is not None
    assert facts.platform == "buildkite"
    assert facts.builder_id == "https://buildkite.com/acme/widget"
    assert facts.invocation_id == (
        "https://buildkite.com/acme/widget/builds/88#0190c6a4-6e7c-4d32-9c4e-0a4f1f9c5b11"
    )
    assert facts.source == SourceRevision(
        "git+https://github.com/acme/widget", SHA, "refs/tags/v1.2.0"
    )


@pytest.mark.parametrize(
    "env",
    [
        {},
        {"CI": "true"},
        {"GITHUB_ACTIONS": "false"},
        {"GITLAB_CI": ""},
        {"PATH": "/usr/bin", "HOME": "/root"},
    ],
)
def test_outside_ci(env: dict[str, str]) -> None:
    assert detect_ci(env) is None


def test_missing_variables_leave_facts_unset_not_guessed() -> None:
    facts = detect_ci({"GITHUB_ACTIONS": "true"})
    assert facts is not None
    assert (facts.builder_id, facts.invocation_id, facts.source) == (None, None, None)


@pytest.mark.parametrize(
    ("remote", "uri"),
    [
        ("https://github.com/acme/widget.git", "git+https://github.com/acme/widget"),
        (
            "https://x-access-token:ghs_secret@github.com/acme/widget",
            "git+https://github.com/acme/widget",
        ),
        ("git@github.com:acme/widget.git", "git+https://github.com/acme/widget"),
        (
            "ssh://git@gitlab.example.com:2222/acme/widget.git",
            "git+https://gitlab.example.com/acme/widget",
        ),
        (
            "https://git.example.com:8443/acme/widget/",
            "git+https://git.example.com:8443/acme/widget",
        ),
        ("git+https://github.com/acme/widget", "git+https://github.com/acme/widget"),
        ("/srv/git/widget.git", None),
        ("file:///srv/git/widget.git", None),
        ("../widget", None),
    ],
)
def test_remote_urls_become_git_uris_without_credentials(remote: str, uri: str | None) -> None:
    assert git_uri(remote) == uri
