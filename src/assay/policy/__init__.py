"""Verification policies: trusted signer/builder pairs and expectations on provenance.

    policy = load_policy("policies/slsa-github-generator-go.yaml")

The loader validates the whole file and names the JSON path of every problem
(`policy.yaml: $.signers[0].builders[1].pin: expected one of …, got 'tags'`).
"""

from assay.policy.loader import MAX_POLICY_BYTES, PolicyError, load_policy, parse_policy
from assay.policy.model import (
    DEFAULT_LEVEL,
    PROVENANCE_V01,
    PROVENANCE_V02,
    PROVENANCE_V1,
    VSA_V1,
    BuilderRule,
    DependencyRule,
    ParameterRules,
    Policy,
    Signer,
    SourceRule,
    VsaSigner,
)

__all__ = [
    "DEFAULT_LEVEL",
    "MAX_POLICY_BYTES",
    "PROVENANCE_V01",
    "PROVENANCE_V02",
    "PROVENANCE_V1",
    "VSA_V1",
    "BuilderRule",
    "DependencyRule",
    "ParameterRules",
    "Policy",
    "PolicyError",
    "Signer",
    "SourceRule",
    "VsaSigner",
    "load_policy",
    "parse_policy",
]
