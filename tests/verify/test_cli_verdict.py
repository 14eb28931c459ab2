"""The command line's exit code is the library's verdict, over the real attestation corpus.

For every Cloud Build case and one GitHub Actions case per provenance file of
slsa-verifier's expectations, and every VSA case, `assay verify` / `assay verify-vsa`
run in-process and the `Verifier` / `check_vsa` run on the same files: exit 0 exactly
when the library passed, 1 when it refused, 2 exactly when the library raised on the
input. The CLI adds no verdict of its own.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from assay.errors import AssayError
from assay.keys import load_public_key
from assay.policy import load_policy
from assay.verify import Artifact, Verifier, check_vsa, read_attestations
from assay.verify.vsa import parse_digest

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "assets" / "verify" / "slsa-verifier"
POLICIES = ROOT / "policies"

_FAMILIES = {
    "gha_go": "slsa-github-generator-go.yaml",
    "gha_generic": "slsa-github-generator-generic.yaml",
    "gha_container-based": "slsa-github-generator-container-based.yaml",
    "gha_delegator": "slsa-github-generator-delegator.yaml",
    "gha_maven": "slsa-github-generator-delegator.yaml",
    "gha_gradle": "slsa-github-generator-delegator.yaml",
}


def _cases() -> list[Any]:
    cases = json.loads((DATA / "expectations.json").read_text())["cases"]
    chosen: list[Any] = []
    seen: set[str] = set()
    for case in cases:
        command = case.get("command")
        if command == "verify-image" and "Google Cloud KMS" in case.get("tlog_material", ""):
            chosen.append(pytest.param(("gcb.yaml", case), id=case["id"]))
        elif command == "verify-artifact" and (DATA / case["provenance"]).exists():
            family = (case.get("builder_dir") or case["provenance"].split("/")[1]).split("/")[0]
            if family in _FAMILIES and case["provenance"] not in seen:
                seen.add(case["provenance"])
                chosen.append(pytest.param((_FAMILIES[family], case), id=case["id"]))
        elif command == "verify-vsa":
            chosen.append(pytest.param(("vsa", case), id=case["id"]))
    return chosen


def _policy_file(tmp_path: Path, name: str, options: dict[str, Any]) -> Path:
    document = yaml.safe_load((POLICIES / name).read_text())
    for signer in document.get("signers", []):
        signer["publicKeys"] = [
            {**k, "key": str(POLICIES / k["key"])} if isinstance(k, dict) else str(POLICIES / k)
            for k in signer.get("publicKeys") or []
        ]
    source = dict(document.get("source") or {})
    for option, field in (
        ("source_uri", "repository"),
        ("source_branch", "branch"),
        ("source_tag", "tag"),
        ("source_versioned_tag", "versionedTag"),
    ):
        if options.get(option):
            source[field] = options[option]
    document["source"] = source
    path = tmp_path / "policy.yaml"
    path.write_text(yaml.safe_dump(document))
    return path


def _library_verify(policy: Path, artifacts: list[str], attestation: Path) -> int:
    try:
        verifier = Verifier(policy=load_policy(policy))
        found = read_attestations(attestation.read_bytes(), str(attestation))
        digests = [Artifact(a, {a.split(":", 1)[0]: a.split(":", 1)[1]}) for a in artifacts]
        return 0 if verifier.verify(digests, found).passed else 1
    except AssayError:
        return 2


def _library_vsa(attestation: Path, options: dict[str, Any]) -> int:
    try:
        key = load_public_key((DATA / options["public_key_path"]).read_bytes())
        (found,) = read_attestations(attestation.read_bytes(), str(attestation))
        result = check_vsa(
            found.envelope,
            trusted={options["verifier_id"]: [key]},
            subject_digests=[parse_digest(d) for d in options["subject_digests"]],
            verifier_id=options["verifier_id"],
            resource_uri=options["resource_uri"],
            levels=options.get("verified_levels") or [],
        )
        return 0 if result.passed else 1
    except (AssayError, ValueError):
        return 2


@pytest.mark.parametrize("case", _cases())
def test_exit_code_is_the_library_verdict(
    case: tuple[str, dict[str, Any]], cli: Callable[..., int], tmp_path: Path
) -> None:
    kind, data = case
    options = data.get("options") or {}
    if kind == "vsa":
        attestation = DATA / data["attestation"]
        missing = [
            k for k in ("subject_digests", "verifier_id", "resource_uri") if not options.get(k)
        ]
        if missing:
            pytest.skip(f"the command requires {missing}")
        args = ["verify-vsa", str(attestation), "--key", str(DATA / options["public_key_path"])]
        args += ["--subject-digest", *options["subject_digests"]]
        args += ["--verifier-id", options["verifier_id"], "--resource-uri", options["resource_uri"]]
        if options.get("verified_levels"):
            args += ["--level", *options["verified_levels"]]
        assert cli(*args) == _library_vsa(attestation, options)
        return
    policy = _policy_file(tmp_path, kind, options)
    attestation = DATA / data["provenance"]
    if data.get("image_digest"):
        artifacts = [data["image_digest"]]
    else:
        artifacts = [f"sha256:{a['sha256']}" for a in data.get("artifacts") or []]
    if not artifacts:
        pytest.skip("no artifact digest recorded")
    args = ["verify", *artifacts, "--attestation", str(attestation), "--policy", str(policy)]
    assert cli(*args) == _library_verify(policy, artifacts, attestation)
