"""Every package of the product is listed where it must be: in pyproject.toml's package list
(so the wheel carries it), among import-linter's root packages (so the contracts see its
arrows), and in the module-size and contract tests' product list."""

from __future__ import annotations

import tomllib
from fnmatch import fnmatch
from pathlib import Path

from tests.test_import_contracts import PRODUCT as CONTRACTS_PRODUCT
from tests.test_module_size import PRODUCT as SIZE_PRODUCT

ROOT = Path(__file__).resolve().parent.parent
NOT_PRODUCT = {"tests", "bench", "build_tools"}


def product_packages() -> set[str]:
    return {path.parent.name for path in ROOT.glob("*/__init__.py")} - NOT_PRODUCT


def test_every_package_is_packaged_linted_and_measured():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    patterns = config["tool"]["setuptools"]["packages"]["find"]["include"]
    packages = product_packages()
    assert {"tools", "audit", "redaction", "memories"} <= packages
    assert sorted(p for p in packages if not any(fnmatch(p, pattern) for pattern in patterns)) \
        == [], "add the package to [tool.setuptools.packages.find] include"
    assert set(config["tool"]["importlinter"]["root_packages"]) == packages
    assert set(CONTRACTS_PRODUCT) == packages
    assert set(SIZE_PRODUCT) == packages
