"""What every `memory` subcommand shares: clean errors, the --project and --json options, and
a connection that first sends the saves kept from earlier commands."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from functools import wraps
from typing import Any

import click

from agent_cli import clients, config, outbox
from agent_cli.remote import Remote, RemoteError, ToolError

CURRENT = "\0current"  # --project given without a value: this directory's project


def clean_errors(command: Callable[..., Any]) -> Callable[..., Any]:
    """A problem the person can fix is a sentence on stderr, never a traceback."""

    @wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except clients.SetupError as exc:
            click.echo(f"memory: {exc}", err=True)
            sys.exit(2)
        except ToolError as exc:
            click.echo(f"memory: the server refused: {exc}", err=True)
            sys.exit(1)
        except RemoteError as exc:
            click.echo(f"memory: {exc}", err=True)
            sys.exit(1)

    return wrapper


def chosen_project(value: str | None, default_current: bool) -> str | None:
    if value == CURRENT or (value is None and default_current):
        return config.project_name()
    return value


def project_option(help_text: str) -> Callable[..., Any]:
    return click.option("--project", is_flag=False, flag_value=CURRENT, default=None,
                        metavar="[NAME]", help=help_text)


json_option = click.option("--json", "as_json", is_flag=True,
                           help="Print the server's reply as JSON (for scripts).")


def connect(settings: config.Settings, **options: Any) -> Remote:
    """A connection that first sends the saves kept from earlier commands (outbox.py)."""
    remote = Remote(settings, **options)
    if outbox.waiting(settings):
        try:
            outbox.send(remote, settings, said=lambda line: click.echo(line, err=True))
        except RemoteError:
            remote.close()
            raise
    return remote


def print_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False))
