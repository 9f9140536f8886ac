"""`memory config show` and `memory config set`: the settings file, used when the
environment sets nothing."""

from __future__ import annotations

import sys

import click

from agent_cli import config


@click.group(name="config")
def config_group() -> None:
    """Show or change the settings file (used when the environment sets nothing)."""


@config_group.command(name="show")
def config_show() -> None:
    """Print the settings in force and where each one comes from (the key masked)."""
    settings = config.resolve()
    click.echo(f"file:     {config.config_path()}")
    for name in ("url", "key", "memory"):
        value = getattr(settings, name)
        if name == "key" and value:
            value = value[:16] + "…"
        where = settings.source.get(name)
        click.echo(f"{name + ':':<9} {value or '(not set)'}{f'  from {where}' if where else ''}")


@config_group.command(name="set")
@click.option("--url", help="The MCP endpoint, e.g. https://memory.example.com/mcp.")
@click.option("--key", help="The API key; '-' reads it from stdin (keeps it out of history).")
@click.option("--memory", help="The memory to use instead of the key's default.")
@click.option("--unset", multiple=True, type=click.Choice(["url", "key", "memory"]),
              help="Remove a setting (repeatable).")
def config_set(url: str | None, key: str | None, memory: str | None,
               unset: tuple[str, ...]) -> None:
    """Write settings to the config file (created with mode 0600)."""
    if key == "-":
        key = sys.stdin.readline().strip()
    updates: dict[str, str | None] = {name: None for name in unset}
    updates.update({k: v for k, v in (("url", url), ("key", key), ("memory", memory)) if v})
    if not updates:
        raise click.UsageError("give --url, --key, --memory or --unset")
    path = config.write_file(updates)
    click.echo(f"wrote {path}: {', '.join(sorted(updates))}")
