"""Sigstore identities as trusted signers: the shipped policies against real provenance.

Everything goes through `assay verify` (the command line, in-process). The valid cases
are slsa-verifier's expected passes for slsa-github-generator (Sigstore bundles, and
legacy `.intoto.jsonl` envelopes accepted with `--insecure-ignore-tlog`), gh's test
attestation, and npm provenance of the `sigstore` package; each policy is also shown to
refuse the same file when the repository, the workflow or the issuer it trusts differs.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from assay.policy import load_policy
from assay.verify import Artifact, Attestation, Verifier, read_attestations
from assay.verify.model import CertificateIdentity

ROOT = Path(__file__).resolve().parents[2]
ASSETS = ROOT / "tests" / "assets"
CORPUS = ASSETS / "verify" / "slsa-verifier"
POLICIES = ROOT / "policies"
EXAMPLE_SOURCE = "github.com/slsa-framework/example-package"
GITHUB_ISSUER = "https://token.actions.githubusercontent.com"

_FAMILIES = {
    "gha_go": "go",
    "gha_generic": "generic",
    "gha_container-based": "container-based",
    "gha_delegator": "delegator",
    "gha_maven": "delegator",
    "gha_gradle": "delegator",
}
# The delegator's own e2e TRW: upstream passes these with --builder-id naming it; a
# policy trusts it by listing it as a builder (as the shipped file's comment says).
_EXAMPLE_TRW = (
    "https://github.com/slsa-framework/example-trw/.github/workflows/builder_high-perms_slsa3.yml"
)

GH_ARTIFACT = ASSETS / "sigstore" / "github-cli" / "custom-issuer-artifact"
GH_BUNDLE = ASSETS / "sigstore" / "github-cli" / "custom-issuer.sigstore.json"
NPM_BUNDLE = ASSETS / "sigstore" / "github-cli" / "sigstore-js-2.1.0-bundle.json"
NPM_TWO_BUNDLES = ASSETS / "sigstore" / "github-cli" / "sigstore-js-2.1.0_with_2_bundles.jsonl"
NPM_DIGEST = (
    "sha512:90f223f992e4c88dd068cd2a5fc57f9d2b30798343dd6e38f29c240e04ba090e"
    "f831f84490847c4e82b9232c78e8a258463b1e55c0f7469f730265008fa6633f"
)
NPM_DOCUMENT = ASSETS / "verify" / "npm" / "provenance-npm-test-cli-v1-prega.tgz.json"
NPM_DOCUMENT_BAD = (
    ASSETS / "verify" / "npm" / "provenance-npm-test-cli-v1-prega-invalidsigprov.tgz.json"
)
NPM_DOCUMENT_DIGEST = (
    "sha512:f06fbf5c353cc0db093904b9cac0d53b412d83dff6b80e6047d9786708a38e5c3"
    "105cad4e913dfc22dbe8c999b3fe029d47969fe75406843b8163db6fd22f681"
)


def _valid_cases() -> list[Any]:
    """slsa-verifier's expected passes for the example repository, one per file."""
    corpus = json.loads((CORPUS / "expectations.json").read_text())
    seen: set[tuple[str, ...]] = set()
    cases = []
    for case in corpus["cases"]:
        if case.get("command") != "verify-artifact" or case["expected"] != "pass":
            continue
        directory = case.get("builder_dir") or "/".join(case["provenance"].split("/")[1:3])
        family = _FAMILIES.get(directory.split("/")[0])
        if family is None or (case.get("options") or {}).get("source_uri") != EXAMPLE_SOURCE:
            continue
        if directory == "gha_delegator/v1.9.0":
            # Signed by the delegator at refs/heads/main: upstream passes it only under
            # SLSA_VERIFIER_TESTING; a release-tag policy must refuse it (tested below).
            continue
        key = (case["provenance"], *(a["sha256"] for a in case["artifacts"]))
        if key in seen or not (CORPUS / case["provenance"]).exists():
            continue
        seen.add(key)
        cases.append(pytest.param(case, family, id=f"{case['id']}-{case['provenance']}"))
    return cases


