"""URLs as they may be shown, logged or put in an error: `redact_url(url) -> str`.

A store or upstream URL can carry secrets in two places: the password of its user
information (`postgresql://user:secret@host/db`) and options of its query
(`?password=`, `?sslpassword=`, `?apiKey=`, `?token=`...). Both are replaced by `***`;
everything else is kept as written (the user name tells which account was used). The
URL is treated as text, so even one `urlsplit` refuses (a bad IPv6 host) is redacted,
and libpq's `key=value` connection strings are too. A user information with an unescaped
`?` or `#` (`http://user:pa?ss@host/`), where parsers disagree on where the host starts,
is hidden whole.
"""

from __future__ import annotations

import re
from typing import Final
from urllib.parse import unquote_plus

__all__ = ["MASK", "is_secret_option", "redact_target", "redact_url"]

MASK: Final = "***"
# Option names (lower case, without `-` and `_`) whose value is a secret, and the parts
# that make any name one (`db_password`, `access_token`, `client_secret`, `x-api-key`).
_SECRET_NAMES: Final = frozenset(("pwd", "pass", "key", "auth", "sig", "signature", "jwt"))
_SECRET_PARTS: Final = (
    "password",
    "passwd",
    "passphrase",
    "token",
    "secret",
    "apikey",
    "credential",
)
_CONNINFO_SECRET: Final = re.compile(
    r"(?P<key>\b\w*(?:password|passwd|token|secret|apikey)\w*\s*=\s*)(?P<value>'(?:[^'\\]|\\.)*'|\S+)",
    re.IGNORECASE,
)


def is_secret_option(name: str) -> bool:
    """Whether a URL option (or header) named `name` carries a secret."""
    folded = name.lower().replace("_", "").replace("-", "")
    return folded in _SECRET_NAMES or any(part in folded for part in _SECRET_PARTS)


_AUTHORITY_MARK: Final = re.compile("[/?#]")


def _mark_at_or_after(rest: str, start: int = 0) -> int:
    """The index of the first `/`, `?` or `#` from `start` on; the length when none."""
    found = _AUTHORITY_MARK.search(rest, start)
    return len(rest) if found is None else found.start()


def _authority_end(rest: str) -> tuple[int, bool]:
    """Where the authority of `rest` (a URL after `://`) ends, and whether that is
    ambiguous (a `?` or `#` before an `@` and the path)."""
    # The authority ends at the first `/`, `?` or `#`; its user information at its last `@`.
    end = _mark_at_or_after(rest)
    head = rest.partition("/")[0]
    if "@" not in head[end:]:
        return end, False
    # A user information with an unescaped ? or # (parsers disagree on where it ends), or
    # an @ in the query. All of it up to the last @ is hidden.
    return _mark_at_or_after(rest, head.rfind("@")), True


def _masked_authority(authority: str, *, ambiguous: bool) -> str:
    userinfo, at, host = authority.rpartition("@")
    if ambiguous:
        return f"{MASK}@{host}"
    if not at:
        return authority
    user, colon, _ = userinfo.partition(":")
    return f"{user}:{MASK}@{host}" if colon else f"{user}@{host}"


def redact_url(url: str) -> str:
    """`url` with the password of its user information and every secret option's value
    replaced by `***` (see the module docstring)."""
    scheme, found, rest = url.partition("://")
    if not found:
        return _CONNINFO_SECRET.sub(lambda m: m["key"] + MASK, url)
    end, ambiguous = _authority_end(rest)
    authority = _masked_authority(rest[:end], ambiguous=ambiguous)
    return f"{scheme}://{authority}{redact_target(rest[end:])}"


def redact_target(target: str) -> str:
    """A request target (`/path?query#fragment`) with every secret option's value
    replaced by `***` (an `apiKey` sent in the query string rather than its header)."""
    before_fragment, hash_mark, fragment = target.partition("#")
    path, question, query = before_fragment.partition("?")
    if question:
        query = "&".join(_redact_pair(pair) for pair in query.split("&"))
    return f"{path}{question}{query}{hash_mark}{fragment}"


def _redact_pair(pair: str) -> str:
    name, equals, _ = pair.partition("=")
    if equals and is_secret_option(unquote_plus(name)):
        return f"{name}={MASK}"
    return pair
