"""`echo-memory status`: the home, the database, the running server and what the box holds."""

from __future__ import annotations

import os
import sys

import click

from echomem.commands.common import clean_errors, prepare


@click.command()
@clean_errors
def status() -> None:
    """Show the home, the database, the running server and what the box holds."""
    import httpx

    from echomem import embedded_db
    from echomem.home import echo_home
    from echomem.server import recorded_server

    home = echo_home()
    external = os.environ.get("DATABASE_URL", "").strip()
    click.echo(f"home:      {home}")
    database_up = True
    if external:
        click.echo("database:  DATABASE_URL")
    else:
        pid = embedded_db.is_running(home)
        state = f"running (pid {pid})" if pid else "stopped"
        click.echo(f"database:  embedded PostgreSQL in {home / 'pgdata'}: {state}")
        database_up = bool(pid)
    server = recorded_server(home) if database_up else None
    if server:
        url = f"http://{server['host']}:{server['port']}/healthz"
        try:
            healthy = httpx.get(url, timeout=3).status_code == 200
        except httpx.HTTPError:
            healthy = False
        click.echo(f"server:    pid {server['pid']} on {server['host']}:{server['port']} "
                   f"({'healthy' if healthy else 'not answering'})")
    else:
        click.echo("server:    not running (start it with `echo-memory serve`)")
    # A stopped embedded database stays stopped: the install is checked without it.
    prepare(start_database=database_up)
    from echomem import readiness

    parts = readiness.INSTALL_CHECKS
    if database_up:
        parts = (readiness.migrations, *parts)
    checks = readiness.run(parts)
    for check in checks:
        click.echo(f"{check.part + ':':<11}{'ok' if check.ok else 'MISSING'} ({check.detail})")
    if not all(check.ok for check in checks):
        sys.exit(1)
    if database_up:
        from accounts.models import Account, ApiKey
        from memories.models import Memory

        click.echo(f"accounts:  {Account.objects.count()}, memories: {Memory.objects.count()}, "
                   f"active keys: {ApiKey.objects.filter(revoked_at__isnull=True).count()}")
