"""What must work before a command says the server is ready, and before /readyz says a
running server is: one check per part.

`prepare()` (echomem/runtime.py) has already reached the database; the install checks
cover what an install can lack: migrations applied, the embedding model loading and
giving a vector, the page templates and static files the wheel should carry. Each
failure is one sentence with the command that fixes it. The serving checks (/readyz)
ask what a running process needs: the database answering, Redis answering where it is
configured, every migration applied, the embedding model loaded in this process.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings

from echomem.errors import ConfigurationError

logger = logging.getLogger(__name__)
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
    """The model loads and gives a vector, tried in a child process.

    `echo-memory serve` checks before it forks its web workers, and a process must not
    fork once ONNX Runtime is imported: the import starts a native thread that a forked
    child lacks, and the child then hangs or aborts (std::system_error) when it exits,
    which turned every SIGTERM of the server into a SIGABRT of its workers. A new
    interpreter (not a fork) tries the model and takes ONNX Runtime with it when it exits.
    """
    import os
    import subprocess
    import sys

    env = os.environ | {"PYTHONPATH": os.pathsep.join(path for path in sys.path if path)}
    # -P: the parent's path exactly, without the working directory in front of it.
    child = subprocess.run([sys.executable, "-P", "-c", _MODEL_SELF_TEST], env=env,
                           capture_output=True, text=True, check=False)
    if child.returncode == 0:
        return Check("model", True, child.stdout.strip().splitlines()[-1])
    if child.returncode == MODEL_MISSING:  # its sentence is the last line (after any warning)
        return Check("model", False, child.stderr.strip().splitlines()[-1])
    raise RuntimeError(f"the embedding model's self-test failed:\n{child.stderr.strip()}")


MODEL_MISSING = 3
_MODEL_SELF_TEST = f"""
import sys
from memories.search.embeddings import EmbeddingModelNotInstalled, int8_model, self_test
from memories.search import first_pass
try:
    # The first-pass table and the int8 copy too (memories/search/first_pass.py, embeddings.py):
    # built here once per machine, so that no write or query waits for them.
    print(f"{{self_test()}}; first-pass table at {{first_pass.ensure()}}; "
          f"int8 copy at {{int8_model()}}")
except EmbeddingModelNotInstalled as exc:
    print(exc, file=sys.stderr)
    sys.exit({MODEL_MISSING})
"""


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


def database() -> Check:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return Check("database", True, "answers")


# A probe that waits longer than this for Redis says Redis is not answering.
REDIS_TIMEOUT_SECONDS = 1.0


def redis() -> Check:
    import redis as redis_client

    client = redis_client.Redis.from_url(settings.REDIS_URL,
                                         socket_connect_timeout=REDIS_TIMEOUT_SECONDS,
                                         socket_timeout=REDIS_TIMEOUT_SECONDS)
    try:
        client.ping()
    finally:
        client.close()
    return Check("redis", True, "answers")


def embedder() -> Check:
    """The model this process embeds queries with: loaded on the first probe (a worker is
    not ready until it can answer a query by meaning), then only looked at."""
    from memories.search.embeddings import get_embedder

    return Check("embedder", True, f"loaded ({get_embedder().dimensions} dimensions)")


def serving_checks() -> tuple[Callable[[], Check], ...]:
    """What /readyz runs, in order; Redis only where REDIS_URL configures it."""
    return (database, *((redis,) if settings.REDIS_URL else ()), migrations, embedder)


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


def probe(checks: tuple[Callable[[], Check], ...]) -> list[Check]:
    """Run every check, turning a failure into a failed Check instead of raising.

    The reply of a public probe says which part failed, never the exception's text (it
    can name hosts and users); the log line, under the probe's request id, has it.
    """
    results: list[Check] = []
    for check in checks:
        part = check.__name__
        if part == "migrations" and results and not results[0].ok:
            results.append(Check(part, False, "not checked: the database does not answer"))
            continue
        try:
            results.append(check())
        except Exception as exc:
            # One line, no traceback: an unreachable dependency is not a fault of this code.
            logger.warning("readiness check %s failed: %s: %s", part, type(exc).__name__,
                           str(exc)[:300])
            results.append(Check(part, False, f"failed ({type(exc).__name__}); the server "
                                              "log has the details under this request id"))
    return results
