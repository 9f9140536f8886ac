"""`memory import` and `memory export`: an EchoVault vault in, the server's notes out as one.

The vault modules (and YAML) are imported when a command runs, not when `memory` starts."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from agent_cli import config
from agent_cli.commands.common import clean_errors, connect, print_json
from agent_cli.remote import Remote, RemoteError

vault_memory_option = click.option(
    "--memory", help="Memory to use  [default: ECHO_MEM_MEMORY, else the key's].")


def _patient_remote(settings: config.Settings) -> Remote:
    """A Remote for long jobs: on the server's rate limit it waits, says so, and goes on."""
    def waiting(seconds: float) -> None:
        click.echo(f"\nrate limited by the server: waiting {seconds:g} s, then going on",
                   err=True)

    return connect(settings, on_rate_limit=waiting, wait_budget=None)


@click.command(name="import")
@click.option("--vault", "vault_path", type=click.Path(file_okay=False, path_type=Path),
              help="The EchoVault vault  [default: ~/.memory/vault].")
@click.option("--project", help="Only this project's folder  [default: every project].")
@vault_memory_option
@click.option("--dry-run", is_flag=True, help="Read the vault and say what would be sent; "
                                              "send nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON (for scripts).")
@clean_errors
def import_command(vault_path: Path | None, project: str | None, memory: str | None,
                   dry_run: bool, as_json: bool) -> None:
    """Import an EchoVault vault (<vault>/<project>/*.md) as notes, one memory_save each.

    Entries with the same project and title are one note and its history: they are saved
    oldest first, so the newest is the note and the others its earlier versions (an entry
    identical to the one before it is sent once). Importing the same vault again changes
    nothing (counted as unchanged). Secrets are redacted by the server before storing.
    """
    from agent_cli import vault_sync
    from agent_cli.vault import default_vault
    from agent_cli.vault_reader import read_vault

    root = vault_path or default_vault()
    if not root.is_dir():
        raise RemoteError(f"no vault at {root}: pass --vault PATH (the folder holding one "
                          "folder per project)")
    found = read_vault(root, project)
    for warning in found.warnings:
        click.echo(f"warning: {warning}", err=True)
    summary = vault_sync.ImportSummary()
    if not dry_run and found.notes:
        settings = config.resolve()
        with _patient_remote(settings) as remote, click.progressbar(
                length=len(found.notes), label="importing notes", file=sys.stderr) as bar:
            summary = vault_sync.import_notes(remote, found.notes,
                                              memory or settings.memory,
                                              step=lambda: bar.update(1))
    skipped = found.skipped + summary.refused
    report = {
        "vault": str(root), "files": found.files, "notes": len(found.notes),
        "dry_run": dry_run, "created": summary.counts["created"],
        "updated": summary.counts["updated"], "unchanged": summary.counts["unchanged"],
        "skipped": [{"where": s.where, "title": s.title, "reason": s.reason} for s in skipped],
        "redacted": summary.redacted, "warnings": found.warnings,
        "changed_on_import": [{"where": n.where, "title": n.title, "notes": n.notes}
                              for n in found.notes if n.notes],
    }
    if as_json:
        print_json(report)
    else:
        _print_import(report)
    if summary.refused:
        sys.exit(1)


def _print_import(report: dict[str, Any]) -> None:
    if report["dry_run"]:
        click.echo(f"dry run: {report['notes']} note(s) from {report['files']} file(s) in "
                   f"{report['vault']} would be sent; nothing was sent")
    else:
        click.echo(f"imported {report['notes']} note(s) from {report['files']} file(s): "
                   f"{report['created']} created, {report['updated']} updated, "
                   f"{report['unchanged']} unchanged")
    for change in report["changed_on_import"]:
        click.echo(f"  {change['where']} ({change['title']}): {'; '.join(change['notes'])}")
    click.echo(f"skipped {len(report['skipped'])}")
    for skip in report["skipped"]:
        click.echo(f"  {skip['where']} ({skip['title'] or 'untitled'}): {skip['reason']}")
    if report["redacted"]:
        click.echo(f"{report['redacted']} secret(s) were redacted by the server before "
                   "storing")


@click.command(name="export")
@click.option("--to", "target", type=click.Path(file_okay=False, path_type=Path),
              default=Path("echo-memory-vault"), show_default=True,
              help="Folder to write the vault into (one folder per project).")
@click.option("--project", help="Only this project  [default: every project].")
@vault_memory_option
@clean_errors
def export_command(target: Path, project: str | None, memory: str | None) -> None:
    """Write the server's notes as an EchoVault vault: <DIR>/<project>/<date>-session.md,
    one file per project and day, with EchoVault's front matter. A note's earlier versions
    are written too, each on the day it was saved, so that importing the vault gives the
    note back with its history."""
    from agent_cli import vault_sync
    from agent_cli.vault_writer import write_vault

    settings = config.resolve()
    memory = memory or settings.memory
    with _patient_remote(settings) as remote:
        listed = vault_sync.list_notes(remote, project, memory)
        notes = []
        with click.progressbar(listed, label="exporting notes", file=sys.stderr) as ids:
            for note_id in ids:
                notes.append(vault_sync.note_details(remote, note_id, memory))
    written = write_vault(target, notes)
    projects = {path.parent.name for path in written}
    click.echo(f"exported {len(notes)} note(s) of {len(projects)} project(s) into {target} "
               f"({len(written)} file(s))")
