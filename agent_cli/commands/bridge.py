"""`memory mcp`: the stdio bridge, for clients that start local servers only."""

from __future__ import annotations

import sys

import click

from agent_cli import config


@click.command(name="mcp")
@click.option("--project", help="Project for calls that name none  [default: the name of the "
                                "git root the client starts this in; none outside git].")
def mcp_command(project: str | None) -> None:
    """Serve MCP on stdin/stdout, passing every tool to the configured endpoint (for clients
    that start local servers only, like Claude Desktop)."""
    from agent_cli.bridge import serve

    settings = config.resolve()
    if not settings.url:
        click.echo("memory mcp: no endpoint configured: set ECHO_MEM_URL or run "
                   "`memory config set --url URL`", err=True)
        sys.exit(2)
    serve(settings, project or config.git_project())
