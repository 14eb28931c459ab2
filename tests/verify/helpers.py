"""Build signed provenance and policies for tests."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from assay import dsse
from assay.keys import PrivateKey

BUILDER = "https://builder.example/workflows/build.yml"
BUILD_TYPE = "https://builder.example/buildtypes/v1"
REPO = "https://github.com/acme/widget"


def digest_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def provenance(
    subject: dict[str, str],
    *,
    builder: str = f"{BUILDER}@refs/tags/v1.2.3",
    build_type: str = BUILD_TYPE,
    external: dict[str, Any] | None = None,
    ref: str = "refs/tags/v1.4.2",
    dependencies: list[dict[str, Any]] | None = None,
    name: str = "widget",
) -> dict[str, Any]:
    return {
        "_type": "https://in-toto.io/Statement/v1",
        "subject": [{"name": name, "digest": subject}],
        "predicateType": "https://slsa.dev/provenance/v1",
        "predicate": {
            "buildDefinition": {
                "buildType": build_type,
                "externalParameters": external
                if external is not None
                else {"workflow": {"repository": REPO, "ref": ref, "path": "build.yml"}},
                "resolvedDependencies": [
                    {"uri": f"git+{REPO}@{ref}", "digest": {"gitCommit": "a" * 40}},
                    *(dependencies or []),
                ],
            },
            "runDetails": {"builder": {"id": builder}},
        },
    }


def sign(statement: dict[str, Any], *keys: PrivateKey) -> bytes:
    payload = json.dumps(statement).encode()
    return dsse.sign(payload, dsse.INTOTO_PAYLOAD_TYPE, keys).to_json()


def write_policy(directory: Path, key_pub: Path, **overrides: Any) -> Path:
    policy: dict[str, Any] = {
        "version": 1,
        "uri": "https://policies.example/widget",
        "signers": [
            {
                "name": "ci",
                "publicKeys": [str(key_pub)],
                "builders": [{"id": BUILDER, "pin": "release-tag", "maxLevel": 3}],
            }
        ],
        "buildTypes": [BUILD_TYPE],
        "externalParameters": {
            "exact": {"workflow.path": "build.yml"},
            "patterns": {"workflow.ref": "refs/tags/v.*"},
            "allowUnknown": ["workflow.repository"],
        },
        "source": {"repository": REPO},
        "minimumLevel": 3,
    }
    policy.update(overrides)
    path = directory / "policy.json"
    path.write_text(json.dumps(policy))
    return path
