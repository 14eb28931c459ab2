"""`assay completion bash|zsh|fish` and `assay man`: generated from the parser, complete,
and accepted by the shells and by groff where they are installed."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from assay._cli import build_parser
from assay._cli._tree import read

ROOT = read(build_parser())
COMMANDS = [command for command in ROOT.walk() if command.path]


def _output(cli: Callable[..., int], capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    capsys.readouterr()
    assert cli(*argv) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_every_command_and_option_is_offered(
    cli: Callable[..., int], capsys: pytest.CaptureFixture[str], shell: str
) -> None:
    script = _output(cli, capsys, "completion", shell)
    for command in COMMANDS:
        assert command.path[-1] in script, command.name
        for option in command.options:
            for flag in option.flags:
                name = flag.lstrip("-") if shell == "fish" else flag
                assert name in script, (command.name, flag)


def test_an_unknown_shell_is_a_usage_error(cli: Callable[..., int]) -> None:
    assert cli("completion", "tcsh") == 2


BASH_CASES = [
    (["assay", "at"], ["attest"]),
    (["assay", "attest", "va"], ["validate"]),
    (["assay", "attest", "schema", "--l"], ["--list"]),
    (["assay", "nvd", "import", "--b"], ["--bundled", "--batch-size"]),
    (["assay", "keys", "generate", "--type", "ed"], ["ed25519"]),
    (["assay", "completion", "f"], ["fish"]),
    (["assay", "verify", "dist/app", "--attestation", "a.json", "--po"], ["--policy"]),
]


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
@pytest.mark.parametrize(("words", "expected"), BASH_CASES)
def test_bash_completes(
    cli: Callable[..., int],
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    words: list[str],
    expected: list[str],
) -> None:
    script = tmp_path / "assay.bash"
    script.write_text(_output(cli, capsys, "completion", "bash"))
    quoted = " ".join(f"'{word}'" for word in words)
    program = (
        f"source {script}\n"
        f"COMP_WORDS=({quoted}); COMP_CWORD={len(words) - 1}; COMPREPLY=()\n"
        '_assay; printf "%s\\n" "${COMPREPLY[@]}"\n'
    )
    done = subprocess.run(
        ["bash", "--norc", "-c", program], capture_output=True, text=True, check=True
    )
    assert sorted(done.stdout.split()) == sorted(expected)
    assert done.stderr == ""


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_bash_offers_files_for_a_file_option(
    cli: Callable[..., int], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    script = tmp_path / "assay.bash"
    script.write_text(_output(cli, capsys, "completion", "bash"))
    (tmp_path / "policy.yaml").write_text("")
    program = (
        f"cd {tmp_path}; source {script}\n"
        "COMP_WORDS=(assay verify x --policy pol); COMP_CWORD=4; COMPREPLY=()\n"
        '_assay; printf "%s\\n" "${COMPREPLY[@]}"\n'
    )
    done = subprocess.run(
        ["bash", "--norc", "-c", program], capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == ["policy.yaml"]


@pytest.mark.parametrize("shell", ["zsh", "fish"])
def test_zsh_and_fish_scripts_parse(
    cli: Callable[..., int], capsys: pytest.CaptureFixture[str], tmp_path: Path, shell: str
) -> None:
    text = _output(cli, capsys, "completion", shell)
    if shell == "zsh":
        assert text.startswith("#compdef assay\n")
        assert "bashcompinit" in text
    else:
        lines = [line for line in text.splitlines() if line and not line.startswith("#")]
        assert all(line.startswith("complete -c assay ") for line in lines)
    if shutil.which(shell) is None:
        pytest.skip(f"{shell} is not installed: the script's syntax was not checked by it")
    script = tmp_path / f"assay.{shell}"
    script.write_text(text)
    subprocess.run([shell, "-n", str(script)], check=True)


def test_man_page_names_every_command_and_option(
    cli: Callable[..., int], capsys: pytest.CaptureFixture[str]
) -> None:
    page = _output(cli, capsys, "man")
    assert page.startswith(".TH ASSAY 1 ")
    for command in COMMANDS:
        if command.subcommands:
            continue
        assert f".SS {command.name.replace('-', chr(92) + '-')}" in page, command.name
        for option in command.options:
            if option.flags != ("-h", "--help"):
                assert option.flags[-1].replace("-", "\\-") in page, (command.name, option)


@pytest.mark.skipif(shutil.which("groff") is None, reason="needs groff")
def test_man_page_renders_without_warnings(tmp_path: Path) -> None:
    page = subprocess.run(
        [sys.executable, "-m", "assay", "man"], capture_output=True, text=True, check=True
    ).stdout
    source = tmp_path / "assay.1"
    source.write_text(page)
    done = subprocess.run(
        ["groff", "-man", "-Tutf8", "-ww", "-z", str(source)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stderr == ""
    text = subprocess.run(
        ["groff", "-man", "-Tutf8", str(source)], capture_output=True, text=True, check=True
    ).stdout
    text = re.sub(".\x08", "", text)  # bold and underline by overstriking
    assert "assay attest validate" in text
    assert "EXIT STATUS" in text
