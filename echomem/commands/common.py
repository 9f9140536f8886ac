"""What every `echo-memory` subcommand shares: clean errors, and the runtime (settings,
database) made ready before Django is touched."""

from __future__ import annotations

import sys
from collections.abc import Callable
from functools import wraps
from typing import Any

import click

from echomem.errors import EchoError


def clean_errors(command: Callable[..., Any]) -> Callable[..., Any]:
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


def prepare(start_database: bool = True):
    """echomem.runtime.prepare, imported when a command runs rather than when `echo-memory`
    starts."""
    from echomem import runtime

    return runtime.prepare(start_database=start_database)
