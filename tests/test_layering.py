"""The layering DESIGN.md promises, checked on the source: the engine reports units and
never imports billing (billing installs its meter into the engine, not the other way)."""

from __future__ import annotations

import ast
from pathlib import Path

ENGINE = Path(__file__).resolve().parent.parent / "memories"


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


def test_the_engine_never_imports_billing_or_the_edges():
    offenders = {
        str(path.relative_to(ENGINE.parent)): sorted(
            module for module in imported_modules(path)
            if module.split(".")[0] in {"billing", "mcp_gateway", "api", "web"})
        for path in ENGINE.rglob("*.py")
    }
    assert {path: modules for path, modules in offenders.items() if modules} == {}
