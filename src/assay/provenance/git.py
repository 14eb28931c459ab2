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
    code, ref = _git(folder, "symbolic-ref", "-q", "HEAD")
    branch_ref = ref if code == 0 and ref.startswith("refs/") else None
    if branch_ref is None:
        # Detached HEAD (CI checkouts, tags): name the tag that points here, if exactly one.
        code, tags = _git(folder, "tag", "--points-at", "HEAD")
        names = tags.split() if code == 0 else []
        branch_ref = f"refs/tags/{names[0]}" if len(names) == 1 else None
    return SourceRevision(
        repository=_remote(folder, branch_ref),
        commit=commit,
        ref=branch_ref,
        dirty=_dirty(folder),
    )


def _remote(folder: Path, ref: str | None) -> str | None:
    """The URL of the remote the branch tracks, else `origin`, else the only remote."""
    candidates: list[str] = []
    if ref and ref.startswith("refs/heads/"):
        code, name = _git(
            folder, "config", "--get", f"branch.{ref.removeprefix('refs/heads/')}.remote"
        )
        if code == 0 and name:
            candidates.append(name)
    code, remotes = _git(folder, "remote")
    names = remotes.split() if code == 0 else []
    candidates += ["origin"] if "origin" in names else names[:1] if len(names) == 1 else []
    for name in candidates:
        code, url = _git(folder, "remote", "get-url", name)
        if code == 0 and url:
            return git_uri(url)
    return None


def _dirty(folder: Path) -> bool:
    code, status = _git(folder, "status", "--porcelain", "--untracked-files=no")
    return code == 0 and bool(status)
