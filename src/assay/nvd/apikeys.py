"""API keys of a mirror: made here, shown once, kept only as a digest.

A key is 256 random bits (43 URL-safe characters). The store keeps its SHA-256 digest
(the key has far too much entropy for a slow hash to add anything), looks a presented
key up by digest and compares the digests in constant time. Each key has a name (how
an operator refers to it), a creation time and the time it was last used.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from assay.errors import InputError
from assay.nvd.dates import format_nvd_timestamp
from assay.nvd.storage.interface import ApiKey

if TYPE_CHECKING:
    from assay.nvd.storage.interface import ServiceStore

KEY_BYTES = 32
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,63}")
MAX_PRESENTED_LENGTH = 256  # a longer `apiKey` header is not a key of ours


@dataclass(frozen=True, slots=True)
class NewKey:
    """A key just made: the only time the key itself is known."""

    name: str
    key: str

    def to_dict(self) -> dict[str, str]:
        return {"name": self.name, "key": self.key}


def check_name(name: str) -> str:
    if not NAME.fullmatch(name):
        raise InputError(
            "NAME",
            "expected 1-64 characters: a letter or digit, then letters, digits, '.', '_', "
            f"'@' or '-'; found {name[:80]!r}",
        )
    return name


def make_key() -> str:
    return secrets.token_urlsafe(KEY_BYTES)


def digest(key: str) -> bytes:
    """The stored form of a key."""
    return hashlib.sha256(key.encode("utf-8", "surrogateescape")).digest()


def same_digest(stored: bytes, presented: bytes) -> bool:
    """Constant-time comparison of two digests."""
    return hmac.compare_digest(stored, presented)


def create_key(store: ServiceStore, name: str, now: datetime | None = None) -> NewKey:
    """Make a key named `name` and store its digest; the key is in the answer only."""
    check_name(name)
    key = make_key()
    store.add_api_key(name, digest(key), _stamp(now))
    return NewKey(name, key)


def list_keys(store: ServiceStore) -> list[ApiKey]:
    return store.api_keys()


def revoke_key(store: ServiceStore, name: str) -> None:
    """Forget the key named `name`; an `InputError` if there is none."""
    check_name(name)
    if not store.revoke_api_key(name):
        raise InputError("NAME", f"no API key is named {name!r}")


def key_name(store: ServiceStore, presented: str) -> str | None:
    """The name of the stored key `presented` is, or None."""
    if not presented or len(presented) > MAX_PRESENTED_LENGTH:
        return None
    wanted = digest(presented)
    found = store.api_key_named_by(wanted)
    if found is None or not same_digest(found[1], wanted):
        return None
    return found[0]


def _stamp(now: datetime | None) -> str:
    return format_nvd_timestamp(now or datetime.now(UTC))
