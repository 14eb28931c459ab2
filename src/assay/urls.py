"""URLs as they may be shown or logged: without the secrets they can carry."""

from __future__ import annotations

import re
from typing import Final
from urllib.parse import urlsplit

__all__ = ["MASK", "SECRET_PARAMETERS", "redact_url"]

MASK: Final = "***"
SECRET_PARAMETERS: Final = frozenset(
    {
        "access_token",
        "api_key",
        "apikey",
        "auth",
        "client_secret",
        "key",
        "passwd",
        "password",
        "pwd",
        "refresh_token",
        "secret",
        "sig",
        "signature",
        "sslpassword",
        "token",
    }
)
"""Query parameters whose values are masked (compared in lower case; any name that
contains `password`, `secret` or `token` is masked too)."""

_PARAMETER = re.compile(r"([^&;=]*)=([^&;]*)")


def _secret(name: str) -> bool:
    lowered = name.lower()
    return lowered in SECRET_PARAMETERS or any(
        word in lowered for word in ("password", "secret", "token")
    )


def _mask_query(query: str) -> str:
    return _PARAMETER.sub(lambda m: f"{m[1]}={MASK}" if _secret(m[1]) and m[2] else m[0], query)


def redact_url(url: str) -> str:
    """`url` with the password of its user information and the values of its secret
    query parameters (`password`, `sslpassword`, `apiKey`, `token`, ...) replaced by
    `***`. A user name alone is kept: it tells which account was used. A URL that does
    not parse loses everything before its last `@` and every query value."""
    scheme, slashes, after = url.partition("://")
    authority, slash, path = after.partition("/")
    if slashes and "@" in authority and ("?" in authority or "#" in authority):
        # User information with an unescaped ? or #: parsers disagree on where it ends.
        base, question, query = (authority.rpartition("@")[2] + slash + path).partition("?")
        return f"{scheme}://{MASK}@{base}{question}{_mask_query(query)}"
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        head, at, tail = url.rpartition("@")
        scheme = head.partition("://")[0] + "://" if at and "://" in head else ""
        rest, question, query = (tail if at else url).partition("?")
        masked = re.sub(r"=[^&;]*", f"={MASK}", query)
        return f"{scheme}{MASK + '@' if at else ''}{rest}{question}{masked}"
    head, question, rest = url.partition("?")
    if password is not None:
        host = parts.netloc.rpartition("@")[2]
        head = head.replace(parts.netloc, f"{parts.username or ''}:{MASK}@{host}", 1)
    query, hash_, fragment = rest.partition("#")
    return f"{head}{question}{_mask_query(query)}{hash_}{fragment}"
