"""Real git repositories for tests (git runs as a subprocess, as users run it)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.org",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.org",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
}


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args],
        capture_output=True,
        check=True,
        env={**os.environ, **GIT_ENV},
    )
    return done.stdout.decode().strip()


def make_repo(path: Path, *, remote: str | None = None) -> str:
    """A repository on branch main with one commit; returns the commit id."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    (path / "README").write_text("widget\n")
    git(path, "add", "README")
    git(path, "commit", "-q", "-m", "first")
    if remote:
        git(path, "remote", "add", "origin", remote)
    return git(path, "rev-parse", "HEAD")
