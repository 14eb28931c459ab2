"""Agreement with slsa-verifier's own test expectations (tests/assets/verify/slsa-verifier).

For every CLI-level case: the example policy for the builder family (policies/), with
the case's flags (source, branch, tag, versioned tag, builder id, workflow inputs)
added as policy expectations, evaluated by assay.

- Google Cloud Build cases are signed with keys in the data: assay verifies them fully
  (signature included) and its verdict is compared with the expected pass/fail.
- GitHub Actions cases are signed through Sigstore: the checks that do not need it
  (builder, buildType, subject, source, refs, parameters) are compared. A case whose
  expected failure lies in the Sigstore material itself is counted as "needs Sigstore".
- VSA cases: assay's verify-vsa steps with the case's options.

Run `python tests/verify/agreement.py` to print the figures for docs/verification.md.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from assay.dsse import check_signatures
from assay.errors import AssayError
from assay.keys import load_public_key
from assay.policy import BuilderRule, Policy, SourceRule, load_policy
from assay.policy.refs import split_ref
from assay.verify import vsa as vsa_mod
from assay.verify.checks import builder_rule_matches, check_gcb_context, check_subject
from assay.verify.claims import parse_statement, read_claims
from assay.verify.inputs import read_attestations
from assay.verify.verifier import Artifact, evaluate, evaluate_unverified_claims

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "assets" / "verify" / "slsa-verifier"
POLICIES = ROOT / "policies"

# Failures that only the Sigstore material (certificate, transparency log) can show.
SIGSTORE_ONLY = {
    "ErrorInvalidSignature",
    "ErrorNoValidSignature",
    "ErrorMismatchCertificate",
    "ErrorInvalidCertificate",
    "ErrorRekorSearch",
    "ErrorNoValidRekorEntries",
    "ErrorInvalidRekorEntry",
    "ErrorMismatchSignature",
    "ErrorUnequalSignatures",
    "ErrorInvalidOIDCIssuer",
}

_FAMILIES = {
    "gha_go": "slsa-github-generator-go.yaml",
    "gha_generic": "slsa-github-generator-generic.yaml",
    "gha_container-based": "slsa-github-generator-container-based.yaml",
    "gha_delegator": "slsa-github-generator-delegator.yaml",
    "gha_maven": "slsa-github-generator-delegator.yaml",
    "gha_gradle": "slsa-github-generator-delegator.yaml",
}
_BUILD_TYPE_FAMILY = {
    "https://github.com/slsa-framework/slsa-github-generator/go@v1": "slsa-github-generator-go.yaml",
    "https://github.com/slsa-framework/slsa-github-generator/generic@v1": (
        "slsa-github-generator-generic.yaml"
    ),
}


@dataclass
class Outcome:
    case: str
    group: str
    expected: str
    got: str | None
    """'pass' or 'fail'; None when the case cannot be decided by this issue's means."""
    reason: str = ""

    @property
    def agrees(self) -> bool:
        return self.got == self.expected


@functools.cache
def _example_policy(name: str) -> Policy:
    return load_policy(POLICIES / name)


def _policy_for(name: str, options: dict[str, Any], builder_id: str | None) -> Policy:
    policy = _example_policy(name)
    source = policy.source
    inputs = {str(k): str(v) for k, v in (options.get("build_workflow_inputs") or {}).items()}
    source = SourceRule(
        repository=options.get("source_uri") or source.repository,
        branch=options.get("source_branch"),
        tag=options.get("source_tag"),
        versioned_tag=options.get("source_versioned_tag"),
        workflow_inputs=inputs,
    )
    signers = policy.signers
    if builder_id:
        signers = tuple(
            dataclasses.replace(s, builders=_narrow(s.builders, builder_id, name)) for s in signers
        )
    return dataclasses.replace(policy, source=source, signers=signers)