VALID = _valid_cases()


def _legacy(case: dict[str, Any]) -> bool:
    """A legacy envelope (certificate, no log entry) rather than a Sigstore bundle."""
    first = (CORPUS / case["provenance"]).read_text().strip().splitlines()[0]
    return "payloadType" in json.loads(first)


def _argv(case: dict[str, Any], policy: str | Path, *extra: str) -> list[str]:
    argv = ["verify", *(f"sha256:{a['sha256']}" for a in case["artifacts"])]
    argv += ["--attestation", str(CORPUS / case["provenance"]), "--policy", str(policy)]
    if _legacy(case):
        argv.append("--insecure-ignore-tlog")  # no log entry to check offline
    return [*argv, "--json", *extra]


def _policy_with_trw(family: str, tmp_path: Path) -> Path:
    data = yaml.safe_load((POLICIES / f"slsa-github-generator-{family}.yaml").read_text())
    data["signers"][0]["builders"].append({"id": _EXAMPLE_TRW, "pin": "release-tag", "maxLevel": 3})
    path = tmp_path / "policy.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def _edited(name: str, tmp_path: Path, edit: Callable[[dict[str, Any]], None]) -> Path:
    data = yaml.safe_load((POLICIES / name).read_text())
    edit(data)
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data))
    return path


def test_the_corpus_has_valid_cases_for_every_github_builder_policy() -> None:
    families = {param.values[1] for param in VALID}
    assert families == {"go", "generic", "container-based", "delegator"}
    assert len(VALID) == 105


