"""The `echo-memory` command: set up, run and inspect a server."""

from __future__ import annotations

import getpass
import os
import shutil
import sys
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import Any

import click

from echomem.db import maintenance_process
from echomem.errors import ConfigurationError, EchoError

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
# How long a SIGTERM'd server lets in-flight requests finish before its workers are
# killed (docs/self-hosting.md, "Shutdown"); an orchestrator's own grace must be longer.
GRACEFUL_TIMEOUT_SECONDS = 30

host_option = click.option("--host", default=DEFAULT_HOST, show_default=True,
                           envvar="ECHO_MEMORY_HOST", help="Address to listen on.")
port_option = click.option("--port", default=DEFAULT_PORT, show_default=True,
                           type=click.IntRange(1, 65535), envvar="ECHO_MEMORY_PORT",
                           help="TCP port to listen on.")


def _clean_errors(command: Callable[..., Any]) -> Callable[..., Any]:
    """A problem the user can fix is one sentence on stderr and exit code 2, never a traceback."""

    @wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except EchoError as exc:
            fix = f"; {exc.fix}" if exc.fix else ""
            click.echo(f"echo-memory: {exc.message}{fix}", err=True)
            sys.exit(2)

    return wrapper


def _prepare(start_database: bool = True):
    from echomem.runtime import prepare

    return prepare(start_database=start_database)


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
    shown = "127.0.0.1" if host in {"0.0.0.0", "::", ""} else host
    shown = f"[{shown}]" if ":" in shown else shown
    return f"http://{shown}:{port}"


def _endpoint(host: str, port: int) -> str:
    return f"{_base_url(host, port)}/mcp"


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="echo-mem", prog_name="echo-memory")
def main() -> None:
    """Echo Memory: persistent memory for AI agents, served over MCP.

    Without DATABASE_URL, every command uses the embedded PostgreSQL (with pgvector)
    kept in $ECHO_MEMORY_HOME, starting it when needed and stopping it on exit.
    """


@main.command()
@host_option
@port_option
@click.option("--user", "username", envvar="ECHO_MEMORY_USER_ID",
              help="Owner account's user name  [default: your login name].")
@click.option("--new-key", is_flag=True, help="Issue a fresh API key even if one exists.")
@click.option("--no-serve", is_flag=True, help="Set everything up, print it, and exit.")
@_clean_errors
def quickstart(host: str, port: int, username: str | None, new_key: bool, no_serve: bool) -> None:
    """Start the database, migrate, create an owner, a `default` memory and a key, then serve.

    Runs without prompts. A second run reuses the account and its key (keys are
    shown once; pass --new-key for another).
    """
    from echomem.server import check_port_free, prepare_metrics_directory, serve

    if not no_serve:
        check_port_free(host, port)
        prepare_metrics_directory()
    runtime = _prepare()
    _migrate()
    _require_install()
    from memories.catalog.new_accounts import local_owner_ensure, quickstart_key

    username = username or _login_name()
    user, account, created = local_owner_ensure(username=username)
    key, plaintext = quickstart_key(account=account, holder=user, new=new_key)
    endpoint = _endpoint(host, port)
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
        shown_key = plaintext
    else:
        click.echo(f"  API key:   em_{key.prefix}_… (shown when it was created; "
                   "run with --new-key for a fresh one)")
        shown_key = "<your key>"
    click.echo("\nConnect Claude Code:")
    click.echo(f'  claude mcp add --transport http echo-memory {endpoint} '
               f'--header "Authorization: Bearer {shown_key}"')
    # The `memory` command finds this server by itself and keeps the key out of the
    # client's config (docs/coding-agents.md).
    click.echo("\nOr any coding agent (claude-code, cursor, codex, opencode, windsurf, "
               "claude-desktop), with the key read from your environment:")
    click.echo(f"  export ECHO_MEM_API_KEY={shown_key}")
    click.echo(f"  {_memory_command()} setup claude-code")
    from django.conf import settings

    from web.password_reset import sign_in_link

    click.echo(f"\nOpen the dashboard: set a password for {user.get_username()} and sign in "
               f"(the link works once, for {settings.PASSWORD_RESET_TIMEOUT // 3600} hours; "
               "run quickstart again for a fresh one):")
    click.echo(f"  {sign_in_link(user, _base_url(host, port))}")
    if no_serve:
        return
    click.echo(f"\nServing on http://{host}:{port}/ (Ctrl-C stops the server and the database).")
    _say_who_needs_no_key(host)
    sys.stdout.flush()
    serve(home=runtime.home, host=host, port=port, workers=1, threads=8,
          graceful_timeout=GRACEFUL_TIMEOUT_SECONDS)


