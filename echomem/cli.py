"""The `echo-memory` command: set up, run and inspect a server. Each group of subcommands is
a module of echomem.commands; this one puts them together, with `memory`'s as `agent`."""

from __future__ import annotations

import click

from echomem.commands import maintenance, portability, serve, status, workers


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="echo-mem", prog_name="echo-memory")
def main() -> None:
    """Echo Memory: persistent memory for AI agents, served over MCP.

    Without DATABASE_URL, every command uses the embedded PostgreSQL (with pgvector)
    kept in $ECHO_MEMORY_HOME, starting it when needed and stopping it on exit.
    """


for command in (serve.quickstart, serve.serve_command, maintenance.migrate,
                maintenance.createsuperuser, maintenance.manage, workers.worker, workers.beat,
                maintenance.index, maintenance.backup, maintenance.restore, maintenance.repair,
                maintenance.audit, portability.export_command,
                portability.import_command, status.status):
    main.add_command(command)


def _agent_group() -> click.Group:
    from agent_cli.cli import main as agent_main

    # The same commands as `memory`: EchoVault's own `memory` may come first on PATH on
    # exactly the machines that import a vault, so this name always reaches ours.
    return click.Group(name="agent", commands=agent_main.commands,
                       help=agent_main.help, context_settings=agent_main.context_settings)


main.add_command(_agent_group())
