"""Which CI system runs this process, and what it says about the build (pure: env in, facts out).

    facts = detect_ci(os.environ)
    if facts: facts.builder_id, facts.invocation_id, facts.source

Recognised: GitHub Actions, GitLab CI, Jenkins and Buildkite, each from the variables
it documents. Nothing is read from the network or the disk; a variable that is absent
leaves its fact unset rather than guessed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from assay.provenance.source import SourceRevision, git_uri


@dataclass(frozen=True, slots=True)
class CiFacts:
    """What a CI system's variables tell about the build running now."""

    platform: str
    """`github-actions`, `gitlab-ci`, `jenkins` or `buildkite`."""
    builder_id: str | None
    """The builder the CI vouches for (a URI), when its variables name one."""
    invocation_id: str | None
    """The run or job, as a URI a person can open."""
    source: SourceRevision | None
    """Repository, commit and ref being built."""


def _get(env: Mapping[str, str], name: str) -> str | None:
    value = env.get(name, "").strip()
    return value or None


def _known(text: str, *parts: str | None) -> str | None:
    """`text` when every part it is made of is known (set and non-empty), else None."""
    return text if all(parts) else None


def _ref(branch: str | None, tag: str | None) -> str | None:
    if tag:
        return f"refs/tags/{tag}"
    if branch:
        return branch if branch.startswith("refs/") else f"refs/heads/{branch}"
    return None


def _source(repository: str | None, commit: str | None, ref: str | None) -> SourceRevision | None:
    if not repository or not commit:
        return None
    uri = git_uri(repository)
    return SourceRevision(repository=uri, commit=commit.lower(), ref=ref) if uri else None


def _github(env: Mapping[str, str]) -> CiFacts:
    server = (_get(env, "GITHUB_SERVER_URL") or "https://github.com").rstrip("/")
    repository = _get(env, "GITHUB_REPOSITORY")
    workflow_ref = _get(env, "GITHUB_WORKFLOW_REF")
    run_id = _get(env, "GITHUB_RUN_ID")
    attempt = _get(env, "GITHUB_RUN_ATTEMPT") or "1"
    invocation = f"{server}/{repository}/actions/runs/{run_id}/attempts/{attempt}"
    return CiFacts(
        platform="github-actions",
        # The workflow file at its ref is what the run executed: the builder to trust.
        builder_id=_known(f"{server}/{workflow_ref}", workflow_ref),
        invocation_id=_known(invocation, repository, run_id),
        source=_source(
            _known(f"{server}/{repository}", repository),
            _get(env, "GITHUB_SHA"),
            _get(env, "GITHUB_REF"),
        ),
    )


def _gitlab(env: Mapping[str, str]) -> CiFacts:
    server = _get(env, "CI_SERVER_URL")
    project = _get(env, "CI_PROJECT_PATH")
    runner = _get(env, "CI_RUNNER_ID")
    return CiFacts(
        platform="gitlab-ci",
        builder_id=_known(
            f"{(server or '').rstrip('/')}/{project}/-/runners/{runner}", server, project, runner
        ),
        invocation_id=_get(env, "CI_JOB_URL"),
        source=_source(
            _get(env, "CI_PROJECT_URL"),
            _get(env, "CI_COMMIT_SHA"),
            _ref(_get(env, "CI_COMMIT_BRANCH"), _get(env, "CI_COMMIT_TAG")),
        ),
    )


def _jenkins(env: Mapping[str, str]) -> CiFacts:
    server = _get(env, "JENKINS_URL")
    job = _get(env, "JOB_URL")
    branch = _get(env, "GIT_BRANCH")
    if branch:
        branch = branch.removeprefix("origin/")
    return CiFacts(
        platform="jenkins",
        builder_id=job or server,
        invocation_id=_get(env, "BUILD_URL"),
        source=_source(
            _get(env, "GIT_URL"), _get(env, "GIT_COMMIT"), _ref(branch, _get(env, "TAG_NAME"))
        ),
    )


def _buildkite(env: Mapping[str, str]) -> CiFacts:
    organization = _get(env, "BUILDKITE_ORGANIZATION_SLUG")
    pipeline = _get(env, "BUILDKITE_PIPELINE_SLUG")
    build_url = _get(env, "BUILDKITE_BUILD_URL")
    job = _get(env, "BUILDKITE_JOB_ID")
    return CiFacts(
        platform="buildkite",
        builder_id=_known(
            f"https://buildkite.com/{organization}/{pipeline}", organization, pipeline
        ),
        invocation_id=_known(f"{build_url}#{job}", build_url, job) or build_url,
        source=_source(
            _get(env, "BUILDKITE_REPO"),
            _get(env, "BUILDKITE_COMMIT"),
            _ref(_get(env, "BUILDKITE_BRANCH"), _get(env, "BUILDKITE_TAG")),
        ),
    )


# The variable each system sets to say "this is me", checked in this order.
_SYSTEMS: tuple[tuple[str, str, Callable[[Mapping[str, str]], CiFacts]], ...] = (
    ("GITHUB_ACTIONS", "true", _github),
    ("GITLAB_CI", "true", _gitlab),
    ("BUILDKITE", "true", _buildkite),
    ("JENKINS_URL", "", _jenkins),
)


def detect_ci(env: Mapping[str, str]) -> CiFacts | None:
    """The CI system `env` belongs to, or None outside CI."""
    for variable, expected, read in _SYSTEMS:
        value = _get(env, variable)
        if value and (not expected or value.lower() == expected):
            return read(env)
    return None
