"""Digest notations of lock files, turned into in-toto digest sets (lowercase hex)."""

from __future__ import annotations

import base64
import binascii
import re

from assay import protocol

# Hex lengths of the algorithms lock files use; anything else is reported, not guessed.
HEX_LENGTHS = {
    name: protocol.DIGEST_HEX_LENGTHS[name]
    for name in ("sha1", "sha256", "sha384", "sha512", "md5")
}
_HEX = re.compile(r"[0-9a-fA-F]+")


def parse_pip_hash(text: str) -> tuple[str, str]:
    """`sha256:ab12...` (pip `--hash`, poetry and uv `hash`) as (algorithm, lowercase hex).

    Raises ValueError with what was expected and found.
    """
    algorithm, sep, value = text.partition(":")
    if not sep:
        raise ValueError(f"expected ALGORITHM:HEX, found {text!r}")
    algorithm = algorithm.lower()
    length = HEX_LENGTHS.get(algorithm)
    if length is None:
        raise ValueError(
            f"expected a hash algorithm among {', '.join(sorted(HEX_LENGTHS))}, found {algorithm!r}"
        )
    if len(value) != length or not _HEX.fullmatch(value):
        raise ValueError(
            f"expected {length} hexadecimal digits for {algorithm}, found {value[:140]!r}"
        )
    return algorithm, value.lower()


def parse_sri(text: str) -> dict[str, str]:
    """A Subresource Integrity string (`sha512-<base64>`, several separated by spaces)."""
    digests: dict[str, str] = {}
    for token in text.split():
        algorithm, sep, encoded = token.partition("-")
        algorithm = algorithm.lower()
        length = HEX_LENGTHS.get(algorithm)
        if not sep or length is None:
            raise ValueError(f"expected ALGORITHM-BASE64 (sha512-...), found {token[:140]!r}")
        # An SRI token may carry options after '?'; they do not change the digest.
        encoded = encoded.split("?", 1)[0]
        try:
            raw = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError):
            raise ValueError(
                f"expected base64 after {algorithm}-, found {encoded[:140]!r}"
            ) from None
        if len(raw) * 2 != length:
            raise ValueError(
                f"expected a {length // 2}-byte {algorithm} digest, found {len(raw)} bytes"
            )
        digests[algorithm] = raw.hex()
    if not digests:
        raise ValueError("expected ALGORITHM-BASE64 (sha512-...), found an empty string")
    return digests


def single_digests(files: list[dict[str, str]]) -> dict[str, str]:
    """The package's digests when exactly one file is listed, else none (ambiguous)."""
    return dict(files[0]) if len(files) == 1 else {}
