"""`verify-artifact` judges each artifact on its own: by its digests, never by its name.

The provenance is slsa-verifier's real test data (tests/assets/verify/slsa-verifier);
an artifact passes only when a verified statement names its digest as a subject, and
the verdict does not depend on the order of the artifacts or of the envelopes.
"""

from __future__ import annotations

import json
from itertools import permutations
from pathlib import Path

import pytest

from assay._cli import main
from assay.policy.slsa_github import Options
from assay.sigstore import BundleVerifier, default_roots
from assay.verify.artifact import verify_artifacts
from assay.verify.model import Artifact

CLI = Path(__file__).resolve().parents[1] / "assets" / "verify" / "slsa-verifier" / "cli"
GO = CLI / "gha_go" / "v2.1.0" / "binary-linux-amd64-workflow_dispatch.intoto.jsonl"
GO_SHA256 = "f6ab7ad0c7549b5a4942c3b0690519d791c28c4c0f8b286208cb40da3322a066"
MAVEN = CLI / "gha_maven" / "v2.1.0"
MAVEN_DISPATCH = MAVEN / "binary-linux-amd64-workflow_dispatch.build.slsa"
MAVEN_DISPATCH_SHA256 = "4e313a4cd3a7ffa7ef270dd8f65a98cce9c6286c25f5898998feaed73f3ffe92"
MAVEN_PUSH = MAVEN / "binary-linux-amd64-push-v14.build.slsa"
MAVEN_PUSH_SHA256 = "18a114f0a2d8031687d28e5514d7ababe54d641e08fd01d99f22c3f8745caf0a"
SOURCE = "github.com/slsa-framework/example-package"


@pytest.fixture(scope="module")
def verifier() -> BundleVerifier:
    return BundleVerifier(default_roots())


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        code = main(argv)
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _cli(artifacts: list[str], provenance: Path) -> list[str]:
    return [
        "verify-artifact",
        *artifacts,
        "--provenance-path",
        str(provenance),
        "--source-uri",
        SOURCE,
        "--json",
    ]


def test_a_file_named_like_an_attested_digest_is_not_covered_by_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # `evil/sha256:X` is a file whose content is not X: its name must not lend it X's coverage.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "evil").mkdir()
    (tmp_path / "evil" / f"sha256:{GO_SHA256}").write_bytes(b"not the attested binary")
    digest, evil = f"sha256:{GO_SHA256}", f"evil/sha256:{GO_SHA256}"
    for order in ([digest, evil], [evil, digest]):
        code, out, err = _run(_cli(order, GO), capsys)
        assert code == 1, (order, err)
        report = json.loads(out)
        assert report["passed"] is False
        verdicts = {a["name"]: a["passed"] for a in report["artifacts"]}
        assert verdicts == {digest: True, evil: False}, report["artifacts"]
        assert "FAILED" in err


def test_two_artifacts_with_the_same_name_are_each_checked_by_digest(
    verifier: BundleVerifier,
) -> None:
    data = GO.read_bytes()
    attested = Artifact("app", {"sha256": GO_SHA256})
    other = Artifact("app", {"sha256": "0" * 64})
    for artifacts in permutations([attested, other]):
        result = verify_artifacts(list(artifacts), data, str(GO), Options(SOURCE), verifier)
        assert not result.passed
        assert [r.passed for r in result.results] == [a is attested for a in artifacts]
        assert [r.artifact for r in result.results] == list(artifacts)
        assert [r.artifact for r in result.covered] == [attested]


def test_two_envelopes_each_covering_one_artifact_pass_in_any_order(
    tmp_path: Path, verifier: BundleVerifier, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = [json.dumps(json.loads(p.read_text())) for p in (MAVEN_DISPATCH, MAVEN_PUSH)]
    artifacts = [
        Artifact("one", {"sha256": MAVEN_DISPATCH_SHA256}),
        Artifact("two", {"sha256": MAVEN_PUSH_SHA256}),
    ]
    for envelopes in permutations(lines):
        provenance = tmp_path / "both.intoto.jsonl"
        provenance.write_text("\n".join(envelopes) + "\n")
        for order in permutations(artifacts):
            result = verify_artifacts(
                list(order), provenance.read_bytes(), "both", Options(SOURCE), verifier
            )
            assert result.passed, [c.to_dict() for c in result.failures()]
            assert all(e.passed for e in result.envelopes)
            assert [len(r.attestations) for r in result.results] == [1, 1]
        digests = [f"sha256:{a.digest['sha256']}" for a in artifacts]
        for order_ in permutations(digests):
            code, out, err = _run(_cli(list(order_), provenance), capsys)
            assert code == 0, err
            report = json.loads(out)
            assert [a["passed"] for a in report["artifacts"]] == [True, True]
            for envelope in report["envelopes"]:
                assert envelope["passed"] is True
                assert all(c["check"] != "subject" for c in envelope["checks"])


def test_each_artifact_reports_its_own_subject_checks(verifier: BundleVerifier) -> None:
    data = GO.read_bytes()
    good = Artifact(f"sha256:{GO_SHA256}", {"sha256": GO_SHA256})
    bad = Artifact("other", {"sha256": "1" * 64})
    result = verify_artifacts([bad, good], data, str(GO), Options(SOURCE), verifier)
    report = result.to_dict()
    assert [a["passed"] for a in report["artifacts"]] == [False, True]
    bad_checks = report["artifacts"][0]["checks"]
    assert [c["passed"] for c in bad_checks] == [False]
    assert bad_checks[0]["subject"] == "other"
    assert report["artifacts"][1]["provenance"] == [result.envelopes[0].name]
    assert result.envelopes[0].passed  # another artifact's miss is not the envelope's failure
    assert [c.name for c in result.failures()] == ["subject"]