def _narrow(
    rules: tuple[BuilderRule, ...], builder_id: str, policy_name: str
) -> tuple[BuilderRule, ...]:
    """slsa-verifier's --builder-id: narrows the trusted set; for BYOB it names the TRW."""
    name, ref = split_ref(builder_id)
    versions = (ref.removeprefix("refs/tags/"),) if ref else ()
    if "delegator" in policy_name:
        return (BuilderRule(name, None, "release-tag", versions, (), 3),)
    narrowed = []
    for rule in rules:
        if rule.id != name and not (rule.id_pattern and rule.id_pattern.fullmatch(name)):
            continue
        if versions:
            if rule.pin == "version" and not set(versions) & set(rule.versions):
                continue
            if rule.pin == "none":
                continue
            narrowed.append(dataclasses.replace(rule, versions=versions))
        else:
            narrowed.append(rule)
    # An untrusted --builder-id leaves no rule: nothing can match.
    return tuple(narrowed) or (BuilderRule("(untrusted builder id)", None, "none", (), (), 0),)


# slsa-verifier's regression tests run with SLSA_VERIFIER_TESTING, which accepts
# builders at refs/heads/main (the e2e repositories); a policy says it by pinning that ref.
TESTING_BUILDER_REF = "refs/heads/main"


def _testing_mode(policy: Policy) -> Policy:
    signers = tuple(
        dataclasses.replace(
            s,
            builders=tuple(
                dataclasses.replace(r, pin="version", versions=(*r.versions, TESTING_BUILDER_REF))
                if r.pin == "release-tag"
                else r
                for r in s.builders
            ),
        )
        for s in policy.signers
    )
    return dataclasses.replace(policy, signers=signers)


def _artifacts(case: dict[str, Any]) -> list[Artifact]:
    image = case.get("image_digest") or (case.get("image_ref") or "").rpartition("@")[2]
    if image:
        algorithm, _, value = image.partition(":")
        return [Artifact(image, {algorithm: value})]
    return [
        Artifact(Path(a["path"]).name, {k: a[k] for k in ("sha256", "sha512") if a.get(k)})
        for a in case.get("artifacts") or []
    ]


def _gha(case: dict[str, Any]) -> Outcome:
    expected = case["expected"]
    outcome = Outcome(case["id"], "GitHub Actions (checks without Sigstore)", expected, None)
    path = DATA / case["provenance"]
    if not path.exists():
        outcome.reason = "provenance not in the test assets"
        return outcome
    if case.get("expected_error") in SIGSTORE_ONLY:
        outcome.group = "GitHub Actions (failure is in the Sigstore material)"
        outcome.reason = case["expected_error"]
        return outcome
    try:
        attestation = read_attestations(path.read_bytes(), case["provenance"])[0]
        claims = read_claims(parse_statement(attestation.envelope.payload))
    except AssayError as error:
        outcome.got = "fail"
        outcome.reason = str(error)
        return outcome
    family = (case.get("builder_dir") or case["provenance"].split("/")[1]).split("/")[0]
    policy_name = _FAMILIES.get(family) or _BUILD_TYPE_FAMILY.get(claims.build_type or "")
    if policy_name is None:
        outcome.reason = f"no example policy for builder {claims.builder_id}"
        return outcome
    verdicts = set()
    reasons = []
    for builder_id in case.get("builder_id_variants") or [None]:
        policy = _policy_for(policy_name, case.get("options") or {}, builder_id)
        if split_ref(claims.builder_id or "")[1] == TESTING_BUILDER_REF:
            policy = _testing_mode(policy)
        checks = evaluate_unverified_claims(claims, policy)[1:]
        checks += [_subject(claims, artifact) for artifact in _artifacts(case)]
        failed = [c for c in checks if not c.passed]
        verdicts.add("fail" if failed else "pass")
        reasons.extend(f"{c.name}: expected {c.expected!r}, found {c.found!r}" for c in failed[:1])
    outcome.got = verdicts.pop() if len(verdicts) == 1 else "mixed"
    outcome.reason = "; ".join(sorted(set(reasons)))
    return outcome


def _subject(claims: Any, artifact: Artifact) -> Any:
    from assay.verify.checks import check_subject

    return check_subject(claims, artifact.name, artifact.digest)


