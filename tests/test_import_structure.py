"""The package's import structure: no module imports itself back through others, deferred
and type-only imports included (a circle held together by a deferred import turns into an
import-time failure when a cleanup moves it up); `sigstore/` is a leaf adapter that imports
nothing from `policy/` or `verify/`; `verify` and `nvd` never import each other."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

SRC = Path(__file__).parent.parent / "src"


def _modules() -> dict[str, Path]:
    found = {}
    for path in (SRC / "assay").rglob("*.py"):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _imported(name: str, path: Path) -> Iterator[str]:
    """Every assay module `name` imports, wherever the import statement stands."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            # `from package import module` imports the module; `from module import name`
            # the module.
            targets = [
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base
                for alias in node.names
            ]
        else:
            continue
        for target in targets:
            module = target
            while module and module not in MODULES:
                module = module.rpartition(".")[0]
            if module and module != name:
                yield module


GRAPH = {name: set(_imported(name, path)) for name, path in MODULES.items()}


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return groups


def test_no_import_circle() -> None:
    assert _circles(GRAPH) == []


def test_the_check_finds_a_circle() -> None:
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def _crossing(source: str, target: str) -> list[str]:
    return sorted(
        f"{name} imports {imported}"
        for name, imports in GRAPH.items()
        if name == source or name.startswith(source + ".")
        for imported in imports
        if imported == target or imported.startswith(target + ".")
    )


def test_sigstore_is_a_leaf_adapter() -> None:
    assert _crossing("assay.sigstore", "assay.policy") == []
    assert _crossing("assay.sigstore", "assay.verify") == []


def test_verify_and_nvd_meet_only_in_audit() -> None:
    assert _crossing("assay.verify", "assay.nvd") == []
    assert _crossing("assay.nvd", "assay.verify") == []


def _private_owner(module: str) -> str | None:
    """The package a `_`-prefixed module belongs to (None for a public module): the
    modules of that package, and of its subpackages, may import it; no other may."""
    parts = module.split(".")
    for index, part in enumerate(parts):
        if part.startswith("_") and not part.startswith("__"):
            return ".".join(parts[:index])
    return None


def _private_imports(graph: dict[str, set[str]]) -> list[str]:
    found = []
    for name, imports in graph.items():
        for target in imports:
            owner = _private_owner(target)
            if owner is not None and name != owner and not name.startswith(owner + "."):
                found.append(f"{name} imports {target}")
    return sorted(found)


def test_no_private_module_is_imported_from_outside_its_package() -> None:
    assert _private_imports(GRAPH) == []


def test_the_check_finds_a_private_import() -> None:
    graph = {
        "assay.web.pages": {"assay.nvd.storage._records"},
        "assay.nvd.storage.sqlite": {"assay.nvd.storage._records"},
        "assay._cli.serve": {"assay._json_strict", "assay._cli._tree"},
    }
    assert _private_imports(graph) == ["assay.web.pages imports assay.nvd.storage._records"]
