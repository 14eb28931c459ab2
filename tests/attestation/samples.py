"""Shared test data: the copied real vectors and minimal valid statements of each format."""

from __future__ import annotations

from pathlib import Path
from typing import Any

SLSA_ASSETS = Path(__file__).parent.parent / "assets" / "slsa"

SHA256 = "a" * 64
COMMIT = "26d16513386ffaa790b1c32f927544f1322e4194"


def asset_files() -> list[str]:
    """Every copied real file, relative to tests/assets/slsa."""
    return sorted(
        str(path.relative_to(SLSA_ASSETS))
        for path in SLSA_ASSETS.rglob("*")
        if path.is_file() and path.name != "SOURCES.md"
    )


def provenance_v1() -> dict[str, Any]:
    return {
        "_type": "https://in-toto.io/Statement/v1",
        "subject": [{"name": "pkg:npm/demo@1.0.0", "digest": {"sha256": SHA256}}],
        "predicateType": "https://slsa.dev/provenance/v1",
        "predicate": {
            "buildDefinition": {
                "buildType": "https://slsa-framework.github.io/github-actions-buildtypes/workflow/v1",
                "externalParameters": {
                    "workflow": {
                        "ref": "refs/heads/main",
                        "repository": "https://github.com/octo/demo",
                        "path": ".github/workflows/release.yml",
                    }
                },
                "internalParameters": {"github": {"event_name": "push"}},
                "resolvedDependencies": [
                    {
                        "uri": "git+https://github.com/octo/demo@refs/heads/main",
                        "digest": {"gitCommit": COMMIT},
                    }
                ],
            },
            "runDetails": {
                "builder": {"id": "https://github.com/actions/runner/github-hosted"},
                "metadata": {
                    "invocationId": "https://github.com/octo/demo/actions/runs/1/attempts/1",
                    "startedOn": "2026-11-22T10:00:00Z",
                    "finishedOn": "2026-11-22T10:05:00Z",
                },
            },
        },
    }


def provenance_v02() -> dict[str, Any]:
    return {
        "_type": "https://in-toto.io/Statement/v0.1",
        "subject": [{"name": "demo", "digest": {"sha256": SHA256}}],
        "predicateType": "https://slsa.dev/provenance/v0.2",
        "predicate": {
            "builder": {"id": "https://github.com/octo/builder@v1"},
            "buildType": "https://github.com/octo/builder/go@v1",
            "invocation": {
                "configSource": {
                    "uri": "git+https://github.com/octo/demo@refs/tags/v1",
                    "digest": {"sha1": COMMIT},
                    "entryPoint": ".github/workflows/release.yml",
                },
                "parameters": {"target": "linux"},
                "environment": {"arch": "X64"},
            },
            "buildConfig": {"steps": [{"command": ["go", "build"]}]},
            "metadata": {
                "buildInvocationId": "run-1",
                "buildStartedOn": "2026-11-22T10:00:00Z",
                "buildFinishedOn": "2026-11-22T10:05:00.52Z",
                "completeness": {"parameters": True, "environment": False, "materials": False},
                "reproducible": False,
            },
            "materials": [
                {"uri": "git+https://github.com/octo/demo@refs/tags/v1", "digest": {"sha1": COMMIT}}
            ],
        },
    }


def provenance_v01() -> dict[str, Any]:
    return {
        "_type": "https://in-toto.io/Statement/v0.1",
        "subject": [{"name": "demo", "digest": {"sha256": SHA256}}],
        "predicateType": "https://slsa.dev/provenance/v0.1",
        "predicate": {
            "builder": {"id": "https://cloudbuild.googleapis.com/GoogleHostedWorker@v0.2"},
            "recipe": {
                "type": "https://cloudbuild.googleapis.com/CloudBuildYaml@v0.1",
                "definedInMaterial": 0,
                "entryPoint": "cloudbuild.yaml",
                "arguments": {"substitutions": {"_TAG": "v1"}},
                "environment": {"region": "us-west2"},
            },
            "metadata": {
                "buildInvocationId": "b6e0",
                "buildStartedOn": "2026-11-22T10:00:00Z",
                "completeness": {"arguments": True, "environment": False, "materials": False},
                "reproducible": False,
            },
            "materials": [
                {"uri": "https://github.com/octo/demo", "digest": {"sha1": COMMIT}},
                {"uri": "gcr.io/cloud-builders/docker"},
            ],
        },
    }


def vsa_v1() -> dict[str, Any]:
    return {
        "_type": "https://in-toto.io/Statement/v1",
        "subject": [{"name": "demo.tar.gz", "digest": {"sha256": SHA256}}],
        "predicateType": "https://slsa.dev/verification_summary/v1",
        "predicate": {
            "verifier": {"id": "https://verifier.example/v1", "version": {"assay": "0.1.0"}},
            "timeVerified": "2026-11-22T12:00:00Z",
            "resourceUri": "https://example.com/demo.tar.gz",
            "policy": {"uri": "https://example.com/policy.yaml", "digest": {"sha256": SHA256}},
            "inputAttestations": [
                {"uri": "https://example.com/demo.intoto.jsonl", "digest": {"sha256": SHA256}}
            ],
            "verificationResult": "PASSED",
            "verifiedLevels": ["SLSA_BUILD_LEVEL_3", "SLSA_BUILD_REPRODUCED"],
            "dependencyLevels": {"SLSA_BUILD_LEVEL_3": 5, "SLSA_BUILD_LEVEL_1": 2},
            "slsaVersion": "1.1",
        },
    }


BASES = {
    "provenance-v1": provenance_v1,
    "provenance-v0.2": provenance_v02,
    "provenance-v0.1": provenance_v01,
    "vsa-v1": vsa_v1,
}
