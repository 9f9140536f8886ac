"""`echo-memory export` and `echo-memory import`: a memory (or a whole account) as the export
format (docs/export-format.md), on the box's own database, with a progress bar."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import IO

import click

from echomem.commands.common import clean_errors, prepare
from echomem.db import maintenance_process

ACCOUNT = click.option("--account", "account_id", type=int,
                       help="The account's id (default: ECHO_MEMORY_USER_ID's, or the box's "
                            "only account).")


@click.command(name="export")
@click.argument("memory", required=False)
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path),
              help="Write to this file (default: standard output). Replaced only once the "
                   "export is complete.")
@click.option("--vectors", is_flag=True, help="Include the vectors (identical search "
                                              "results after import on the same model).")
@click.option("--all", "every_memory", is_flag=True,
              help="Every memory of the account, one after another (a data-portability "
                   "export).")
@ACCOUNT
@clean_errors
def export_command(memory: str | None, output: Path | None, vectors: bool, every_memory: bool,
                   account_id: int | None) -> None:
    """Export MEMORY (JSON Lines: a header, its records, a trailer)."""
    if (memory is None) == (not every_memory):
        raise click.UsageError("name one MEMORY, or pass --all for every memory")
    maintenance_process()
    prepare()
    from tqdm import tqdm

    from accounts.operators import operator_principal
    from memories.portability.export import export_account, export_memory

    principal = operator_principal(account_id)
    lines = (export_account(principal=principal, include_vectors=vectors) if every_memory
             else export_memory(principal=principal, memory=memory, include_vectors=vectors))
    with _destination(output) as out, tqdm(unit=" lines", desc="exporting",
                                           disable=output is None) as bar:
        for line in lines:
            out.write(line.encode())
            bar.update()
    if output is not None:
        click.echo(f"exported {'every memory' if every_memory else memory} to {output}",
                   err=True)


class _destination:
    """The output file, written beside its final name and moved there only when complete
    (a failed export leaves no file that looks whole); or standard output."""

    def __init__(self, path: Path | None):
        self.path = path
        self.partial = path.with_name(path.name + ".partial") if path else None

    def __enter__(self) -> IO[bytes]:
        self.file = self.partial.open("wb") if self.partial else sys.stdout.buffer
        return self.file

    def __exit__(self, kind, error, trace) -> None:
        if self.partial is None:
            self.file.flush()
            return
        self.file.close()
        if kind is None:
            os.replace(self.partial, self.path)
        else:
            self.partial.unlink(missing_ok=True)


@click.command(name="import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--into", "memory", required=True, help="The memory to import into.")
@click.option("--create", is_flag=True, help="Make the memory first if the account has none "
                                             "of that name (undone if the import fails).")
@click.option("--dry-run", is_flag=True, help="Say what would change; write nothing.")
@ACCOUNT
@clean_errors
def import_command(file: Path, memory: str, create: bool, dry_run: bool,
                   account_id: int | None) -> None:
    """Import FILE, written by `echo-memory export`, into a memory: all of it or nothing.
    Importing a file again changes nothing."""
    maintenance_process()
    prepare()
    from django.db import transaction
    from tqdm import tqdm

    from accounts.operators import operator_principal
    from memories.portability.import_ import import_memory, memory_create_if_missing
    from memories.portability.reading import bounded_lines
    from memories.search.indexing import index_pending, pending_count

    principal = operator_principal(account_id)
    with file.open("rb") as counting:
        records = max(sum(1 for _ in bounded_lines(counting)) - 2, 0)
    # One transaction: a memory made by --create goes if the import is refused (or dry).
    with transaction.atomic(), file.open("rb") as stream, \
            tqdm(total=records, unit=" records",
                 desc="checking" if dry_run else "importing") as bar:
        if create:
            memory_made = memory_create_if_missing(principal=principal, name=memory)
        report = import_memory(principal=principal, memory=memory, dry_run=dry_run,
                               lines=bounded_lines(stream), progress=bar.update)
        if dry_run:
            transaction.set_rollback(True)
    if create and memory_made:
        click.echo(f"{'would make' if dry_run else 'made'} the memory {memory!r}")
    waiting = 0 if dry_run else pending_count()
    if waiting:
        with tqdm(total=waiting, unit=" facts", desc="embedding") as bar:
            index_pending(progress=bar.update)
    _say(report)


def _say(report) -> None:
    verb = "would import" if report.dry_run else "imported"
    click.echo(f"{verb} {report.source_memory!r} (box {report.source_box}) into "
               f"{report.memory!r}; vectors {report.vectors}")
    for kind, count in report.counts.items():
        click.echo(f"  {kind}: {count.created} created, {count.already_present} already "
                   f"present, {count.skipped} skipped")
    for reason in report.skipped_reasons:
        click.echo(f"  {reason}")
    if report.dry_run:
        click.echo("dry run: nothing was written")
    elif not report.changed:
        click.echo("nothing changed: everything in the file is here already")
