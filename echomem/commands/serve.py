"""`echo-memory quickstart` and `echo-memory serve`: get the box ready (database,
migrations, an owner and a key for quickstart) and serve the web app and the MCP endpoint."""

from __future__ import annotations

import getpass
import os
import shutil
import sys
from pathlib import Path

import click

from echomem.commands.common import clean_errors, prepare
from echomem.errors import ConfigurationError

# Bound to loopback: only this machine reaches the box unless --host says otherwise.
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
# The addresses that are this machine (or every address of it): the box's own URL names
# them `localhost`, since a passkey's relying party must be a name, never an IP address.
THIS_MACHINE = {"127.0.0.1", "::1", "localhost", "0.0.0.0", "::", ""}
# How long a SIGTERM'd server lets in-flight requests finish before its workers are
# killed (docs/self-hosting.md, "Shutdown"); an orchestrator's own grace must be longer.
GRACEFUL_TIMEOUT_SECONDS = 30

host_option = click.option("--host", default=DEFAULT_HOST, show_default=True,
                           envvar="ECHO_MEMORY_HOST", help="Address to listen on.")
port_option = click.option("--port", default=DEFAULT_PORT, show_default=True,
                           type=click.IntRange(1, 65535), envvar="ECHO_MEMORY_PORT",
                           help="TCP port to listen on.")


def _migrate(verbosity: int = 0) -> None:
    from django.core.management import call_command

    from echomem.db import without_request_timeouts

    # A migration may rewrite a large table: the per-request limits are not for it.
    with without_request_timeouts():
        call_command("migrate", interactive=False, verbosity=verbosity)
        call_command("createcachetable", verbosity=verbosity)


def _base_url(host: str, port: int) -> str:
    from django.conf import settings

    if settings.PUBLIC_URL:
        return settings.PUBLIC_URL
    return _own_address(host, port)


def _own_address(host: str, port: int) -> str:
    shown = "localhost" if host in THIS_MACHINE else host
    shown = f"[{shown}]" if ":" in shown else shown
    return f"http://{shown}:{port}"


def _name_the_box(host: str, port: int) -> None:
    """Without ECHO_MEMORY_PUBLIC_URL, the box is named by the address it serves on: OAuth's
    issuer and resource (echomem/oauth_settings.py) are read from it when settings load, so
    a connector's discovery matches the URL it dialled, never a Host header."""
    if not os.environ.get("ECHO_MEMORY_PUBLIC_URL", "").strip():
        os.environ["ECHO_MEMORY_SERVED_AT"] = _own_address(host, port)


def _endpoint(host: str, port: int) -> str:
    return f"{_base_url(host, port)}/mcp"


@click.command()
@host_option
@port_option
@click.option("--user", "username", envvar="ECHO_MEMORY_USER_ID",
              help="Owner account's user name  [default: your login name].")
@click.option("--new-key", is_flag=True, help="Issue a fresh API key even if one exists.")
@click.option("--no-serve", is_flag=True, help="Set everything up, print it, and exit.")
@clean_errors
def quickstart(host: str, port: int, username: str | None, new_key: bool, no_serve: bool) -> None:
    """Start the database, migrate, create an owner, a `default` memory and a key, then serve.

    Runs without prompts. A second run reuses the account and its key (keys are
    shown once; pass --new-key for another).
    """
    from echomem.server import check_port_free, prepare_metrics_directory, serve

    if not no_serve:
        check_port_free(host, port)
        prepare_metrics_directory()
    _name_the_box(host, port)
    runtime = prepare()
    _migrate()
    _require_install()
    from memories.catalog.new_accounts import local_owner_ensure, quickstart_key

    username = username or _login_name()
    user, account, created = local_owner_ensure(username=username)
    key, plaintext = quickstart_key(account=account, holder=user, new=new_key)
    endpoint = _endpoint(host, port)
    shown_key = _say_what_is_set_up(runtime, created, user, account, endpoint, key, plaintext)
    _say_how_to_connect(endpoint, shown_key)
    _say_how_to_sign_in(user, _base_url(host, port))
    if no_serve:
        return
    click.echo(f"\nServing on {_base_url(host, port)}/ (listening on {host}:{port}; Ctrl-C "
               "stops the server and the database).")
    _say_who_needs_no_key(host)
    sys.stdout.flush()
    serve(home=runtime.home, host=host, port=port, workers=1, threads=8,
          graceful_timeout=GRACEFUL_TIMEOUT_SECONDS)


def _say_what_is_set_up(runtime, created: bool, user, account, endpoint: str, key,
                        plaintext: str | None) -> str:
    """Where everything is, and the key (in full only when it was just made); returns the key
    as the instructions that follow show it."""
    where = "embedded PostgreSQL in " + str(runtime.home / "pgdata") if runtime.embedded \
        else "DATABASE_URL"
    click.echo(f"Echo Memory {'is set up' if created else 'found your existing account'}.")
    click.echo(f"  home:      {runtime.home}")
    click.echo(f"  database:  {where}")
    click.echo(f"  account:   {account.name} (owner: {user.get_username()}), memory: default")
    click.echo(f"  endpoint:  {endpoint}")
    if plaintext:
        click.echo(f"  API key:   {plaintext}")
        click.echo("             (shown once: store it now)")
        return plaintext
    click.echo(f"  API key:   em_{key.prefix}_… (shown when it was created; "
               "run with --new-key for a fresh one)")
    return "<your key>"


