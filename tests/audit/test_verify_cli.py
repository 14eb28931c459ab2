"""`assay verify --store URL` with a policy's `vulnerabilities:` rule, end to end.

A build's files are made and signed with the command line itself (a key pair, SLSA
provenance naming a dependency, and an SBOM statement about the same artifact, DSSE-signed
with the same key); `assay verify` then judges them against the real test store. The exit
code must be the library's verdict (the `Verifier` with a `VulnerabilityCheck` over the
same store, run on the same files), and the issued VSA must carry
`ASSAY_VULNERABILITIES_CLEAN` exactly when the rule found nothing that fails it.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml
from tests.audit.test_check import _kev_name

from assay.audit import CLEAN_LEVEL, StoreSource, VulnerabilityCheck
from assay.nvd.storage import open_store
from assay.policy import load_policy
from assay.verify import Artifact, Verifier, read_attestations

POLICIES = Path(__file__).parents[2] / "policies"
VERIFIER_ID = "https://verifier.example/assay"
RESOURCE = "https://example.com/app"


def _write_policy(folder: Path, public_key: Path, rule: dict[str, Any]) -> Path:
    document = yaml.safe_load((POLICIES / "assay-attest.yaml").read_text())
    document["signers"][0]["publicKeys"] = [str(public_key)]
    document["vulnerabilities"] = rule
    path = folder / "policy.yaml"
    path.write_text(yaml.safe_dump(document))
    return path


@pytest.fixture
def build(
    cli: Callable[..., int], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> dict[str, Path]:
    """A signed build: artifact, key pair, provenance and an SBOM statement."""
    monkeypatch.chdir(tmp_path)  # the build's outputs lie in its working directory
    key = tmp_path / "signer"
    assert cli("keys", "generate", "--type", "ed25519", "--out", str(key)) == 0
    artifact = tmp_path / "app.tar.gz"
    artifact.write_bytes(b"the release archive\n")
    provenance = tmp_path / "provenance.intoto.json"
    making = [
        "attest", "provenance", "--subject", str(artifact),
        "--builder-id", "https://ci.example/builders/release",
        "--build-type", "urn:assay:build-type:command:v1",
        "--external-parameter", "command=make release",
        "--dependency", "pkg:github/zmanda/amanda@3.3.0",
        "--key", f"{key}.key", "--out", str(provenance),
    ]  # fmt: skip
    assert cli(*making) == 0
    cpe, _ = _kev_name()
    statement = {
        "_type": "https://in-toto.io/Statement/v1",
        "subject": [
            {
                "name": "app.tar.gz",
                "digest": {"sha256": hashlib.sha256(artifact.read_bytes()).hexdigest()},
            }
        ],
        "predicateType": "https://cyclonedx.org/bom",
        "predicate": {
            "bomFormat": "CycloneDX",
            "specVersion": "1.5",
            "components": [
                {"type": "library", "bom-ref": "kev-component", "name": "x", "cpe": cpe}
            ],
        },
    }
    (tmp_path / "sbom.json").write_bytes(orjson.dumps(statement))
    sbom = tmp_path / "sbom.intoto.json"
    key_file = f"{key}.key"
    assert (
        cli("attest", "sign", "--key", key_file, str(tmp_path / "sbom.json"), "--out", str(sbom))
        == 0
    )
    return {
        "artifact": artifact,
        "key": Path(key_file),
        "public": Path(f"{key}.pub"),
        "provenance": provenance,
        "sbom": sbom,
    }


def _library_passes(policy: Path, build: dict[str, Path], store_url: str) -> tuple[bool, bool]:
    """(passed, clean) as the library judges the same files against the same store."""
    store = open_store(store_url)
    try:
        verifier = Verifier(
            policy=load_policy(policy), dependency_checks=[VulnerabilityCheck(StoreSource(store))]
        )
        attestations = [
            found
            for name in ("provenance", "sbom")
            for found in read_attestations(build[name].read_bytes(), str(build[name]))
        ]
        artifact = build["artifact"]
        digest = hashlib.sha256(artifact.read_bytes()).hexdigest()
        report = verifier.verify([Artifact(artifact.name, {"sha256": digest})], attestations)
    finally:
        store.close()
    (vulnerabilities,) = report.dependency_checks
    return report.passed, vulnerabilities.passed


@pytest.mark.parametrize(
    "case",
    [
        ({"failOn": ["kev"]}, False),
        ({"failOn": ["kev"], "ignore": "the KEV CVE, excused"}, True),
    ],
)
def test_exit_code_and_vsa_follow_the_library(
    cli: Callable[..., int],
    audit_sqlite_url: str,
    build: dict[str, Path],
    tmp_path: Path,
    case: tuple[dict[str, Any], bool],
) -> None:
    rule, clean = case
    if "ignore" in rule:
        _, cve = _kev_name()
        rule = {
            **rule,
            "ignore": [
                {"id": cve, "component": "kev-component", "reason": rule["ignore"],
                 "expires": "2999-01-01"}
            ],
        }  # fmt: skip
    policy = _write_policy(tmp_path, build["public"], rule)
    vsa = tmp_path / "vsa.intoto.json"
    code = cli(
        "verify", str(build["artifact"]),
        "--attestation", str(build["provenance"]), str(build["sbom"]),
        "--policy", str(policy), "--store", audit_sqlite_url,
        "--vsa-out", str(vsa), "--vsa-key", str(build["key"]),
        "--verifier-id", VERIFIER_ID, "--resource-uri", RESOURCE, "--json",
    )  # fmt: skip
    passed, library_clean = _library_passes(policy, build, audit_sqlite_url)
    assert library_clean is clean
    assert code == (0 if passed else 1)
    assert passed is clean  # the provenance itself verifies: only the rule decides
    envelope = orjson.loads(vsa.read_bytes())
    predicate = orjson.loads(base64.b64decode(envelope["payload"]))["predicate"]
    assert predicate["verificationResult"] == ("PASSED" if passed else "FAILED")
    assert (CLEAN_LEVEL in predicate["verifiedLevels"]) is clean