@main.command(name="serve")
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
@_clean_errors
def serve_command(host: str, port: int, workers: int, threads: int,
                  graceful_timeout: int) -> None:
    """Serve the web app and the MCP endpoint.

    On the embedded database, pending migrations are applied first; with
    DATABASE_URL, run `echo-memory migrate` as a deploy step instead.
    """
    from echomem.server import check_port_free, prepare_metrics_directory, serve

    check_port_free(host, port)
    prepare_metrics_directory()
    runtime = _prepare()
    if runtime.embedded:
        _migrate()
    else:
        _refuse_pending_migrations()
    _require_install()
    click.echo(f"Serving on http://{host}:{port}/ ; MCP endpoint {_endpoint(host, port)}")
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


@main.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.pass_context
@_clean_errors
def migrate(ctx: click.Context) -> None:
    """Apply database migrations (extra arguments go to Django's migrate)."""
    maintenance_process()
    _prepare()
    from django.core.management import call_command

    call_command("migrate", *ctx.args, interactive=False)
    call_command("createcachetable")


@main.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.pass_context
@_clean_errors
def createsuperuser(ctx: click.Context) -> None:
    """Create an administrator (arguments go to Django's createsuperuser)."""
    _manage(["createsuperuser", *ctx.args])


@main.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.pass_context
@_clean_errors
def manage(ctx: click.Context) -> None:
    """Run any Django management command against this server's database."""
    _manage(ctx.args)


def _manage(argv: list[str]) -> None:
    maintenance_process()
    _prepare()
    from django.core.management import execute_from_command_line

    execute_from_command_line(["echo-memory manage", *argv])


@main.command()
@click.option("--concurrency", default=2, show_default=True, type=click.IntRange(1, 64),
              help="Worker processes.")
@click.option("--beat", "with_beat", is_flag=True,
              help="Also send the periodic tasks (as `echo-memory beat`): for a deployment "
                   "with this one worker only.")
@_clean_errors
def worker(concurrency: int, with_beat: bool) -> None:
    """Run a Celery worker (production: embeds new facts, housekeeping).

    Needs REDIS_URL (or CELERY_BROKER_URL). The single box embeds in process and
    needs no worker. A task is acknowledged when it has finished: a worker killed
    mid-batch loses nothing, the broker hands the batch out again.
    """
    _require_broker("worker")
    runtime = _prepare()
    from django.conf import settings

    from echomem.celery import app, log_like_the_web

    log_like_the_web()
    argv = [*_quiet(settings), "worker", "--loglevel=INFO", f"--concurrency={concurrency}"]
    if with_beat:
        argv += ["--beat", f"--schedule={_beat_schedule_file(runtime.home)}"]
    app.worker_main(argv)


@main.command()
@_clean_errors
def beat() -> None:
    """Run Celery beat: send the periodic tasks to the workers.

    Catch-up indexing of anything waiting (every minute), re-embedding after a model
    change (every 10 minutes; nothing to do otherwise), expiry of idle MCP sessions and
    sign-in sessions, of rate-limit rows and counters, and retries of failed Stripe
    events. Run exactly one beat per deployment (two would send everything twice,
    harmless but wasted); it keeps its schedule's state in $ECHO_MEMORY_HOME.
    """
    _require_broker("beat")
    runtime = _prepare()
    from django.conf import settings

    from echomem.celery import app, log_like_the_web

    log_like_the_web()
    app.start([*_quiet(settings), "beat", "--loglevel=INFO",
               f"--schedule={_beat_schedule_file(runtime.home)}"])


def _require_broker(command: str) -> None:
    if not (os.environ.get("CELERY_BROKER_URL") or os.environ.get("REDIS_URL")):
        raise ConfigurationError(
            f"the {command} needs a broker: set REDIS_URL (or CELERY_BROKER_URL); "
            "the single box embeds new facts in process and needs no worker."
        )


def _quiet(settings) -> list[str]:
    """With JSON logs, no start-up banner: every line out is one JSON object."""
    return ["--quiet"] if settings.LOG_FORMAT == "json" else []


def _beat_schedule_file(home: Path) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    return home / "celerybeat-schedule"


@main.command()
@_clean_errors
def index() -> None:
    """Embed and index every fact still waiting (after a bulk load, or in `manual` mode)."""
    maintenance_process()
    _prepare()
    from tqdm import tqdm

    from memories.search.indexing import index_pending, pending_count

    waiting = pending_count()
    with tqdm(total=waiting, unit="fact", desc="indexing", disable=not waiting) as bar:
        done = index_pending(progress=bar.update)
    click.echo(f"indexed {done} fact(s)")


