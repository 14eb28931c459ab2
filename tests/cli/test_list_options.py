"""One convention for options taking several values: after one flag, or the flag repeated,
with the command's positionals before or after them."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assay._cli import CommandParser, add_list_option, build_parser

VALUE = st.text(alphabet="abcdefgh0123456789./", min_size=1, max_size=6)


def _parser() -> CommandParser:
    parser = CommandParser(prog="t")
    add_list_option(parser, "--key", required=True, metavar="PUB")
    parser.add_argument("--threshold", type=int, default=1)
    parser.add_argument("envelope")
    return parser


@settings(max_examples=60)
@given(
    groups=st.lists(st.lists(VALUE, min_size=1, max_size=3), min_size=1, max_size=3),
    envelope=VALUE,
    positional_first=st.booleans(),
    threshold_last=st.booleans(),
)
def test_every_spelling_gives_the_same_values(
    groups: list[list[str]], envelope: str, positional_first: bool, threshold_last: bool
) -> None:
    argv: list[str] = []
    for group in groups:
        argv += ["--key", *group]
    tail = ["--threshold", "2"]
    argv = [*argv, *tail] if threshold_last else [*tail, *argv]
    argv = [envelope, *argv] if positional_first else [*argv, envelope]
    args = _parser().parse_args(argv)
    assert args.key == [value for group in groups for value in group]
    assert args.envelope == envelope
    assert args.threshold == 2


def test_a_missing_positional_is_still_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    parser = CommandParser(prog="t")
    add_list_option(parser, "--key", required=True)
    parser.add_argument("envelope")
    with pytest.raises(SystemExit) as raised:
        parser.parse_args(["--key"])
    assert raised.value.code == 2
    assert "expected at least one argument" in capsys.readouterr().err


def _list_options(parser: argparse.ArgumentParser) -> list[tuple[str, argparse.Action]]:
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                found += _list_options(child)
        elif isinstance(action, (argparse._AppendAction, argparse._ExtendAction)):
            found.append((parser.prog, action))
    return found


def test_every_repeatable_option_of_every_command_follows_the_convention() -> None:
    options = _list_options(build_parser())
    assert options, "the commands have repeatable options"
    for prog, action in options:
        assert isinstance(action, argparse._ExtendAction), (prog, action.option_strings)
        assert action.nargs == "+", (prog, action.option_strings)
        assert getattr(action, "list_option", False), (prog, action.option_strings)


def test_verify_signature_takes_keys_both_ways(
    cli: Callable[..., int], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("a", "b"):
        assert cli("keys", "generate", "--type", "ed25519", "--out", str(tmp_path / name)) == 0
    statement = tmp_path / "s.json"
    statement.write_text('{"_type": "https://in-toto.io/Statement/v1"}')
    envelope = str(tmp_path / "e.json")
    a_key, b_key = str(tmp_path / "a.key"), str(tmp_path / "b.key")
    assert cli("attest", "sign", "--key", a_key, b_key, str(statement), "--out", envelope) == 0
    a_pub, b_pub = str(tmp_path / "a.pub"), str(tmp_path / "b.pub")
    for argv in (
        ["--key", a_pub, b_pub, "--threshold", "2", envelope],
        ["--key", a_pub, "--key", b_pub, "--threshold", "2", envelope],
        ["--threshold", "2", "--key", a_pub, b_pub, envelope],
        [envelope, "--key", a_pub, b_pub, "--threshold", "2"],
    ):
        capsys.readouterr()
        assert cli("attest", "verify-signature", *argv) == 0, argv
        assert "signed by 2 trusted key(s)" in capsys.readouterr().err