def _say_how_to_connect(endpoint: str, shown_key: str) -> None:
    click.echo("\nConnect Claude Code:")
    click.echo(f'  claude mcp add --transport http echo-memory {endpoint} '
               f'--header "Authorization: Bearer {shown_key}"')
    # The `memory` command finds this server by itself and keeps the key out of the
    # client's config (docs/coding-agents.md).
    click.echo("\nOr any coding agent (claude-code, cursor, codex, opencode, windsurf, "
               "claude-desktop), with the key read from your environment:")
    click.echo(f"  export ECHO_MEM_API_KEY={shown_key}")
    click.echo(f"  {_memory_command()} setup claude-code")
    # Clients that speak MCP's OAuth need no key: they open the consent page (docs/connect.md).
    click.echo("\nOr sign in from the client, with no key (Claude Code, VS Code, Cursor; set a "
               "password first, below):")
    click.echo(f"  claude mcp add --transport http echo-memory {endpoint}   # then /mcp in "
               "Claude Code")


def _say_how_to_sign_in(user, base_url: str) -> None:
    from django.conf import settings

    from web.password_reset import sign_in_link

    click.echo(f"\nOpen the dashboard: set a password for {user.get_username()} and sign in "
               f"(the link works once, for {settings.PASSWORD_RESET_TIMEOUT // 3600} hours; "
               "run quickstart again for a fresh one):")
    click.echo(f"  {sign_in_link(user, base_url)}")


@click.command(name="serve")
@host_option
@port_option
@click.option("--workers", default=1, show_default=True, type=click.IntRange(1, 64),
              envvar="ECHO_MEMORY_WORKERS",
              help="Worker processes (any worker serves any session).")
@click.option("--threads", default=8, show_default=True, type=click.IntRange(1, 256),
              envvar="ECHO_MEMORY_THREADS", help="Threads per worker.")
@click.option("--graceful-timeout", default=GRACEFUL_TIMEOUT_SECONDS, show_default=True,
              type=click.IntRange(1, 3600), envvar="ECHO_MEMORY_GRACEFUL_TIMEOUT",
              help="Seconds a SIGTERM leaves in-flight requests to finish before workers "
                   "are killed.")
@clean_errors
def serve_command(host: str, port: int, workers: int, threads: int,
                  graceful_timeout: int) -> None:
    """Serve the web app and the MCP endpoint.

    On the embedded database, pending migrations are applied first; with
    DATABASE_URL, run `echo-memory migrate` as a deploy step instead.
    """
    from echomem.server import check_port_free, prepare_metrics_directory, serve

    check_port_free(host, port)
    prepare_metrics_directory()
    _name_the_box(host, port)
    runtime = prepare()
    if runtime.embedded:
        _migrate()
    else:
        _refuse_pending_migrations()
    _require_install()
    click.echo(f"Serving on {_base_url(host, port)}/ (listening on {host}:{port}); MCP "
               f"endpoint {_endpoint(host, port)}")
    _say_who_needs_no_key(host)
    sys.stdout.flush()
    serve(home=runtime.home, host=host, port=port, workers=workers, threads=threads,
          graceful_timeout=graceful_timeout)


def _memory_command() -> str:
    """`memory` as the person can run it: by path when it is not the one on PATH (a checkout's
    .venv/bin, or EchoVault's own `memory` first on PATH)."""
    beside = Path(sys.executable).parent / "memory"
    found = shutil.which("memory")
    if beside.exists() and (found is None or Path(found).resolve() != beside.resolve()):
        return str(beside)
    return "memory"


def _say_who_needs_no_key(host: str) -> None:
    """With ECHO_MEMORY_USER_ID, keyless requests act as that user: say from where."""
    from django.conf import settings

    if not (settings.SELF_HOSTED and settings.SELF_HOSTED_USER_ID):
        return
    who = (f"user {settings.SELF_HOSTED_USER_ID} "
           f"(agent {settings.SELF_HOSTED_AGENT_ID or 'agent'})")
    if settings.SELF_HOSTED_KEYLESS_REMOTE:
        click.echo(f"Requests without an API key act as {who} from ANY address "
                   "(ECHO_MEMORY_ALLOW_KEYLESS_REMOTE is set).")
        return
    click.echo(f"Requests without an API key act as {who} only from this machine; "
               "from other addresses they need a key.")
    if host not in {"127.0.0.1", "localhost", "::1"}:
        click.echo(f"  (listening on {host}: other machines can reach this server, and "
                   "must send a key)")


def _refuse_pending_migrations() -> None:
    from echomem import readiness

    if not readiness.migrations().ok:
        raise ConfigurationError(
            "the database at DATABASE_URL has unapplied migrations; "
            "run `echo-memory migrate` before serving."
        )


def _require_install() -> None:
    """The model, templates and static files: a wheel can lack them, so check before 'ready'."""
    from echomem import readiness

    readiness.require()


def _login_name() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "owner"
