"""Image references: `[REGISTRY/]REPOSITORY[:TAG][@sha256:HEX]`, as docker reads them."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from assay.errors import InputError

DOCKER_HUB: Final = "registry-1.docker.io"
_HUB_NAMES: Final = frozenset({"docker.io", "index.docker.io", "registry-1.docker.io"})
_REPOSITORY: Final = re.compile(
    r"^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*$"
)
_TAG: Final = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$")
DIGEST: Final = re.compile(r"^sha256:[0-9a-f]{64}$")


@dataclass(frozen=True, slots=True)
class Reference:
    registry: str
    """Host[:port] the API is reached at (Docker Hub's is registry-1.docker.io)."""
    repository: str
    tag: str | None = None
    digest: str | None = None

    @property
    def reference(self) -> str:
        """What to ask the manifests endpoint for: the digest when given, else the tag."""
        return self.digest or self.tag or "latest"

    @property
    def loopback(self) -> bool:
        return is_loopback(self.registry)

    @property
    def base_url(self) -> str:
        scheme = "http" if self.loopback else "https"
        return f"{scheme}://{self.registry}/v2/{self.repository}"

    def __str__(self) -> str:
        text = f"{self.registry}/{self.repository}"
        if self.tag:
            text += f":{self.tag}"
        if self.digest:
            text += f"@{self.digest}"
        return text

    def with_digest(self, digest: str) -> Reference:
        return Reference(self.registry, self.repository, None, digest)

    def with_tag(self, tag: str) -> Reference:
        return Reference(self.registry, self.repository, tag, None)


def is_loopback(registry: str) -> bool:
    """localhost, 127.0.0.0/8 or ::1 (with or without a port): plain HTTP is allowed
    only there, as go-containerregistry allows it."""
    host = registry
    if host.startswith("["):
        host = host[1:].split("]", 1)[0]
    elif host.count(":") == 1:
        host = host.split(":", 1)[0]
    if host == "localhost":
        return True
    import ipaddress

    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _split_digest(text: str, where: str) -> tuple[str, str | None]:
    if "@" not in text:
        return text, None
    rest, digest = text.split("@", 1)
    if not DIGEST.match(digest):
        raise InputError(where, f"expected @sha256:<64 lowercase hex digits>, got {digest!r}")
    return rest, digest


def _split_registry(text: str) -> tuple[str, str]:
    """(registry, path): the first part names a registry if it looks like a host."""
    first, slash, remainder = text.partition("/")
    if slash and ("." in first or ":" in first or first == "localhost" or first.startswith("[")):
        return first, remainder
    return "docker.io", text


def _split_tag(path: str, where: str) -> tuple[str, str | None]:
    name, colon, tag = path.rpartition(":")
    if not colon or "/" in tag:
        return path, None
    if not _TAG.match(tag):
        raise InputError(where, f"expected a tag of letters, digits, '_', '.', '-', got {tag!r}")
    return name, tag


def parse_reference(text: str, where: str = "IMAGE") -> Reference:
    """`text` as docker reads an image reference; errors name `where`."""
    rest, digest = _split_digest(text, where)
    registry, path = _split_registry(rest)
    path, tag = _split_tag(path, where)
    if registry in _HUB_NAMES:
        registry = DOCKER_HUB
        if "/" not in path:
            path = f"library/{path}"
    if not _REPOSITORY.match(path):
        raise InputError(
            where,
            f"expected a repository of lowercase letters, digits and separators, got {path!r}",
        )
    return Reference(registry, path, tag, digest)
