"""Verify provenance against a policy, resolve dependency levels, issue and check VSAs.

    from assay.policy import load_policy
    from assay.verify import Artifact, evaluate, read_attestations

    policy = load_policy("policies/gcb.yaml")
    attestations = read_attestations(open("provenance.json", "rb").read(), "provenance.json")
    report = evaluate(policy, [Artifact("image", {"sha256": "1a03…"})], attestations)
    report.passed, report.level, [c.to_dict() for c in report.failures()]

`evaluate` returns a report (every check with expected and found); `verify` raises
`VerificationError` on failure instead. Signatures are checked first, and only verified
payloads are parsed. Nothing here touches the network: inputs are bytes and objects.
"""

from assay.verify.checks import Check
from assay.verify.inputs import read_attestations
from assay.verify.levels import DependencyResult, Evidence, resolve_dependencies
from assay.verify.verifier import (
    Artifact,
    Attestation,
    AttestationReport,
    VerificationReport,
    evaluate,
    verify,
)
from assay.verify.vsa import VsaInput, VsaResult, build_vsa, check_vsa

__all__ = [
    "Artifact",
    "Attestation",
    "AttestationReport",
    "Check",
    "DependencyResult",
    "Evidence",
    "VerificationReport",
    "VsaInput",
    "VsaResult",
    "build_vsa",
    "check_vsa",
    "evaluate",
    "read_attestations",
    "resolve_dependencies",
    "verify",
]
