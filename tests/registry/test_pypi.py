"""`assay verify-pypi`: PEP 740 provenance recorded from PyPI's Integrity API, served on
loopback with the release's JSON API answer; every attestation against the digest and
the Trusted Publisher (GitHub and GitLab), online, then offline from the cache."""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.registry.recorded import Answer, Recorded, serve

from assay._cli import main

PYPI = Path(__file__).resolve().parents[1] / "assets" / "registry" / "pypi"
SAMPLE = "sampleproject-4.0.0.tar.gz"
SAMPLE_SHA256 = "0ace7980f82c5815ede4cd7bf9f6693684cec2ae47b9b7ade9add533b8627c6b"
GITLAB = "pep740_sampleproject-1.0.0.tar.gz"
GITLAB_SHA256 = "6cdd4a1a0a49aeef47265e7bf8ec1667257b397d34d731dc7b7af349deca1cd8"


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exit_:
            code = int(exit_.code or 0)
    return code, out.getvalue(), err.getvalue()


def _release(*files: tuple[str, str]) -> Answer:
    urls = [{"filename": f, "digests": {"sha256": d}} for f, d in files]
    return Answer(json.dumps({"urls": urls}).encode())


@pytest.fixture
def index() -> Iterator[Recorded]:
    recorded = Recorded(
        {
            "/pypi/sampleproject/4.0.0/json": _release((SAMPLE, SAMPLE_SHA256)),
            f"/integrity/sampleproject/4.0.0/{SAMPLE}/provenance": Answer(
                (PYPI / f"{SAMPLE}.provenance").read_bytes()
            ),
            "/pypi/pep740-sampleproject/1.0.0/json": _release((GITLAB, GITLAB_SHA256)),
            f"/integrity/pep740-sampleproject/1.0.0/{GITLAB}/provenance": Answer(
                (PYPI / "pep740-sampleproject-1.0.0.tar.gz.provenance").read_bytes()
            ),
            "/pypi/two/1.0/json": _release(
                (SAMPLE, SAMPLE_SHA256), ("two-1.0-py3-none-any.whl", "ab" * 32)
            ),
            f"/integrity/two/1.0/{SAMPLE}/provenance": Answer(
                (PYPI / f"{SAMPLE}.provenance").read_bytes()
            ),
        }
    )
    with serve(recorded) as running:
        yield running


def test_a_release_is_verified_from_the_index_then_offline(index: Recorded, tmp_path: Path) -> None:
    argv = [
        "verify-pypi",
        "sampleproject==4.0.0",
        "--repository",
        "pypa/sampleproject",
        "--workflow",
        "release.yml",
        "--index-url",
        index.url,
        "--cache-dir",
        str(tmp_path),
        "--json",
    ]
    code, out, err = run(argv)
    assert code == 0, err
    assert f"OK: {SAMPLE}: 1 attestation(s) verified" in err
    report = json.loads(out)
    assert set(report) == {"passed", "distributions"}
    assert report["passed"] is True
    distribution = report["distributions"][0]
    assert set(distribution) == {"distribution", "digest", "provenance", "passed", "attestations"}
    assert distribution["digest"] == {"sha256": SAMPLE_SHA256}
    attestation = distribution["attestations"][0]
    assert attestation["publisher"]["repository"] == "pypa/sampleproject"
    assert attestation["predicateType"] == "https://docs.pypi.org/attestations/publish/v1"
    requests = len(index.requests)
    code, _, err = run([*argv, "--offline"])
    assert code == 0, err
    assert len(index.requests) == requests


def test_a_gitlab_publisher_is_verified(index: Recorded, tmp_path: Path) -> None:
    code, _, err = run(
        [
            "verify-pypi",
            "pep740-sampleproject==1.0.0",
            "--repository",
            "pep740-example/sampleproject",
            "--workflow",
            ".gitlab-ci.yml",
            "--index-url",
            index.url,
            "--cache-dir",
            str(tmp_path),
        ]
    )
    assert code == 0, err


@pytest.mark.parametrize(
    ("flags", "reason"),
    [
        (["--repository", "pypa/other"], "certificate.sourceRepository: expected"),
        (
            ["--repository", "pypa/sampleproject", "--workflow", "publish.yml"],
            "certificate.san: expected 'https://github.com/pypa/sampleproject/.github/"
            "workflows/publish.yml@...'",
        ),
    ],
)
def test_another_publisher_fails(
    flags: list[str], reason: str, index: Recorded, tmp_path: Path
) -> None:
    code, _, err = run(
        [
            "verify-pypi",
            "sampleproject==4.0.0",
            *flags,
            "--index-url",
            index.url,
            "--cache-dir",
            str(tmp_path),
        ]
    )
    assert code == 1
    assert reason in err


def test_a_distribution_without_provenance_fails_the_release(
    index: Recorded, tmp_path: Path
) -> None:
    code, _, err = run(
        [
            "verify-pypi",
            "two==1.0",
            "--repository",
            "pypa/sampleproject",
            "--index-url",
            index.url,
            "--cache-dir",
            str(tmp_path),
        ]
    )
    assert code == 1
    assert f"OK: {SAMPLE}" in err
    assert "FAILED: two-1.0-py3-none-any.whl: no attestation" in err


def test_a_local_file_is_held_to_its_own_digest(tmp_path: Path) -> None:
    dist = tmp_path / SAMPLE
    dist.write_bytes(b"not the published sdist")
    code, _, err = run(
        [
            "verify-pypi",
            str(dist),
            "--repository",
            "pypa/sampleproject",
            "--provenance",
            str(PYPI / f"{SAMPLE}.provenance"),
        ]
    )
    assert code == 1
    digest = hashlib.sha256(dist.read_bytes()).hexdigest()
    assert f"subject.sha256: expected '{digest}'" in err


def test_a_single_attestation_of_sigstores_staging_instance_is_refused(tmp_path: Path) -> None:
    """rfc8785's wheel: one attestation file (no publisher record), logged in Sigstore's
    staging Rekor, which no shipped trusted root trusts: the signature check says so."""
    name = "rfc8785-0.1.2-py3-none-any.whl"
    dist = tmp_path / name
    dist.write_bytes(b"x")
    code, _, err = run(
        [
            "verify-pypi",
            str(dist),
            "--repository",
            "trailofbits/rfc8785.py",
            "--provenance",
            str(PYPI / f"{name}.publish.attestation"),
        ]
    )
    assert code == 1
    assert f"FAILED: {name}: signature: expected 'a verified Sigstore bundle'" in err


def test_a_malformed_release_argument_exit_2(tmp_path: Path) -> None:
    code, _, err = run(["verify-pypi", "sampleproject", "--repository", "a/b"])
    assert code == 2
    assert "DIST_FILE|NAME==VERSION: expected a file or NAME==VERSION" in err


def test_a_malformed_release_answer_exit_2_naming_the_url(tmp_path: Path) -> None:
    recorded = Recorded({"/pypi/broken/1.0/json": Answer(b'{"urls": [{"filename": "x"}]}')})
    with serve(recorded) as index:
        code, _, err = run(
            [
                "verify-pypi",
                "broken==1.0",
                "--repository",
                "a/b",
                "--index-url",
                index.url,
                "--cache-dir",
                str(tmp_path),
            ]
        )
    assert code == 2
    assert (
        f"{index.url}/pypi/broken/1.0/json: $.urls[0]: expected filename and digests.sha256" in err
    )
