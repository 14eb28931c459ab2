"""The git checkout read through the real git command."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.errors import InputError
from assay.provenance import read_git_source, source_dependency

from .gitrepo import GIT_ENV, git, make_repo


@pytest.fixture(autouse=True)
def _git_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in GIT_ENV.items():
        monkeypatch.setenv(name, value)


def test_branch_checkout_with_a_credentialed_remote(tmp_path: Path) -> None:
    commit = make_repo(
        tmp_path, remote="https://x-access-token:ghs_s3cret@github.com/acme/widget.git"
    )
    source = read_git_source(tmp_path)
    assert source.commit == commit
    assert source.ref == "refs/heads/main"
    assert source.repository == "git+https://github.com/acme/widget"
    assert source.dirty is False
    descriptor = source_dependency(source)
    assert descriptor.to_dict() == {
        "uri": "git+https://github.com/acme/widget@refs/heads/main",
        "digest": {"gitCommit": commit},
    }
    assert "s3cret" not in descriptor.to_json().decode()


def test_detached_head_at_a_tag_and_a_subdirectory(tmp_path: Path) -> None:
    commit = make_repo(tmp_path, remote="git@github.com:acme/widget.git")
    git(tmp_path, "tag", "v1.0.0")
    git(tmp_path, "checkout", "-q", "--detach", "v1.0.0")
    (tmp_path / "sub").mkdir()
    source = read_git_source(tmp_path / "sub")
    assert (source.commit, source.ref) == (commit, "refs/tags/v1.0.0")
    assert source.uri == "git+https://github.com/acme/widget@refs/tags/v1.0.0"


def test_uncommitted_changes_are_reported(tmp_path: Path) -> None:
    make_repo(tmp_path)
    (tmp_path / "README").write_text("changed\n")
    source = read_git_source(tmp_path)
    assert source.dirty is True
    assert source.repository is None  # no remote: no shared repository to name
    assert source_dependency(source).to_dict() == {"digest": {"gitCommit": source.commit}}


def test_not_a_checkout(tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        read_git_source(tmp_path)
    assert "expected a git work tree" in str(caught.value)


def test_a_repository_without_commits(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    with pytest.raises(InputError) as caught:
        read_git_source(tmp_path)
    assert "commit at HEAD" in str(caught.value)