def _gcb(case: dict[str, Any]) -> Outcome:
    outcome = Outcome(case["id"], "Google Cloud Build (full verification)", case["expected"], None)
    verdicts = set()
    reasons = []
    for builder_id in case.get("builder_id_variants") or [None]:
        policy = _policy_for("gcb.yaml", case.get("options") or {}, builder_id)
        try:
            attestations = read_attestations(
                (DATA / case["provenance"]).read_bytes(), case["provenance"]
            )
        except AssayError as error:
            verdicts.add("fail")
            reasons.append(f"unusable input: {error}")
            continue
        report = evaluate(policy, _artifacts(case), attestations)
        verdicts.add("pass" if report.passed else "fail")
        if not report.passed:
            failures = [c for c in report.failures() if c.subject is None] or report.failures()
            if failures:
                reasons.append(
                    f"{failures[0].name}: expected {failures[0].expected!r}, found {failures[0].found!r}"
                )
    outcome.got = verdicts.pop() if len(verdicts) == 1 else "mixed"
    outcome.reason = "; ".join(sorted(set(reasons)))[:300]
    return outcome


def _vsa(case: dict[str, Any]) -> Outcome:
    outcome = Outcome(case["id"], "VSA (full verification)", case["expected"], None)
    options = case.get("options") or {}
    key = load_public_key((DATA / options["public_key_path"]).read_bytes())
    missing = [k for k in ("subject_digests", "verifier_id", "resource_uri") if not options.get(k)]
    if missing:
        # assay's verify-vsa requires these options; without them the input is unusable.
        outcome.got = "fail"
        outcome.reason = f"required options missing: {', '.join(missing)}"
        return outcome
    try:
        attestation = read_attestations(
            (DATA / case["attestation"]).read_bytes(), case["attestation"]
        )[0]
        result = vsa_mod.check_vsa(
            attestation.envelope,
            trusted={options["verifier_id"]: [key]},
            subject_digests=[tuple(d.split(":", 1)) for d in options["subject_digests"]],  # type: ignore[misc]
            verifier_id=options["verifier_id"],
            resource_uri=options["resource_uri"],
            levels=options.get("verified_levels") or [],
        )
    except AssayError as error:
        outcome.got = "fail"
        outcome.reason = str(error)
        return outcome
    outcome.got = "pass" if result.passed else "fail"
    return outcome


# slsa-verifier unit tests of single Cloud Build checks, and the assay checks that do
# the same job. The unit tests call one function on a payload without verifying its
# signature (except VerifySignature), so the claims are read unverified here too.
_GCB_UNIT_CHECKS: dict[str, tuple[str, ...]] = {
    "VerifySignature": ("signature",),
    "VerifySubjectDigest": ("subject",),
    "VerifySummary": ("gcb.imageSummary", "subject"),
    "VerifyMetadata": ("gcb.kind", "gcb.imageSummary", "subject"),
    "VerifyTextProvenance": ("gcb.textProvenance",),
    "VerifyBranch": ("source.branch",),
    "VerifyTag": ("source.tag",),
    "VerifyVersionedTag": ("source.versionedTag",),
    "VerifyBuilder": ("builder", "buildType", "externalParameters.@type"),
    "VerifySourceURI": ("source", "source.consistency"),
    "ProvenanceFromBytes": ("statement",),
}


