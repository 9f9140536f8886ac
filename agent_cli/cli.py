"""The `memory` command (also `echo-memory agent`): wire coding agents to Echo Memory, and
read and write notes from a shell. Each group of subcommands is a module of
agent_cli.commands; this one puts them together."""

from __future__ import annotations

import click

from agent_cli.commands import bridge, notes, settings, setup, vault


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def main() -> None:
    """Echo Memory for coding agents: set up Claude Code, Cursor, Codex, OpenCode, Windsurf
    and Claude Desktop, and save or find notes (decisions, bugs, patterns) from a shell.

    The endpoint, key and memory come from ECHO_MEM_URL, ECHO_MEM_API_KEY and ECHO_MEM_MEMORY,
    else from `memory config set`, else (endpoint only) from the Echo Memory server running
    on this machine.
    """


for command in (setup.setup, setup.uninstall, setup.project_header,
                notes.save, notes.search, notes.context, notes.details, notes.delete,
                notes.outbox_command, vault.import_command, vault.export_command,
                bridge.mcp_command, settings.config_group):
    main.add_command(command)
