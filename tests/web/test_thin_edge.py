"""The web edge stays thin: pages reach the models through selectors and services only,
which import-linter checks (the "web-no-models" contract) and this file proves it does."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.test_import_contracts import ROOT, copy_of_the_product, lint_imports

CONTRACT = "Pages query no model: they call selectors (reads) and services (writes)"
# The web app's own model (UnverifiedEmail) is kept by the one module that owns it.
OWN_MODEL_KEEPER = "verification.py"


def test_a_page_that_imports_a_model_breaks_the_contract_by_name(tmp_path):
    project = copy_of_the_product(tmp_path)
    (project / "web" / "model_probe.py").write_text(
        "from accounts.models import Account\nimport billing.models\n")

    report = (result := lint_imports(project)).stdout + result.stderr

    assert result.returncode != 0, report
    assert f"{CONTRACT} BROKEN" in report, report
    assert "web.model_probe -> accounts.models" in report, report
    assert "web.model_probe -> billing.models" in report, report


def test_no_web_module_queries_a_manager():
    """Without a models import there is no Model.objects either, except get_user_model()'s
    and the web app's own: neither appears outside the module that keeps web's model."""
    found = []
    for path in sorted((ROOT / "web").rglob("*.py")):
        if "migrations" in path.parts or path.name == OWN_MODEL_KEEPER:
            continue
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Attribute) and node.attr in {"objects", "_default_manager"}:
                found.append(f"{Path(path).relative_to(ROOT)}:{node.lineno}")
    assert not found, f"pages query models directly (call a selector instead): {found}"
