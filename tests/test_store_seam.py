"""Every read and write of a store goes through the store interface (issue: one store
seam): no module outside `assay.nvd.storage` imports a database driver, so none can open
a connection of its own behind the store's back (a replica-reading server would miss it)."""

from __future__ import annotations

import ast
from pathlib import Path

import assay

SOURCE = Path(assay.__file__).parent
STORAGE = SOURCE / "nvd" / "storage"
DRIVERS = ("sqlite3", "psycopg", "psycopg_pool")


def driver_imports(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        found += [f"{path.relative_to(SOURCE)}:{node.lineno} imports {name}"
                  for name in names if name.split(".")[0] in DRIVERS]  # fmt: skip
    return found


def test_only_the_storage_package_imports_a_database_driver() -> None:
    found = [
        line
        for path in sorted(SOURCE.rglob("*.py"))
        if STORAGE not in path.parents
        for line in driver_imports(path)
    ]
    assert found == []


def test_the_check_sees_a_driver_import() -> None:
    module = SOURCE / "nvd" / "server" / "bounds.py"
    assert driver_imports(module) == []
    assert driver_imports(STORAGE / "sqlite.py")  # (the check can fail)
