"""Source revisions: a repository, a commit and a ref, and their provenance URI form."""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

_SCP_LIKE = re.compile(r"^(?:[A-Za-z0-9._-]+@)?(?P<host>[A-Za-z0-9.-]+):(?P<path>[^/].*)$")
_COMMIT = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")


@dataclass(frozen=True, slots=True)
class SourceRevision:
    """A checked-out revision: `repository` is a `git+` URI without credentials."""

    repository: str | None
    commit: str
    """Full hex commit id (SHA-1 or SHA-256)."""
    ref: str | None = None
    """`refs/heads/main`, `refs/tags/v1.2.0`, or None (detached)."""
    dirty: bool = False
    """The working tree had uncommitted changes: the commit does not describe it."""

    @property
    def uri(self) -> str | None:
        """`git+https://host/owner/repo@refs/heads/main` (the SLSA convention)."""
        if self.repository is None:
            return None
        return f"{self.repository}@{self.ref}" if self.ref else self.repository


def is_commit(text: str) -> bool:
    return _COMMIT.fullmatch(text) is not None


def _url_form(remote: str) -> str:
    """A remote as a URL: `git+` dropped, scp-like `git@host:o/r` as `https://host/o/r`."""
    remote = remote.strip().removeprefix("git+")
    scp = _SCP_LIKE.match(remote)
    if scp and "://" not in remote:
        return f"https://{scp['host']}/{scp['path']}"
    return remote


def _web_server(scheme: str, host: str, port: int | None) -> tuple[str, str]:
    """The scheme and host[:port] of the web server behind a remote."""
    if scheme in ("ssh", "git"):
        return "https", host  # the port of an ssh or git remote is not the web server's
    return scheme, f"{host}:{port}" if port else host


def git_uri(remote: str) -> str | None:
    """A remote URL as `git+https://...` (scp-like `git@host:o/r.git` included), credentials
    and the `.git` suffix removed; None for a local path, which names no shared repository."""
    try:
        parts = urlsplit(_url_form(remote))
    except ValueError:
        return None
    if parts.scheme not in ("https", "http", "ssh", "git") or not parts.hostname:
        return None
    scheme, host = _web_server(parts.scheme, parts.hostname, parts.port)
    path = parts.path.removesuffix("/").removesuffix(".git")
    # userinfo (tokens in https://user:token@host/...) never goes into an attestation.
    return "git+" + urlunsplit((scheme, host, path, "", ""))
