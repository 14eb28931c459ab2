"""The git checkout a build runs in: repository, commit, ref (runs `git` as a subprocess)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from assay.errors import InputError
from assay.provenance.source import SourceRevision, git_uri, is_commit

GIT_TIMEOUT_SECONDS = 30
_MAX_OUTPUT = 1024 * 1024


def _git(directory: Path, *args: str) -> tuple[int, str]:
    try:
        done = subprocess.run(  # noqa: S603 - fixed argv, no shell
            ["git", "-C", str(directory), *args],  # noqa: S607 - git from PATH, as a user runs it
            capture_output=True,
            timeout=GIT_TIMEOUT_SECONDS,
            check=False,
        )
    except FileNotFoundError:
        raise InputError("--from-git", "expected the git command on PATH, found none") from None
    except subprocess.TimeoutExpired:
        raise InputError(
            "--from-git", f"git {args[0]} did not answer within {GIT_TIMEOUT_SECONDS} s"
        ) from None
    return done.returncode, done.stdout[:_MAX_OUTPUT].decode("utf-8", "replace").strip()


def read_git_source(directory: Path | str = ".") -> SourceRevision:
    """The checkout's HEAD commit, its branch ref, the remote it tracks, and whether it is dirty.

    Raises `InputError` when `directory` is not inside a git work tree or HEAD has no commit.
    """
    folder = Path(directory)
    code, inside = _git(folder, "rev-parse", "--is-inside-work-tree")
    if code != 0 or inside != "true":
        raise InputError(str(folder), "expected a git work tree (for --from-git), found none")
    code, commit = _git(folder, "rev-parse", "--verify", "HEAD^{commit}")
    if code != 0 or not is_commit(commit):
        raise InputError(str(folder), "expected a git checkout with a commit at HEAD, found none")
    branch_ref = _head_ref(folder)
    return SourceRevision(
        repository=_remote(folder, branch_ref),
        commit=commit,
        ref=branch_ref,
        dirty=_dirty(folder),
    )


def _head_ref(folder: Path) -> str | None:
    """The branch HEAD is on; on a detached HEAD (CI checkouts, tags), the tag that points
    here, if exactly one does."""
    code, ref = _git(folder, "symbolic-ref", "-q", "HEAD")
    if code == 0 and ref.startswith("refs/"):
        return ref
    code, tags = _git(folder, "tag", "--points-at", "HEAD")
    names = tags.split() if code == 0 else []
    return f"refs/tags/{names[0]}" if len(names) == 1 else None


def _tracked_remote(folder: Path, ref: str | None) -> list[str]:
    if not ref or not ref.startswith("refs/heads/"):
        return []
    branch = ref.removeprefix("refs/heads/")
    code, name = _git(folder, "config", "--get", f"branch.{branch}.remote")
    return [name] if code == 0 and name else []


def _default_remote(folder: Path) -> list[str]:
    """`origin` if there is one, else the only remote."""
    code, remotes = _git(folder, "remote")
    names = remotes.split() if code == 0 else []
    if "origin" in names:
        return ["origin"]
    return names[:1] if len(names) == 1 else []


def _remote(folder: Path, ref: str | None) -> str | None:
    """The URL of the remote the branch tracks, else `origin`, else the only remote."""
    candidates = _tracked_remote(folder, ref) + _default_remote(folder)
    for name in candidates:
        code, url = _git(folder, "remote", "get-url", name)
        if code == 0 and url:
            return git_uri(url)
    return None


def _dirty(folder: Path) -> bool:
    code, status = _git(folder, "status", "--porcelain", "--untracked-files=no")
    return code == 0 and bool(status)
