"""`assay attest provenance` and `assay attest run` end to end: written, then validated
with `attest validate --strict`, verified with `assay verify` under policies/assay-attest.yaml,
and parsed by in-toto's own library."""

from __future__ import annotations

import base64
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest
from tests.conftest import ASSETS

from assay.keys import generate_private_key

from .gitrepo import GIT_ENV, git, make_repo
from .independent import check_with_in_toto
from .test_ci import GITHUB

POLICY = Path(__file__).parents[2] / "policies" / "assay-attest.yaml"
CI_SWITCHES = ("GITHUB_ACTIONS", "GITLAB_CI", "BUILDKITE", "JENKINS_URL")


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in CI_SWITCHES:
        monkeypatch.delenv(name, raising=False)
    for name, value in GIT_ENV.items():
        monkeypatch.setenv(name, value)


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git checkout with a signing key pair and the shipped policy trusting its public key."""
    project = tmp_path / "widget"
    make_repo(project, remote="https://github.com/acme/widget.git")
    key = generate_private_key("ed25519")
    (tmp_path / "signing.key").write_bytes(key.to_pem())
    policy_dir = tmp_path / "policy"
    (policy_dir / "keys" / "assay-attest").mkdir(parents=True)
    shutil.copy(POLICY, policy_dir / "assay-attest.yaml")
    (policy_dir / "keys" / "assay-attest" / "provenance.pub").write_bytes(key.public_key().to_pem())
    monkeypatch.chdir(project)
    return tmp_path


def payload_of(envelope: Path) -> bytes:
    return base64.b64decode(orjson.loads(envelope.read_bytes())["payload"])


def test_run_then_validate_and_verify(
    workspace: Path, cli: Callable[..., int], capsys: pytest.CaptureFixture[str]
) -> None:
    out = workspace / "build.intoto.json"
    lock = ASSETS / "lockfiles" / "hello-world-javascript-action" / "package-lock.json"
    build = "import pathlib; p = pathlib.Path('dist'); p.mkdir(); (p / 'w.tgz').write_bytes(b'w'); (p / 'w.txt').write_text('notes')"
    code = cli(
        "attest", "run", "--builder-id", "https://ci.example/builders/release",
        "--subject", "dist/*.tgz", "dist/*.txt", "--from-lockfile", str(lock),
        "--key", str(workspace / "signing.key"), "--out", str(out),
        "--", sys.executable, "-c", build,
    )  # fmt: skip
    assert code == 0, capsys.readouterr().err
    assert "wrote provenance for 2 subject(s)" in capsys.readouterr().err
    statement = orjson.loads(payload_of(out))
    predicate = statement["predicate"]
    assert [s["name"] for s in statement["subject"]] == ["dist/w.tgz", "dist/w.txt"]
    assert predicate["buildDefinition"]["externalParameters"] == {
        "command": [sys.executable, "-c", build],
        "source": {"uri": "git+https://github.com/acme/widget@refs/heads/main"},
    }
    dependencies = predicate["buildDefinition"]["resolvedDependencies"]
    commit = git(workspace / "widget", "rev-parse", "HEAD")
    assert dependencies[0] == {
        "uri": "git+https://github.com/acme/widget@refs/heads/main",
        "digest": {"gitCommit": commit},
    }
    assert dependencies[1]["name"] == str(lock)
    assert dependencies[2]["uri"].startswith("pkg:npm/")
    assert "sha512" in dependencies[2]["digest"]
    metadata = predicate["runDetails"]["metadata"]
    assert metadata["invocationId"].startswith("urn:uuid:")
    assert metadata["startedOn"] <= metadata["finishedOn"]
    check_with_in_toto(payload_of(out))

    assert cli("attest", "validate", "--strict", str(out)) == 0
    policy = str(workspace / "policy" / "assay-attest.yaml")
    for artifact in ("dist/w.tgz", "dist/w.txt"):
        assert cli("verify", artifact, "--attestation", str(out), "--policy", policy) == 0
    # Another artifact, or the same provenance under a key the policy does not trust, fails.
    Path("other.bin").write_bytes(b"other")
    assert cli("verify", "other.bin", "--attestation", str(out), "--policy", policy) == 1
    (workspace / "policy" / "keys" / "assay-attest" / "provenance.pub").write_bytes(
        generate_private_key("ed25519").public_key().to_pem()
    )
    assert cli("verify", "dist/w.tgz", "--attestation", str(out), "--policy", policy) == 1


def test_run_in_github_actions_takes_builder_invocation_and_source_from_the_ci(
    workspace: Path,
    cli: Callable[..., int],
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> None:
    for name, value in GITHUB.items():
        monkeypatch.setenv(name, value)
    code = cli(
        "attest", "run", "--subject", "README",
        "--", sys.executable, "-c", "print('built')",
    )  # fmt: skip
    captured = capfd.readouterr()
    assert code == 0, captured.err
    # Without --out the statement is on stdout and the build's own output on stderr.
    assert "built" in captured.err
    statement = orjson.loads(captured.out)
    predicate = statement["predicate"]
    assert predicate["runDetails"]["builder"]["id"] == (
        "https://github.com/acme/widget/.github/workflows/release.yml@refs/tags/v1.2.0"
    )
    assert predicate["runDetails"]["metadata"]["invocationId"] == (
        "https://github.com/acme/widget/actions/runs/7403117312/attempts/2"
    )
    assert predicate["buildDefinition"]["internalParameters"] == {"ci": "github-actions"}
    assert predicate["buildDefinition"]["resolvedDependencies"][0] == {
        "uri": "git+https://github.com/acme/widget@refs/tags/v1.2.0",
        "digest": {"gitCommit": GITHUB["GITHUB_SHA"]},
    }
    check_with_in_toto(captured.out.encode())


def test_provenance_for_built_files(
    workspace: Path, cli: Callable[..., int], capsys: pytest.CaptureFixture[str]
) -> None:
    Path("widget.tgz").write_bytes(b"widget")
    out = workspace / "widget.intoto.json"
    lock = ASSETS / "lockfiles" / "sigstore-python" / "requirements.txt"
    code = cli(
        "attest", "provenance", "--subject", "widget.tgz", "README",
        "--builder-id", "https://ci.example/builders/release",
        "--build-type", "urn:assay:build-type:command:v1",
        "--external-parameter", "command=make dist",
        "--dependency", f"pkg:pypi/attrs@23.2.0@sha256:{'a' * 64}",
        "--from-git", "--from-lockfile", str(lock),
        "--started-on", "2026-03-01T12:00:00Z", "--finished-on", "2026-03-01T12:05:00+00:00",
        "--invocation-id", "https://ci.example/runs/17",
        "--key", str(workspace / "signing.key"), "--out", str(out),
    )  # fmt: skip
    assert code == 0, capsys.readouterr().err
    statement = orjson.loads(payload_of(out))
    definition = statement["predicate"]["buildDefinition"]
    assert definition["externalParameters"] == {"command": "make dist"}
    uris = [d.get("uri") for d in definition["resolvedDependencies"]]
    assert uris[0] == "git+https://github.com/acme/widget@refs/heads/main"
    assert uris[-1] == "pkg:pypi/attrs@23.2.0"
    assert "pkg:pypi/cryptography@45.0.6" in uris or any(
        u and u.startswith("pkg:pypi/cryptography@") for u in uris
    )
    assert statement["predicate"]["runDetails"]["metadata"] == {
        "invocationId": "https://ci.example/runs/17",
        "startedOn": "2026-03-01T12:00:00Z",
        "finishedOn": "2026-03-01T12:05:00Z",
    }
    check_with_in_toto(payload_of(out))
    assert cli("attest", "validate", "--strict", str(out)) == 0
    policy = str(workspace / "policy" / "assay-attest.yaml")
    assert cli("verify", "widget.tgz", "--attestation", str(out), "--policy", policy) == 0


def test_unsigned_provenance_to_stdout_validates(
    workspace: Path, cli: Callable[..., int], capsys: pytest.CaptureFixture[str]
) -> None:
    code = cli(
        "attest", "provenance", "--subject", "README",
        "--builder-id", "https://ci.example/b", "--build-type", "https://example.org/bt/v1",
        "--external-parameter", "target=linux",
    )  # fmt: skip
    captured = capsys.readouterr()
    assert code == 0, captured.err
    statement = orjson.loads(captured.out)
    # Without --finished-on: when the newest subject was written.
    assert statement["predicate"]["runDetails"]["metadata"]["finishedOn"].endswith("Z")
    Path("p.json").write_text(captured.out)
    assert cli("attest", "validate", "--strict", "p.json") == 0


def test_a_failing_build_writes_nothing(
    workspace: Path, cli: Callable[..., int], capsys: pytest.CaptureFixture[str]
) -> None:
    out = workspace / "never.json"
    code = cli(
        "attest", "run", "--builder-id", "https://ci.example/b", "--subject", "README",
        "--out", str(out), "--", sys.executable, "-c", "raise SystemExit(3)",
    )  # fmt: skip
    assert code == 1
    assert "exited with 3; no provenance written" in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (
            [
                "run",
                "--builder-id",
                "https://ci.example/b",
                "--subject",
                "nothing-*.bin",
                "--",
                sys.executable,
                "-c",
                "0",
            ],
            "expected files matching 'nothing-*.bin'",
        ),
        (
            ["run", "--subject", "README", "--", sys.executable, "-c", "0"],
            "--builder-id: expected a builder id",
        ),
        (
            ["run", "--builder-id", "https://ci.example/b", "--subject", "README"],
            "expected -- and then the build command",
        ),
        (
            [
                "run",
                "--builder-id",
                "https://ci.example/b",
                "--subject",
                "README",
                "--",
                "no-such-program-here",
            ],
            "found no program 'no-such-program-here'",
        ),
        (
            [
                "run",
                "--builder-id",
                "https://ci.example/b",
                "--subject",
                "README",
                "--from-lockfile",
                "missing.lock",
                "--",
                sys.executable,
                "-c",
                "0",
            ],
            "missing.lock: cannot read",
        ),
        (
            [
                "provenance",
                "--subject",
                "README",
                "--builder-id",
                "not a uri",
                "--build-type",
                "https://e.org/t",
                "--external-parameter",
                "a=b",
            ],
            "--builder-id: expected a URI",
        ),
        (
            [
                "provenance",
                "--subject",
                "README",
                "--builder-id",
                "https://e.org/b",
                "--build-type",
                "https://e.org/t",
            ],
            "--external-parameter",
        ),
        (
            [
                "provenance",
                "--subject",
                "missing.bin",
                "--builder-id",
                "https://e.org/b",
                "--build-type",
                "https://e.org/t",
                "--external-parameter",
                "a=b",
            ],
            "--subject: cannot read missing.bin",
        ),
        (
            [
                "provenance",
                "--subject",
                "README",
                "--builder-id",
                "https://e.org/b",
                "--build-type",
                "https://e.org/t",
                "--external-parameter",
                "a=b",
                "--started-on",
                "yesterday",
            ],
            "--started-on: expected an RFC 3339 time",
        ),
        (
            [
                "provenance",
                "--subject",
                "README",
                "--builder-id",
                "https://e.org/b",
                "--build-type",
                "https://e.org/t",
                "--external-parameter",
                "a=b",
                "--dependency",
                "nouri",
            ],
            "--dependency: expected URI",
        ),
        (
            [
                "provenance",
                "--subject",
                "README",
                "--builder-id",
                "https://e.org/b",
                "--build-type",
                "https://e.org/t",
                "--external-parameter",
                "a=b",
                "--key",
                "missing.key",
            ],
            "missing.key: cannot read",
        ),
    ],
)
def test_unusable_input_exits_2_with_a_message(
    workspace: Path,
    cli: Callable[..., int],
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    fragment: str,
) -> None:
    assert cli("attest", *argv) == 2
    err = capsys.readouterr().err
    assert fragment in err
    assert "Traceback" not in err


def test_a_bad_lock_file_is_named_with_its_line(
    workspace: Path, cli: Callable[..., int], capsys: pytest.CaptureFixture[str]
) -> None:
    Path("requirements.txt").write_text("attrs==23.2.0\nrequests>=2\n")
    code = cli(
        "attest", "provenance", "--subject", "README", "--builder-id", "https://e.org/b",
        "--build-type", "https://e.org/t", "--external-parameter", "a=b",
        "--from-lockfile", "requirements.txt",
    )  # fmt: skip
    assert code == 2
    assert "requirements.txt, line 2: expected a pinned requirement" in capsys.readouterr().err


def test_from_git_outside_a_checkout(
    tmp_path: Path,
    cli: Callable[..., int],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("a.bin").write_bytes(b"a")
    code = cli(
        "attest", "provenance", "--subject", "a.bin", "--builder-id", "https://e.org/b",
        "--build-type", "https://e.org/t", "--external-parameter", "a=b", "--from-git",
    )  # fmt: skip
    assert code == 2
    assert "expected a git work tree" in capsys.readouterr().err


def test_the_command_module_imports_only_argparse_at_start_up() -> None:
    import subprocess

    code = (
        "import sys, assay._cli.attest_provenance as m, argparse;"
        "print(sorted(n for n in sys.modules if n.startswith(('assay.provenance', 'assay.lockfiles', 'assay.dsse', 'cryptography', 'packaging', 'packageurl'))))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True, text=True)
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize("how", ["outside", "symlink-out", "symlink-dir-out", "glob-up"])
def test_subjects_outside_the_working_directory_are_refused_unless_allowed(
    workspace: Path, cli: Callable[..., int], capsys: pytest.CaptureFixture[str], how: str
) -> None:
    secret = workspace / "outside.txt"  # beside the checkout, not in it
    secret.write_text("not a build output")
    (workspace / "outside-dir").mkdir()
    (workspace / "outside-dir" / "x.bin").write_text("x")
    subject = {
        "outside": "../outside.txt",
        "symlink-out": "link.txt",
        "symlink-dir-out": "linked/x.bin",
        "glob-up": "../outside-dir/*.bin",
    }[how]
    Path("link.txt").symlink_to(secret)
    Path("linked").symlink_to(workspace / "outside-dir")
    for command in ("provenance", "run"):
        given = subject.replace("*", "x") if command == "provenance" else subject  # no globs
        argv = ["attest", command, "--subject", given, "--builder-id", "https://ci.example/b"]
        if command == "provenance":
            argv += ["--build-type", "https://example.org/bt/v1", "--external-parameter", "a=b"]
        else:
            argv += ["--", sys.executable, "-c", "pass"]
        code = cli(*argv)
        err = capsys.readouterr().err
        assert code == 2, (command, err)
        assert "--subject" in err
        assert "outside the working directory" in err
        assert "Traceback" not in err
        allowed = [*argv[:2], "--allow-outside-subjects", *argv[2:]]
        code = cli(*allowed)
        captured = capsys.readouterr()
        assert code == 0, (command, captured.err)


def test_a_symlink_inside_the_working_directory_is_a_subject(
    workspace: Path, cli: Callable[..., int], capsys: pytest.CaptureFixture[str]
) -> None:
    Path("dist").mkdir()
    Path("dist/w.tgz").write_bytes(b"w")
    Path("latest.tgz").symlink_to(Path("dist/w.tgz").resolve())
    code = cli(
        "attest", "provenance", "--subject", "latest.tgz",
        "--builder-id", "https://ci.example/b", "--build-type", "https://example.org/bt/v1",
        "--external-parameter", "a=b",
    )  # fmt: skip
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert orjson.loads(captured.out)["subject"][0]["name"] == "latest.tgz"


def test_external_parameters_are_required_as_the_help_says(
    workspace: Path, cli: Callable[..., int], capsys: pytest.CaptureFixture[str]
) -> None:
    # It was shown as optional and then failed with "expected a non-empty object".
    code = cli(
        "attest", "provenance", "--subject", "README", "--builder-id", "https://e.org/b",
        "--build-type", "https://e.org/t",
    )  # fmt: skip
    assert code == 2
    err = capsys.readouterr().err
    assert "--external-parameter" in err
    assert "required" in err
    assert "Traceback" not in err
