#!/usr/bin/env python
"""Django's manage.py; starts the embedded database first when DATABASE_URL is unset."""

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "echomem.settings")
    from echomem.errors import ConfigurationError
    from echomem.runtime import prepare

    # `check --deploy` and friends must work without a database; everything else needs one.
    needs_database = len(sys.argv) > 1 and sys.argv[1] not in {"check", "help", "--help", "version"}
    try:
        prepare(start_database=needs_database)
    except ConfigurationError as exc:
        sys.exit(f"echo-memory: {exc.message}")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
