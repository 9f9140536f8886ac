"""What must work before a command says the server is ready: one check per part.

`prepare()` (echomem/runtime.py) has already reached the database; these check what
an install can lack: migrations applied, the embedding model loading and giving a
vector, the page templates and static files the wheel should carry. Each failure is
one sentence with the command that fixes it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from echomem.errors import ConfigurationError

REINSTALL = ("reinstall Echo Memory from a complete wheel "
             "(`pip install --force-reinstall echo_mem-*.whl`)")
# One template and one static file of each source: ours, and Django's admin.
TEMPLATES = ("home.html", "base.html", "admin/login.html")
STATIC_FILES = ("echomem/favicon.svg", "admin/css/base.css")


@dataclass(frozen=True)
class Check:
    part: str
    ok: bool
    detail: str  # what was found, or on failure one sentence with the fix


def migrations() -> Check:
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    executor = MigrationExecutor(connection)
    pending = len(executor.migration_plan(executor.loader.graph.leaf_nodes()))
    if pending:
        return Check("migrations", False,
                     f"{pending} migration(s) are not applied; run `echo-memory migrate`")
    return Check("migrations", True, "up to date")


def model() -> Check:
    from memories.embeddings import EmbeddingModelNotInstalled, self_test

    try:
        return Check("model", True, self_test())
    except EmbeddingModelNotInstalled as exc:
        return Check("model", False, str(exc))


def templates() -> Check:
    from django.template import TemplateDoesNotExist
    from django.template.loader import get_template

    missing = []
    for name in TEMPLATES:
        try:
            get_template(name)
        except TemplateDoesNotExist:
            missing.append(name)
    if missing:
        return Check("templates", False,
                     f"the page templates {', '.join(missing)} are not installed; {REINSTALL}")
    return Check("templates", True, f"{len(TEMPLATES)} checked")


def static_files() -> Check:
    from django.contrib.staticfiles import finders

    missing = [name for name in STATIC_FILES if not finders.find(name)]
    if missing:
        return Check("static", False,
                     f"the static files {', '.join(missing)} are not installed; {REINSTALL}")
    return Check("static", True, f"{len(STATIC_FILES)} checked")


INSTALL_CHECKS: tuple[Callable[[], Check], ...] = (model, templates, static_files)


def run(checks: tuple[Callable[[], Check], ...] = INSTALL_CHECKS) -> list[Check]:
    return [check() for check in checks]


def require(checks: tuple[Callable[[], Check], ...] = INSTALL_CHECKS) -> list[Check]:
    """Run the checks; the first failure stops the command with its sentence."""
    results = run(checks)
    for result in results:
        if not result.ok:
            raise ConfigurationError(f"{result.part}: {result.detail}")
    return results
