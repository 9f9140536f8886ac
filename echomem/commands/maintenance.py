"""The commands that work on the database as a maintenance process (no request time
limits): migrations and Django's own commands, indexing what waits, backup and restore,
repairs, and verifying the audit chains."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from echomem.commands.common import clean_errors, prepare
from echomem.db import maintenance_process


@click.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.pass_context
@clean_errors
def migrate(ctx: click.Context) -> None:
    """Apply database migrations (extra arguments go to Django's migrate)."""
    maintenance_process()
    prepare()
    from django.core.management import call_command

    call_command("migrate", *ctx.args, interactive=False)
    call_command("createcachetable")


@click.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.pass_context
@clean_errors
def createsuperuser(ctx: click.Context) -> None:
    """Create an administrator (arguments go to Django's createsuperuser)."""
    _manage(["createsuperuser", *ctx.args])


@click.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.pass_context
@clean_errors
def manage(ctx: click.Context) -> None:
    """Run any Django management command against this server's database."""
    _manage(ctx.args)


def _manage(argv: list[str]) -> None:
    maintenance_process()
    prepare()
    from django.core.management import execute_from_command_line

    execute_from_command_line(["echo-memory manage", *argv])


@click.command()
@clean_errors
def index() -> None:
    """Embed and index every fact still waiting (after a bulk load, or in `manual` mode)."""
    maintenance_process()
    prepare()
    from tqdm import tqdm

    from memories.search.indexing import index_pending, pending_count

    waiting = pending_count()
    with tqdm(total=waiting, unit="fact", desc="indexing", disable=not waiting) as bar:
        done = index_pending(progress=bar.update)
    click.echo(f"indexed {done} fact(s)")


@click.command()
@click.argument("path", type=click.Path(dir_okay=False, path_type=Path))
@clean_errors
def backup(path: Path) -> None:
    """Write a consistent dump of the database to PATH (pg_dump, custom format).

    Safe while the server runs: the dump is one snapshot. PATH is replaced only once
    the dump is complete. Keep $ECHO_MEMORY_HOME/secret_key (or SECRET_KEY) beside it.
    """
    maintenance_process()
    runtime = prepare()
    from echomem.backup import backup as dump

    size = dump(runtime.database_url, path)
    click.echo(f"backed up {_where(runtime)} to {path.expanduser().resolve()} "
               f"({size / 1e6:.1f} MB)")


@click.command()
@click.argument("path", type=click.Path(dir_okay=False, path_type=Path))
@clean_errors
def restore(path: Path) -> None:
    """Restore a dump written by `echo-memory backup` into an empty database.

    The embedded database of a new $ECHO_MEMORY_HOME, or the new database DATABASE_URL
    names. Then: `echo-memory migrate` (a dump of an older version) and `audit verify`.
    """
    maintenance_process()
    runtime = prepare()
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


@click.group()
def repair() -> None:
    """Repair stored data the server can no longer read back."""


@repair.command(name="dates")
@click.option("--account", "account_id", type=int, help="Only this account (its id).")
@click.option("--dry-run", is_flag=True, help="Report what would be repaired; change nothing.")
@clean_errors
def repair_dates(account_id: int | None, dry_run: bool) -> None:
    """Clear unreadable fact dates (outside years 1..9999 UTC), which break every read.

    Only the unreadable date becomes null; the fact, its other date and the rest stay.
    Each repaired fact gets one audit event (`fact.date_repaired`, with the old value).
    Safe to run while the server is up, and again: a second run finds nothing.
    """
    maintenance_process()
    prepare()
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


@click.group()
def audit() -> None:
    """Check the hash-chained audit log."""


@audit.command(name="verify")
@click.option("--account", "account_id", type=int, help="Only this account (its id).")
@clean_errors
def audit_verify_command(account_id: int | None) -> None:
    """Verify every account's audit chain (or one); exit 1 if any chain is broken."""
    maintenance_process()
    prepare()
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