@pytest.mark.parametrize(("case", "family"), VALID)
def test_shipped_slsa_github_generator_policy_passes_a_real_valid_case(
    cli: Callable[..., int],
    case: dict[str, Any],
    family: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    policy: str | Path = f"builtin:slsa-github-generator-{family}"
    if "example-trw" in json.dumps(case.get("builder_id_variants")):
        policy = _policy_with_trw(family, tmp_path)
    code = cli(*_argv(case, policy))
    out = capsys.readouterr()
    report = json.loads(out.out)
    assert code == 0, [c for a in report["attestations"] for c in a["checks"] if not c["passed"]]
    assert report["level"] == 3
    passing = [a for a in report["attestations"] if a["passed"]]
    assert passing
    assert all(a["signedBy"] == ["github-actions-oidc"] for a in passing)
    identity = passing[0]["certificate"]["identity"]
    assert identity["issuer"] == GITHUB_ISSUER
    legacy = _legacy(case)
    proof = passing[0]["certificate"]["transparencyLog"]["proof"]
    assert proof == ("waived" if legacy else "inclusion-proof")
    assert report["transparencyLogWaived"] is legacy
    assert ("WARNING" in out.err) is legacy


@pytest.mark.parametrize("family", ["container-based", "delegator", "go", "generic"])
@pytest.mark.parametrize(
    "change",
    [
        ("repository", "identity.sourceRepository"),
        ("workflow", "identity.subject"),
        ("issuer", "identity.issuer"),
    ],
)
def test_a_wrong_repository_workflow_or_issuer_is_refused(
    cli: Callable[..., int],
    family: str,
    change: tuple[str, str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    case = next(p.values[0] for p in VALID if p.values[1] == family)
    what, failed = change

    def edit(data: dict[str, Any]) -> None:
        identity = data["signers"][0]["identity"]
        if what == "repository":
            identity["sourceRepository"] = "https://github.com/slsa-framework/other-package"
        elif what == "workflow":
            identity["subjectPattern"] = identity["subjectPattern"].replace(
                "slsa-github-generator/", "slsa-github-generator-fork/"
            )
        else:
            identity["issuer"] = "https://token.actions.githubusercontent.com/other-tenant"

    policy = _edited(f"slsa-github-generator-{family}.yaml", tmp_path, edit)
    if "example-trw" in json.dumps(case.get("builder_id_variants")):
        trw = yaml.safe_load(policy.read_text())
        trw["signers"][0]["builders"].append({"id": _EXAMPLE_TRW, "pin": "release-tag"})
        policy.write_text(yaml.safe_dump(trw))
    assert cli(*_argv(case, policy)) == 1
    report = json.loads(capsys.readouterr().out)
    signature = report["attestations"][0]["checks"][0]
    assert signature["check"] == "signature"
    assert not signature["passed"]
    assert f"{failed} expected" in signature["detail"]


def test_a_builder_at_a_branch_is_refused_by_a_release_tag_policy(
    cli: Callable[..., int], capsys: pytest.CaptureFixture[str]
) -> None:
    bundle = CORPUS / "cli/gha_delegator/v1.9.0/binary-linux-amd64-workflow_dispatch.build.slsa"
    digest = "sha256:5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"
    argv = ["verify", digest, "--attestation", str(bundle)]
    assert cli(*argv, "--policy", "builtin:slsa-github-generator-delegator") == 1
    assert "refs/heads/main" in capsys.readouterr().err


def test_a_legacy_envelope_needs_its_log_entry_or_an_explicit_waiver(
    cli: Callable[..., int], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    case = next(p.values[0] for p in VALID if p.values[1] == "generic" and _legacy(p.values[0]))
    argv = [a for a in _argv(case, "builtin:slsa-github-generator-generic") if a != "--json"]
    without = [a for a in argv if a != "--insecure-ignore-tlog"]
    assert cli(*without) == 1
    err = capsys.readouterr().err
    assert "legacy envelope carries no log proof" in err
    assert "--insecure-ignore-tlog" in err
    vsa = tmp_path / "vsa.json"
    issue = ["--vsa-out", str(vsa), "--verifier-id", "https://verifier.example/assay"]
    assert cli(*argv, *issue, "--resource-uri", "pkg:generic/example") == 0
    assert "WARNING: a Sigstore signature was accepted without" in capsys.readouterr().err
    levels = json.loads(vsa.read_text())["predicate"]["verifiedLevels"]
    assert levels == ["SLSA_BUILD_LEVEL_3", "ASSAY_TRANSPARENCY_LOG_WAIVED"]


def test_github_artifact_attestation_policy_passes_gh_s_real_attestation(
    cli: Callable[..., int], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["verify", str(GH_ARTIFACT), "--attestation", str(GH_BUNDLE), "--json"]
    assert cli(*argv, "--policy", "builtin:github-artifact-attestations") == 0
    report = json.loads(capsys.readouterr().out)
    assert report["level"] == 2
    identity = report["attestations"][0]["certificate"]["identity"]
    assert identity["runnerEnvironment"] == "github-hosted"
    assert report["transparencyLogWaived"] is False
    # Another artifact: the attestation is not about it.
    other = tmp_path / "other"
    other.write_bytes(b"not the artifact\n")
    assert (
        cli(
            "verify",
            str(other),
            "--attestation",
            str(GH_BUNDLE),
            "--policy",
            "builtin:github-artifact-attestations",
        )
        == 1
    )
    capsys.readouterr()


@pytest.mark.parametrize(
    "change",
    [
        ("sourceRepository", "https://github.com/too-legit/other", "identity.sourceRepository"),
        (
            "subjectPattern",
            "https://github\\.com/too-legit/attest/\\.github/workflows/release\\.yml@.+",
            "identity.subject",
        ),
        ("issuer", GITHUB_ISSUER, "identity.issuer"),
    ],
)
def test_github_artifact_attestation_policy_refuses_another_signer(
    cli: Callable[..., int],
    change: tuple[str, str, str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    key, value, failed = change

    def edit(data: dict[str, Any]) -> None:
        data["signers"][0]["identity"][key] = value

    policy = _edited("github-artifact-attestations.yaml", tmp_path, edit)
    argv = ["verify", str(GH_ARTIFACT), "--attestation", str(GH_BUNDLE), "--policy", str(policy)]
    assert cli(*argv) == 1
    assert f"{failed} expected" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("attestation", "digest"),
    [
        (NPM_BUNDLE, NPM_DIGEST),  # one provenance bundle
        (NPM_TWO_BUNDLES, NPM_DIGEST),  # JSON lines: provenance and publish attestation
        (NPM_DOCUMENT, NPM_DOCUMENT_DIGEST),  # the registry's attestations document
    ],
    ids=["bundle", "jsonl", "npm-attestations-document"],
)
def test_npm_provenance_policy_passes_real_npm_provenance(
    cli: Callable[..., int], attestation: Path, digest: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["verify", digest, "--attestation", str(attestation), "--json"]
    assert cli(*argv, "--policy", "builtin:npm-provenance") == 0
    report = json.loads(capsys.readouterr().out)
    assert report["level"] == 2
    passing = [a for a in report["attestations"] if a["passed"]]
    assert passing
    assert all(a["signedBy"] == ["github-actions-oidc"] for a in passing)
    assert passing[0]["certificate"]["identity"]["sourceRepositoryUri"] == (
        "https://github.com/sigstore/sigstore-js"
    )


def test_npm_provenance_with_a_bad_signature_is_refused(
    cli: Callable[..., int], capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["verify", NPM_DOCUMENT_DIGEST, "--attestation", str(NPM_DOCUMENT_BAD)]
    assert cli(*argv, "--policy", "builtin:npm-provenance") == 1
    assert "invalid signature" in capsys.readouterr().err


@pytest.mark.parametrize(
    "change",
    [
        (
            "sourceRepository",
            "https://github.com/sigstore/sigstore-python",
            "identity.sourceRepository",
        ),
        (
            "subjectPattern",
            "https://github\\.com/sigstore/sigstore-js/\\.github/workflows/ci\\.yml@.+",
            "identity.subject",
        ),
        ("issuer", "https://token.actions.githubusercontent.com/other-tenant", "identity.issuer"),
        ("runnerEnvironment", "self-hosted", "identity.runnerEnvironment"),
    ],
)
def test_npm_provenance_policy_refuses_another_signer(
    cli: Callable[..., int],
    change: tuple[str, str, str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    key, value, failed = change

    def edit(data: dict[str, Any]) -> None:
        data["signers"][0]["identity"][key] = value

    policy = _edited("npm-provenance.yaml", tmp_path, edit)
    argv = ["verify", NPM_DIGEST, "--attestation", str(NPM_BUNDLE), "--policy", str(policy)]
    assert cli(*argv) == 1
    assert f"{failed} expected" in capsys.readouterr().err


def test_an_identity_given_by_the_caller_is_never_trusted() -> None:
    # A key-less envelope with a made-up identity: the Verifier verifies certificates
    # itself and replaces whatever identity the caller put on the attestation.
    bundle = json.loads(NPM_BUNDLE.read_text())
    envelope_only = json.dumps(bundle["dsseEnvelope"]).encode()
    (attestation,) = read_attestations(envelope_only, "envelope.json")
    assert attestation.sigstore is None
    forged = Attestation(
        attestation.name,
        attestation.envelope,
        attestation.digest,
        identity=CertificateIdentity(
            san="https://github.com/sigstore/sigstore-js/.github/workflows/release.yml@refs/heads/main",
            issuer=GITHUB_ISSUER,
            source_repository_uri="https://github.com/sigstore/sigstore-js",
            runner_environment="github-hosted",
        ),
    )
    policy = load_policy(POLICIES / "npm-provenance.yaml")
    algorithm, value = NPM_DIGEST.split(":")
    report = Verifier(policy=policy).verify([Artifact("sigstore", {algorithm: value})], [forged])
    assert not report.passed
    assert "without a Sigstore certificate" in report.attestations[0].checks[0].detail
