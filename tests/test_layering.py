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


ROOT = ENGINE.parent
DOORS = {"mcp_gateway", "api", "web"}
# What every door shares lives below them all: admission, the rate limiter, the client key.
SHARED_BY_THE_DOORS = ["echomem/admission.py", "echomem/ratelimit.py",
                       "echomem/client_address.py", "accounts/sign_in_names.py"]


def test_the_shared_admission_and_limits_import_no_door():
    offenders = {name: sorted(m for m in imported_modules(ROOT / name)
                              if m.split(".")[0] in DOORS)
                 for name in SHARED_BY_THE_DOORS}
    assert {name: found for name, found in offenders.items() if found} == {}


def test_the_web_imports_no_other_door_and_no_door_imports_the_web():
    offenders = {}
    for door in DOORS:
        others = {"mcp_gateway", "api"} if door == "web" else {"web"}
        for path in (ROOT / door).rglob("*.py"):
            found = sorted(m for m in imported_modules(path) if m.split(".")[0] in others)
            if found:
                offenders[str(path.relative_to(ROOT))] = found
    assert offenders == {}
