"""Protocol constants are defined once, in `assay.protocol`: no other module assigns one of
its strings at module level (a payload type, predicate type, statement type, bundle media
type, issuer), nor a table of digest hex lengths. A second definition is how the in-toto
payload type came to be spelled five times and the digest tables to drift apart."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from assay import protocol

SRC = Path(__file__).parent.parent / "src" / "assay"
HOME = SRC / "protocol.py"


def _protocol_strings() -> set[str]:
    found: set[str] = set()
    for name in dir(protocol):
        value = getattr(protocol, name)
        if name.isupper() and isinstance(value, str):
            found.add(value)
        elif name.isupper() and isinstance(value, tuple | frozenset | dict):
            found.update(item for item in value if isinstance(item, str) and "/" in item)
    return found


STRINGS = _protocol_strings()


def _module_level_values(tree: ast.Module) -> Iterator[ast.expr]:
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            yield node.value


def _is_digest_table(node: ast.AST) -> bool:
    """A dict literal giving a digest algorithm's hex length (`{"sha256": 64, …}`)."""
    if not isinstance(node, ast.Dict):
        return False
    return any(
        isinstance(key, ast.Constant)
        and key.value in protocol.DIGEST_HEX_LENGTHS
        and isinstance(value, ast.Constant)
        and value.value == protocol.DIGEST_HEX_LENGTHS[key.value]
        for key, value in zip(node.keys, node.values, strict=True)
    )


def _second_definitions(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for value in _module_level_values(tree):
        for node in ast.walk(value):
            if isinstance(node, ast.Constant) and node.value in STRINGS:
                found.append(f"{node.value!r} (line {node.lineno})")
            elif _is_digest_table(node):
                found.append(f"a digest hex-length table (line {node.lineno})")
    return found


def test_protocol_strings_are_found_by_the_test() -> None:
    # The test can fail: the strings it looks for are the protocol's own.
    assert protocol.PAYLOAD_TYPE_INTOTO in STRINGS
    assert protocol.PROVENANCE_V1 in STRINGS
    assert protocol.BUNDLE_V03_ALT in STRINGS
    assert _second_definitions(HOME)


def test_each_protocol_constant_is_defined_once() -> None:
    offenders = {
        str(path.relative_to(SRC)): found
        for path in sorted(SRC.rglob("*.py"))
        if path != HOME and (found := _second_definitions(path))
    }
    assert offenders == {}


def test_protocol_imports_nothing_of_assay() -> None:
    tree = ast.parse(HOME.read_text(encoding="utf-8"))
    imported = [
        node.module
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("assay")
    ] + [
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
        if alias.name.startswith("assay")
    ]
    assert imported == []
