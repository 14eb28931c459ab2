"""NVD's JSON encoding: compact, raw UTF-8, and `/` escaped as `\\/`.

The real service escapes every forward slash (`"CVSS:3.1\\/AV:N"`, `"https:\\/\\/…"`).
Records are stored in this form so that the server emits them byte for byte as NVD
does, without parsing them again on the way out.
"""

from __future__ import annotations

from typing import Any

import orjson


def encode(value: Any) -> bytes:
    """Encode a JSON value exactly as NVD does."""
    # A `/` can only occur inside a JSON string, so escaping every one is safe.
    return orjson.dumps(value).replace(b"/", b"\\/")


def decode(data: bytes | str) -> Any:
    """Decode JSON (either escaping of `/` is accepted)."""
    return orjson.loads(data)