def _gcb_unit(case: dict[str, Any]) -> Outcome:
    function = case["function_under_test"]
    outcome = Outcome(case["id"], "Google Cloud Build unit checks", case["expected"], None)
    params = case.get("params") or {}
    options: dict[str, Any] = {"source_uri": params.get("source")}
    if function == "VerifyBranch":
        options["source_branch"] = params.get("branch", "")
    if function == "VerifyTag":
        options["source_tag"] = params.get("tag", "")
    if function == "VerifyVersionedTag":
        options["source_versioned_tag"] = params.get("tag") or "v0.0.0-none"
    builder_id = params.get("builderID") or None
    if function == "VerifySourceURI":
        # Upstream reads the source format for the given builder version; a version the
        # policy does not trust fails, whatever the provenance's own builder is.
        rules = [r for s in _example_policy("gcb.yaml").signers for r in s.builders]
        if builder_id and not any(builder_rule_matches(r, builder_id) for r in rules):
            outcome.got = "fail"
            outcome.reason = f"builder id {builder_id} not trusted by the policy"
            return outcome
        builder_id = None
    policy = _policy_for("gcb.yaml", options, builder_id)
    wanted = _GCB_UNIT_CHECKS[function]
    try:
        attestations = read_attestations((DATA / case["file"]).read_bytes(), case["file"])
    except AssayError as error:
        outcome.got = "fail"
        outcome.reason = f"unusable input: {error}"
        return outcome
    # With version "versionV10" the upstream test reads the provenance v1 entry.
    want_v1 = params.get("version") == "versionV10"
    verdicts = []
    for attestation in attestations:
        if function == "VerifySignature":
            report = evaluate(policy, [], [attestation]).attestations[0]
            verdicts.append(report.checks[0].passed)
            continue
        try:
            statement = parse_statement(attestation.envelope.payload)
            claims = read_claims(statement)
        except AssayError:
            verdicts.append(False)
            continue
        if (claims.predicate_type == "https://slsa.dev/provenance/v1") != want_v1:
            continue
        checks = evaluate_unverified_claims(claims, policy)
        gcb = attestation.gcb
        if gcb is not None:
            if params.get("alter") and gcb.text is not None:
                # The upstream test alters the text provenance before comparing it.
                gcb = replace(gcb, text={**gcb.text, "predicateType": "altered"})
            checks += check_gcb_context(gcb, statement)
        if params.get("hash"):
            checks.append(check_subject(claims, "image", {"sha256": params["hash"]}))
        relevant = [c for c in checks if c.name.split("[")[0] in wanted]
        verdicts.append(bool(relevant) and all(c.passed for c in relevant))
    outcome.got = "pass" if any(verdicts) else "fail"
    return outcome


def _vsa_keyid(case: dict[str, Any]) -> Outcome:
    # slsa-verifier requires the envelope keyid to equal --public-key-id; in DSSE the
    # keyid is an unauthenticated hint, and assay (by design) tries every trusted key.
    outcome = Outcome(
        case["id"], "VSA signature with a key id (keyid is a hint in assay)", case["expected"], None
    )
    params = case["params"]
    key = load_public_key((DATA / params["public_key_path"]).read_bytes())
    attestation = read_attestations((DATA / case["file"]).read_bytes(), case["file"])[0]
    outcome.got = "pass" if check_signatures(attestation.envelope, [key]) else "fail"
    outcome.reason = f"keyid given: {params['public_key_id']!r}"
    return outcome


def outcomes() -> Iterator[Outcome]:
    cases = json.loads((DATA / "expectations.json").read_text())["cases"]
    for case in cases:
        command = case.get("command") or ""
        if command == "verify-artifact":
            yield _gha(case)
        elif command == "verify-image" and "Google Cloud KMS" in case.get("tlog_material", ""):
            yield _gcb(case)
        elif command == "verify-vsa":
            yield _vsa(case)
        elif case.get("function_under_test") in _GCB_UNIT_CHECKS and (DATA / case["file"]).exists():
            yield _gcb_unit(case)
        elif case.get("function_under_test") == "extractSignedVSA":
            yield _vsa_keyid(case)
        else:
            yield Outcome(
                case["id"],
                "not evaluated (npm, OCI container images, other unit-level)",
                case["expected"],
                None,
                command or case.get("function_under_test", ""),
            )


def summarize(results: list[Outcome]) -> dict[str, dict[str, int]]:
    table: dict[str, Counter[str]] = {}
    for result in results:
        counter = table.setdefault(result.group, Counter())
        counter["cases"] += 1
        if result.got is None:
            counter["undecided"] += 1
        elif result.agrees:
            counter["agree"] += 1
        else:
            counter["disagree"] += 1
    return {group: dict(counter) for group, counter in table.items()}


def main() -> int:
    results = list(outcomes())
    for group, counts in summarize(results).items():
        print(f"{group}: {counts}")
    if "-v" in sys.argv:
        for result in results:
            if result.got is not None and not result.agrees:
                print(result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
