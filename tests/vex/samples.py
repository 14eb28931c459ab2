"""Helpers for the VEX tests: the copied real documents and signing with a test key."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from assay import dsse
from assay.keys import PrivateKey

REAL = Path(__file__).parent.parent / "assets" / "vex" / "real"


def real(path: str) -> bytes:
    return (REAL / path).read_bytes()


def openvex(*statements: dict[str, Any], **top: Any) -> bytes:
    document = {
        "@context": "https://openvex.dev/ns/v0.2.0",
        "@id": "https://example.com/vex/1",
        "author": "Example Vendor",
        "timestamp": "2024-01-01T00:00:00Z",
        "version": 1,
        "statements": list(statements),
        **top,
    }
    return json.dumps(document).encode()


def statement_of(predicate: bytes) -> bytes:
    return json.dumps(
        {
            "_type": "https://in-toto.io/Statement/v1",
            "subject": [{"name": "app", "digest": {"sha256": "ab" * 32}}],
            "predicateType": "https://openvex.dev/ns/v0.2.0",
            "predicate": json.loads(predicate),
        }
    ).encode()


def sign(payload: bytes, key: PrivateKey) -> bytes:
    envelope = dsse.sign(payload, dsse.INTOTO_PAYLOAD_TYPE, [key])
    return envelope.to_json()