@main.command()
@click.argument("path", type=click.Path(dir_okay=False, path_type=Path))
@_clean_errors
def backup(path: Path) -> None:
    """Write a consistent dump of the database to PATH (pg_dump, custom format).

    Safe while the server runs: the dump is one snapshot. PATH is replaced only once
    the dump is complete. Keep $ECHO_MEMORY_HOME/secret_key (or SECRET_KEY) beside it.
    """
    maintenance_process()
    runtime = _prepare()
    from echomem.backup import backup as dump

    size = dump(runtime.database_url, path)
    click.echo(f"backed up {_where(runtime)} to {path.expanduser().resolve()} "
               f"({size / 1e6:.1f} MB)")


@main.command()
@click.argument("path", type=click.Path(dir_okay=False, path_type=Path))
@_clean_errors
def restore(path: Path) -> None:
    """Restore a dump written by `echo-memory backup` into an empty database.

    The embedded database of a new $ECHO_MEMORY_HOME, or the new database DATABASE_URL
    names. Then: `echo-memory migrate` (a dump of an older version) and `audit verify`.
    """
    maintenance_process()
    runtime = _prepare()
    from echomem.backup import restore as load

    restored = load(runtime.database_url, path, where=_where(runtime))
    click.echo(f"restored {restored.tables} tables ({restored.accounts} account(s), "
               f"{restored.facts} fact(s)) into {_where(runtime)}")
    click.echo("next: `echo-memory migrate`, then `echo-memory audit verify`")


def _where(runtime) -> str:
    if runtime.embedded:
        return f"the embedded database in {runtime.home / 'pgdata'}"
    from echomem.runtime import redacted_url

    return f"DATABASE_URL={redacted_url(runtime.database_url)}"


@main.group()
def repair() -> None:
    """Repair stored data the server can no longer read back."""


@repair.command(name="dates")
@click.option("--account", "account_id", type=int, help="Only this account (its id).")
@click.option("--dry-run", is_flag=True, help="Report what would be repaired; change nothing.")
@_clean_errors
def repair_dates(account_id: int | None, dry_run: bool) -> None:
    """Clear unreadable fact dates (outside years 1..9999 UTC), which break every read.

    Only the unreadable date becomes null; the fact, its other date and the rest stay.
    Each repaired fact gets one audit event (`fact.date_repaired`, with the old value).
    Safe to run while the server is up, and again: a second run finds nothing.
    """
    maintenance_process()
    _prepare()
    from memories.erasure.repair import repair_unreadable_dates

    repairs = repair_unreadable_dates(account_id=account_id, dry_run=dry_run)
    verb = "would repair" if dry_run else "repaired"
    for done in repairs:
        click.echo(f"account {done.account_id} ({done.account_name}): "
                   f"{verb} {len(done.facts)} fact(s)")
        for fact in done.facts:
            dates = ", ".join(f"{name} {value}" for name, value in fact.before.items())
            click.echo(f"  fact {fact.fact_id} in {fact.memory_name} ({fact.partition}): "
                       f"{dates} -> null")
    total = sum(len(done.facts) for done in repairs)
    click.echo(f"total: {verb} {total} fact(s) in {len(repairs)} account(s)")


@main.group()
def audit() -> None:
    """Check the hash-chained audit log."""


@audit.command(name="verify")
@click.option("--account", "account_id", type=int, help="Only this account (its id).")
@_clean_errors
def audit_verify_command(account_id: int | None) -> None:
    """Verify every account's audit chain (or one); exit 1 if any chain is broken."""
    maintenance_process()
    _prepare()
    from tqdm import tqdm

    from accounts.audit_chains import audit_verify_accounts

    def track(accounts: list) -> Any:
        return tqdm(accounts, unit="account", desc="verifying", disable=len(accounts) < 2)

    chains = audit_verify_accounts(account_id, track=track)
    for chain in chains:
        state = "ok" if chain.ok else f"BROKEN at seq {chain.broken_seq}"
        click.echo(f"account {chain.account_id} ({chain.account_name}): {state}")
    broken = sum(not chain.ok for chain in chains)
    click.echo(f"{len(chains) - broken} of {len(chains)} chain(s) intact")
    if broken:
        sys.exit(1)


@main.command()
@_clean_errors
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
    _prepare(start_database=database_up)
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


def _login_name() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "owner"


def _agent_group() -> click.Group:
    from agent_cli.cli import main as agent_main

    # The same commands as `memory`: EchoVault's own `memory` may come first on PATH on
    # exactly the machines that import a vault, so this name always reaches ours.
    return click.Group(name="agent", commands=agent_main.commands,
                       help=agent_main.help, context_settings=agent_main.context_settings)


main.add_command(_agent_group())
