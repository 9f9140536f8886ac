"""The layers DESIGN.md promises are import-linter contracts ([tool.importlinter] in
pyproject.toml): the tree keeps them, and an arrow drawn against one breaks it by name."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PRODUCT = ["echomem", "accounts", "audit", "redaction", "memories", "billing", "tools",
           "mcp_gateway", "api", "web", "agent_cli", "oauth"]


def lint_imports(project: Path) -> subprocess.CompletedProcess[str]:
    """`lint-imports` on the project's pyproject.toml, with only that project on the path."""
    env = {**os.environ, "PYTHONPATH": str(project), "COLUMNS": "250", "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-c",
         "from importlinter.cli import lint_imports_command; lint_imports_command()",
         "--no-cache"],
        cwd=project, env=env, capture_output=True, text=True, timeout=120, check=False)


def test_the_tree_keeps_every_import_contract():
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def copy_of_the_product(into: Path) -> Path:
    """The product packages' Python source and the project's pyproject.toml, nothing else
    (no model files, templates or static files: the contracts read imports only)."""
    def not_source(folder: str, names: list[str]) -> list[str]:
        return [name for name in names
                if name in {"__pycache__", "embedding_model"}
                or (Path(folder, name).is_file() and not name.endswith(".py"))]

    for package in PRODUCT:
        shutil.copytree(ROOT / package, into / package, ignore=not_source, symlinks=True)
    shutil.copy(ROOT / "pyproject.toml", into / "pyproject.toml")
    return into


def test_an_arrow_against_a_contract_breaks_it_by_name(tmp_path):
    project = copy_of_the_product(tmp_path)
    # Arrows DESIGN.md forbids, against different contracts.
    (project / "memories" / "arrow_probe.py").write_text("from billing import rates\n")
    (project / "memories" / "contract_probe.py").write_text("from tools import registry\n")
    (project / "api" / "arrow_probe.py").write_text("from mcp_gateway import jsonrpc\n")
    (project / "accounts" / "arrow_probe.py").write_text("from memories.graph import services\n")
    (project / "audit" / "arrow_probe.py").write_text("from redaction import redactor\n")
    # A circle: the engine's bottom room importing a room that imports it.
    (project / "memories" / "core" / "circle_probe.py").write_text(
        "from memories.graph import services\n")
    (project / "agent_cli" / "arrow_probe.py").write_text("import memories.models\n")
    (project / "web" / "arrow_probe.py").write_text("from api import errors\n")

    result = lint_imports(project)
    report = result.stdout + result.stderr

    assert result.returncode != 0, report
    for contract, arrow in [
        ("The engine imports no door, no tool contract and not billing (billing installs its "
         "meter)", "memories.arrow_probe -> billing.rates"),
        ("The engine imports no door, no tool contract and not billing (billing installs its "
         "meter)", "memories.contract_probe -> tools.registry"),
        ("Doors above the tool contract above billing above the engine above tenancy above "
         "audit and redaction", "api.arrow_probe -> mcp_gateway.jsonrpc"),
        ("The memory command talks to the server over HTTP: no server app imported",
         "agent_cli.arrow_probe -> memories.models"),
        ("The web imports no other door", "web.arrow_probe -> api.errors"),
        ("Tenancy and audit import no engine (and neither billing nor a door)",
         "accounts.arrow_probe -> memories.graph.services"),
        ("Audit imports no other app of ours (echomem's utilities only)",
         "audit.arrow_probe -> redaction.redactor"),
        ("No import circle between sibling packages or modules",
         "- .core -> .graph"),
    ]:
        assert f"{contract} BROKEN" in report, report
        assert arrow in report, report
