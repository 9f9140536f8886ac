"""`echo-memory status`: the home, the database, the running server and what the box holds."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from echomem.commands.common import clean_errors, prepare


@click.command()
@clean_errors
def status() -> None:
    """Show the home, the database, the running server and what the box holds."""
    from echomem.home import echo_home

    home = echo_home()
    click.echo(f"home:      {home}")
    database_up = _say_database(home)
    _say_server(home, database_up)
    # A stopped embedded database stays stopped: the install is checked without it.
    prepare(start_database=database_up)
    if not _say_install(database_up):
        sys.exit(1)
    if database_up:
        _say_counts()


def _say_database(home: Path) -> bool:
    """Where the database is; whether it is up (DATABASE_URL's is taken to be)."""
    from echomem import embedded_db

    if os.environ.get("DATABASE_URL", "").strip():
        click.echo("database:  DATABASE_URL")
        return True
    pid = embedded_db.is_running(home)
    state = f"running (pid {pid})" if pid else "stopped"
    click.echo(f"database:  embedded PostgreSQL in {home / 'pgdata'}: {state}")
    return bool(pid)


def _say_server(home: Path, database_up: bool) -> None:
    import httpx

    from echomem.server import recorded_server

    server = recorded_server(home) if database_up else None
    if not server:
        click.echo("server:    not running (start it with `echo-memory serve`)")
        return
    url = f"http://{server['host']}:{server['port']}/healthz"
    try:
        healthy = httpx.get(url, timeout=3).status_code == 200
    except httpx.HTTPError:
        healthy = False
    click.echo(f"server:    pid {server['pid']} on {server['host']}:{server['port']} "
               f"({'healthy' if healthy else 'not answering'})")


def _say_install(database_up: bool) -> bool:
    """The install's checks (and the migrations, when the database is up); True if all hold."""
    from echomem import readiness

    parts = readiness.INSTALL_CHECKS
    if database_up:
        parts = (readiness.migrations, *parts)
    checks = readiness.run(parts)
    for check in checks:
        click.echo(f"{check.part + ':':<11}{'ok' if check.ok else 'MISSING'} ({check.detail})")
    return all(check.ok for check in checks)


def _say_counts() -> None:
    from accounts.models import Account, ApiKey
    from memories.models import Memory

    click.echo(f"accounts:  {Account.objects.count()}, memories: {Memory.objects.count()}, "
               f"active keys: {ApiKey.objects.filter(revoked_at__isnull=True).count()}")
