"""Verify provenance against a policy, resolve dependency levels, issue and check VSAs.

    from assay.policy import load_policy
    from assay.verify import Artifact, Verifier, read_attestations

    policy = load_policy("policies/gcb.yaml")
    attestations = read_attestations(open("provenance.json", "rb").read(), "provenance.json")
    verifier = Verifier(policy=policy, evidence=dependency_attestations)
    report = verifier.verify([Artifact("image", {"sha256": "1a03…"})], attestations)
    report.passed, report.level, [c.to_dict() for c in report.failures()]

The `Verifier`'s report is the verdict: `passed` already counts the dependency levels
the policy asks for and every `DependencyCheck` handed to it; a command line only
formats it. `evaluate` is the same as a function; `verify` raises `VerificationError`
on failure instead. Signatures are checked first (keys, with the log entry of a bundle
signed with a key; or Sigstore certificates verified offline against `SigstoreTrust`
and matched to a policy's identity signers),
and only verified payloads are parsed. slsa-verifier's and gh's modes are built-in
policies (`assay.policy.builtin.ModePolicy`) that the same `Verifier` runs on signed
documents. Nothing here touches the network unless a
`SigstoreTrust.rekor` look-up is given: inputs are bytes and objects.
"""

from assay.results import Check
from assay.verify.certificates import CertificateResult, LogResult, SigstoreTrust
from assay.verify.dependency_check import (
    DependencyCheck,
    DependencyCheckInput,
    DependencyCheckResult,
    VerifiedDocument,
)
from assay.verify.inputs import read_attestations
from assay.verify.levels import DependencyResult, Evidence, resolve_dependencies
from assay.verify.model import Artifact, Attestation, CertificateIdentity, GcbMetadata
from assay.verify.modes import ModeReport, SignedDocument, SignedEvaluation
from assay.verify.signers import identity_matches, signer_signed, signers_that_signed
from assay.verify.verifier import (
    AttestationReport,
    VerificationReport,
    Verifier,
    evaluate,
    verify,
)
from assay.verify.vsa import VsaInput, VsaResult, accept_vsa, build_vsa, check_vsa

__all__ = [
    "Artifact",
    "Attestation",
    "AttestationReport",
    "CertificateIdentity",
    "CertificateResult",
    "Check",
    "DependencyCheck",
    "DependencyCheckInput",
    "DependencyCheckResult",
    "DependencyResult",
    "Evidence",
    "GcbMetadata",
    "LogResult",
    "ModeReport",
    "SignedDocument",
    "SignedEvaluation",
    "SigstoreTrust",
    "VerificationReport",
    "VerifiedDocument",
    "Verifier",
    "VsaInput",
    "VsaResult",
    "accept_vsa",
    "build_vsa",
    "check_vsa",
    "evaluate",
    "identity_matches",
    "read_attestations",
    "resolve_dependencies",
    "signer_signed",
    "signers_that_signed",
    "verify",
]
