"""`memory setup`, `memory uninstall` and `memory project-header`: put Echo Memory into a
client's MCP config (after checking the endpoint), take it out again, and name the project
of the folder a client works in."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from agent_cli import clients, config, created_dirs
from agent_cli.commands.common import clean_errors
from agent_cli.config_change import Change, shown
from agent_cli.remote import Remote, RemoteError
from agent_cli.setup_plan import plan
from echomem.agent_clients import REMOTE_CLIENTS, SERVER_NAME
from echomem.request_context import PROJECT_HEADER

NOTE_TOOLS = ("memory_save", "memory_search", "memory_context", "memory_details")

client_argument = click.argument("client", type=click.Choice(clients.CLIENTS))
scope_option = click.option(
    "--project", "in_project", is_flag=True,
    help="Write the project's config (at the git root of the current directory) instead of "
         "your user config.")
name_option = click.option("--name", default=SERVER_NAME, show_default=True,
                           help="The name the client lists the server under.")


def _root(in_project: bool) -> Path | None:
    return config.project_root() if in_project else None


def _show(changes: list[Change]) -> None:
    for change in changes:
        click.echo(change.summary())


@click.command()
@client_argument
@scope_option
@click.option("--stdio", is_flag=True,
              help="Have the client start `memory mcp` (a local bridge) instead of reaching "
                   "the endpoint over HTTP. Claude Desktop always uses it.")
@name_option
@click.option("--no-check", is_flag=True,
              help="Write without checking the endpoint first (tools/list).")
@click.option("--dry-run", is_flag=True, help="Show the changes; write nothing, check nothing.")
@clean_errors
def setup(client: str, in_project: bool, stdio: bool, name: str, no_check: bool,
          dry_run: bool) -> None:
    """Check the endpoint (tools/list), then add Echo Memory to CLIENT's MCP config
    (idempotent; other entries, comments and formatting are kept byte for byte). A failed
    check writes nothing.

    Over HTTP the client sends `Authorization: Bearer $ECHO_MEM_API_KEY`, read from its own
    environment: the key is never written into its config. The project of each note comes
    from the config (--project), the folder the client works in (where its config can say
    so), or the folder it starts the bridge in (--stdio); setup says which.
    """
    settings = config.resolve()
    root = _root(in_project)
    stdio = stdio or client not in REMOTE_CLIENTS
    changes = plan(client, install=True, project_root=root, stdio=stdio, url=settings.url,
                   name=name)
    _show(changes)
    if dry_run:
        click.echo("(dry run: nothing written, nothing checked)")
        return
    names = None if no_check else _check(settings, root.name if root else None)
    for change in changes:
        change.apply()
    if client == "claude-desktop":
        click.echo("Claude Desktop starts only local servers: it runs the `memory mcp` bridge.")
    if client == "codex" and root:
        click.echo("note: Codex reads .codex/config.toml only in projects you have trusted.")
    click.echo(f"project: {clients.global_project_note(client, stdio)}" if root is None else
               f"project: every note saved through this entry names {root.name}, unless the "
               "agent passes another.")
    _advise_on_key(client, stdio, settings)
    if names is not None:
        click.echo(f"check: {settings.url} answers tools/list with {len(names)} tools "
                   f"({', '.join(names)}); restart the client to load them.")


def _advise_on_key(client: str, stdio: bool, settings: config.Settings) -> None:
    source = settings.source.get("key", "")
    if stdio and source.startswith("$"):
        click.echo(f"note: the bridge found the key in {source} here, but {clients.LABELS[client]}"
                   " may start it without your shell's environment: run `memory config set "
                   "--key -` so the bridge reads it from its own config file.")
    elif not stdio and not source.startswith("$"):
        click.echo(f"note: {clients.LABELS[client]} reads the key from ${config.KEY_ENV} when "
                   f"it starts: export {config.KEY_ENV}=em_... in the environment it starts "
                   "from (your shell profile), then restart it.")


def _check(settings: config.Settings, project: str | None) -> list[str]:
    """tools/list against the endpoint the client will use, before anything is written: a
    config that cannot connect is not a finished setup, so a failure writes nothing and
    exits 1 with one line saying why."""
    try:
        with Remote(settings, project=project) as remote:
            names = [tool["name"] for tool in remote.list_tools()]
        absent = [name for name in NOTE_TOOLS if name not in names]
        if absent:
            raise RemoteError(f"{settings.url} answers, but without the note tools "
                              f"({', '.join(absent)}): it is an older Echo Memory or another "
                              "MCP server; point ECHO_MEM_URL at an Echo Memory endpoint that "
                              "has them (upgrade the server)")
    except RemoteError as exc:
        reason = " ".join(str(exc).split())  # one line, whatever the server sent
        click.echo(f"memory: setup refused, nothing was written: {reason} (fix it and run "
                   "the same command again; --no-check writes without checking)", err=True)
        sys.exit(1)
    return names


@click.command()
@client_argument
@scope_option
@name_option
@clean_errors
def uninstall(client: str, in_project: bool, name: str) -> None:
    """Remove Echo Memory from CLIENT's MCP config (and, for Codex, the AGENTS.md block).

    A file setup did not change since gets back exactly the bytes it had before setup (a
    file setup created is deleted); a file that changed since loses our entry only. A
    symlinked config stays a symlink. A folder setup created and that is now empty goes;
    folders that were there before setup always stay."""
    changes = plan(client, install=False, project_root=_root(in_project), stdio=False,
                   url=None, name=name)
    _show(changes)
    for change in changes:
        change.apply()
    deleted = [c.target for c in changes if c.changed and c.after is None]
    for folder in created_dirs.tidy(deleted):
        click.echo(f"{shown(folder)}/: deleted (setup made it; it is empty now)")


@click.command(name="project-header")
def project_header() -> None:
    """Print this folder's project header as JSON: {"X-Echo-Project": "<git root's name>"},
    or {} outside a repository. A global Claude Code install runs it (headersHelper) when
    it connects, so each project's notes are filed under that project."""
    project = config.git_project()
    click.echo(json.dumps({PROJECT_HEADER: project} if project else {}))
