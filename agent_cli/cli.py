"""The `memory` command (also `echo-memory agent`): wire coding agents to Echo Memory, and
read and write notes from a shell."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import Any

import click

from agent_cli import clients, config, created_dirs, outbox
from agent_cli.remote import Remote, RemoteError, ToolError, Unavailable
from echomem.agent_clients import SERVER_NAME

CURRENT = "\0current"  # --project given without a value: this directory's project
KEPT_EXIT = 75  # EX_TEMPFAIL: not done now, kept, will be done later
CATEGORIES = ("decision", "bug", "pattern", "learning", "context")
FORGET_TOOL = "forget"
NOTE_TOOLS = ("memory_save", "memory_search", "memory_context", "memory_details")


def _clean_errors(command: Callable[..., Any]) -> Callable[..., Any]:
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


def _project(value: str | None, default_current: bool) -> str | None:
    if value == CURRENT or (value is None and default_current):
        return config.project_name()
    return value


def project_option(help_text: str) -> Callable[..., Any]:
    return click.option("--project", is_flag=False, flag_value=CURRENT, default=None,
                        metavar="[NAME]", help=help_text)


json_option = click.option("--json", "as_json", is_flag=True,
                           help="Print the server's reply as JSON (for scripts).")


def _remote(settings: config.Settings, **options: Any) -> Remote:
    """A connection that first sends the saves kept from earlier commands (outbox.py)."""
    remote = Remote(settings, **options)
    if outbox.waiting(settings):
        try:
            outbox.send(remote, settings, said=lambda line: click.echo(line, err=True))
        except RemoteError:
            remote.close()
            raise
    return remote


def _print_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False))


def _csv(value: str | None) -> list[str]:
    return [part.strip() for part in (value or "").split(",") if part.strip()]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def main() -> None:
    """Echo Memory for coding agents: set up Claude Code, Cursor, Codex, OpenCode, Windsurf
    and Claude Desktop, and save or find notes (decisions, bugs, patterns) from a shell.

    The endpoint, key and memory come from ECHO_MEM_URL, ECHO_MEM_API_KEY and ECHO_MEM_MEMORY,
    else from `memory config set`, else (endpoint only) from the Echo Memory server running
    on this machine.
    """


# --- setup / uninstall -------------------------------------------------------------------

client_argument = click.argument("client", type=click.Choice(clients.CLIENTS))
scope_option = click.option(
    "--project", "in_project", is_flag=True,
    help="Write the project's config (at the git root of the current directory) instead of "
         "your user config.")
name_option = click.option("--name", default=SERVER_NAME, show_default=True,
                           help="The name the client lists the server under.")


def _root(in_project: bool) -> Path | None:
    return config.project_root() if in_project else None


def _show(changes: list[clients.Change]) -> None:
    for change in changes:
        click.echo(change.summary())


@main.command()
@client_argument
@scope_option
@click.option("--stdio", is_flag=True,
              help="Have the client start `memory mcp` (a local bridge) instead of reaching "
                   "the endpoint over HTTP. Claude Desktop always uses it.")
@name_option
@click.option("--no-check", is_flag=True,
              help="Write without checking the endpoint first (tools/list).")
@click.option("--dry-run", is_flag=True, help="Show the changes; write nothing, check nothing.")
@_clean_errors
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
    stdio = stdio or client not in clients.REMOTE_CLIENTS
    changes = clients.plan(client, install=True, project_root=root, stdio=stdio,
                           url=settings.url, name=name)
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


@main.command()
@client_argument
@scope_option
@name_option
@_clean_errors
def uninstall(client: str, in_project: bool, name: str) -> None:
    """Remove Echo Memory from CLIENT's MCP config (and, for Codex, the AGENTS.md block).

    A file setup did not change since gets back exactly the bytes it had before setup (a
    file setup created is deleted); a file that changed since loses our entry only. A
    symlinked config stays a symlink. A folder setup created and that is now empty goes;
    folders that were there before setup always stay."""
    changes = clients.plan(client, install=False, project_root=_root(in_project), stdio=False,
                           url=None, name=name)
    _show(changes)
    for change in changes:
        change.apply()
    deleted = [c.target for c in changes if c.changed and c.after is None]
    for folder in created_dirs.tidy(deleted):
        click.echo(f"{clients.shown(folder)}/: deleted (setup made it; it is empty now)")


@main.command(name="project-header")
def project_header() -> None:
    """Print this folder's project header as JSON: {"X-Echo-Project": "<git root's name>"},
    or {} outside a repository. A global Claude Code install runs it (headersHelper) when
    it connects, so each project's notes are filed under that project."""
    project = config.git_project()
    click.echo(json.dumps({clients.PROJECT_HEADER: project} if project else {}))


# --- notes ---------------------------------------------------------------------------------

@main.command()
@click.option("--title", required=True, help="Short title, at most 60 characters.")
@click.option("--what", required=True, help="One or two sentences: the essence.")
@click.option("--why", help="The reasoning behind the decision or fix.")
@click.option("--impact", help="What changed as a result.")
@click.option("--tags", help="Comma-separated tags, e.g. auth,jwt.")
@click.option("--category", type=click.Choice(CATEGORIES), help="The kind of note.")
@click.option("--related-files", help="Comma-separated file paths.")
@click.option("--details", help="Full context for a future agent ('-' reads it from stdin).")
@project_option("Project name  [default: the git root's name].")
@click.option("--memory", help="Memory to save in  [default: ECHO_MEM_MEMORY, else the key's].")
@click.option("--source", hidden=True, help="Accepted for EchoVault's AGENTS.md; ignored.")
@json_option
@_clean_errors
def save(title: str, what: str, why: str | None, impact: str | None, tags: str | None,
         category: str | None, related_files: str | None, details: str | None,
         project: str | None, memory: str | None, source: str | None, as_json: bool) -> None:
    """Save a note (memory_save). A note with the same project and title is updated."""
    if details == "-":
        details = sys.stdin.read()
    arguments: dict[str, Any] = {"title": title, "what": what,
                                 "project": _project(project, default_current=True)}
    for key, value in (("why", why), ("impact", impact), ("category", category),
                       ("details", details)):
        if value:
            arguments[key] = value
    if tags:
        arguments["tags"] = _csv(tags)
    if related_files:
        arguments["related_files"] = _csv(related_files)
    settings = config.resolve()
    if memory or settings.memory:
        arguments["memory"] = memory or settings.memory
    try:
        with _remote(settings) as remote:
            reply = remote.call("memory_save", arguments)
    except Unavailable as exc:  # not lost: kept here, sent by the next command
        where = outbox.keep(settings, arguments, str(exc))
        click.echo(f"memory: {exc}. The note is kept in {where} and will be sent by the next "
                   "`memory` command (or `memory outbox --send`).", err=True)
        sys.exit(KEPT_EXIT)
    if as_json:
        return _print_json(reply)
    click.echo(f"saved {reply.get('id', '')} in project {arguments['project']}")
    for warning in reply.get("warnings") or []:
        click.echo(f"warning: {warning}")


def _call(tool: str, arguments: dict[str, Any], memory: str | None = None) -> dict[str, Any]:
    settings = config.resolve()
    memory = memory or settings.memory
    if memory:
        arguments["memory"] = memory
    with _remote(settings) as remote:
        return remote.call(tool, arguments)


def _results(reply: dict[str, Any]) -> list[dict[str, Any]]:
    for key in ("results", "memories", "notes"):
        if isinstance(reply.get(key), list):
            return reply[key]
    return []


def _line(note: dict[str, Any]) -> str:
    facts = [str(note.get("id", ""))[:8], note.get("project") or "",
             str(note.get("created_at") or note.get("date") or "")]
    if note.get("score") is not None:
        facts.append(f"score {note['score']:.2f}" if isinstance(note["score"], float)
                     else f"score {note['score']}")
    tags = ", ".join(note.get("tags") or [])
    head = f"[{note.get('category') or 'note'}] {note.get('title', '')}"
    return f"{head}  ({' · '.join(f for f in facts if f)}){'  #' + tags if tags else ''}"


@main.command()
@click.argument("query")
@click.option("--limit", default=5, show_default=True, type=click.IntRange(1, 100),
              help="At most this many notes.")
@project_option("Only this project (--project alone: the current one)  [default: all].")
@click.option("--memory", help="Memory to search  [default: ECHO_MEM_MEMORY, else the key's].")
@json_option
@_clean_errors
def search(query: str, limit: int, project: str | None, memory: str | None,
           as_json: bool) -> None:
    """Find notes by meaning and by words (memory_search), best first."""
    arguments: dict[str, Any] = {"query": query, "limit": limit}
    chosen = _project(project, default_current=False)
    if chosen:
        arguments["project"] = chosen
    reply = _call("memory_search", arguments, memory)
    if as_json:
        return _print_json(reply)
    found = _results(reply)
    if not found:
        click.echo("no notes found")
    for note in found:
        click.echo(_line(note))
        if note.get("what"):
            click.echo(f"    {note['what']}")
        if note.get("has_details"):
            click.echo(f"    (details: memory details {note.get('id')})")


@main.command()
@project_option("Project  [default: the git root's name].")
@click.option("--limit", default=10, show_default=True, type=click.IntRange(1, 100),
              help="At most this many notes.")
@click.option("--memory", help="Memory to read  [default: ECHO_MEM_MEMORY, else the key's].")
@json_option
@_clean_errors
def context(project: str | None, limit: int, memory: str | None, as_json: bool) -> None:
    """The project's recent notes (memory_context): what an agent loads at the start."""
    chosen = _project(project, default_current=True)
    reply = _call("memory_context", {"project": chosen, "limit": limit}, memory)
    if as_json:
        return _print_json(reply)
    found = _results(reply)
    total = reply.get("total", len(found))
    click.echo(f"{chosen}: showing {reply.get('showing', len(found))} of {total} note(s)")
    for note in found:
        click.echo(f"  {_line(note)}")
    if reply.get("message"):
        click.echo(reply["message"])


@main.command()
@click.argument("note_id")
@click.option("--memory", help="Memory of the note  [default: ECHO_MEM_MEMORY, else the key's].")
@json_option
@_clean_errors
def details(note_id: str, memory: str | None, as_json: bool) -> None:
    """A note in full (memory_details); NOTE_ID is its id or a unique prefix of 8+ characters."""
    reply = _call("memory_details", {"id": note_id}, memory)
    if as_json:
        return _print_json(reply)
    note = reply.get("note") if isinstance(reply.get("note"), dict) else reply
    if "title" not in note and _results(reply):  # a reply shaped {"results": [note]}
        note = _results(reply)[0]
    click.echo(_line(note))
    for key in ("what", "why", "impact"):
        if note.get(key):
            click.echo(f"{key}: {note[key]}")
    if note.get("related_files"):
        click.echo("files: " + ", ".join(note["related_files"]))
    if note.get("details"):
        click.echo("\n" + note["details"])


@main.command()
@click.argument("note_id")
@click.option("--memory", help="Memory of the note  [default: ECHO_MEM_MEMORY, else the key's].")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@json_option
@_clean_errors
def delete(note_id: str, memory: str | None, yes: bool, as_json: bool) -> None:
    """Erase a note for good (the forget tool): the note and its earlier versions go, and
    their text leaves the server's audit trail. NOTE_ID is its id or a unique prefix of 8+
    characters."""
    settings = config.resolve()
    with _remote(settings) as remote:
        if FORGET_TOOL not in {tool["name"] for tool in remote.list_tools()}:
            raise RemoteError(f"deleting notes is not supported by this server "
                              f"({settings.url} offers no {FORGET_TOOL} tool): upgrade "
                              "the server; without it a note's text leaves the server only "
                              "with its memory, which an owner or admin deletes in the "
                              "dashboard")
        if not yes and not as_json:
            click.confirm(f"Erase note {note_id} and its history for good?", abort=True)
        arguments: dict[str, Any] = {"scope": "shared", "notes": [note_id]}
        if memory or settings.memory:
            arguments["memory"] = memory or settings.memory
        reply = remote.call(FORGET_TOOL, arguments)
    if as_json:
        return _print_json(reply)
    versions = reply.get("note_versions", 0)
    click.echo(f"erased note {note_id}"
               + (f" and {versions} earlier version(s)" if versions else "")
               + f"; its text was erased from {reply.get('audit_events_erased', 0)} audit "
                 "event(s)")


# --- vault import / export ------------------------------------------------------------------

vault_memory_option = click.option(
    "--memory", help="Memory to use  [default: ECHO_MEM_MEMORY, else the key's].")


def _patient_remote(settings: config.Settings) -> Remote:
    """A Remote for long jobs: on the server's rate limit it waits, says so, and goes on."""
    def waiting(seconds: float) -> None:
        click.echo(f"\nrate limited by the server: waiting {seconds:g} s, then going on",
                   err=True)

    return _remote(settings, on_rate_limit=waiting, wait_budget=None)


@main.command(name="import")
@click.option("--vault", "vault_path", type=click.Path(file_okay=False, path_type=Path),
              help="The EchoVault vault  [default: ~/.memory/vault].")
@click.option("--project", help="Only this project's folder  [default: every project].")
@vault_memory_option
@click.option("--dry-run", is_flag=True, help="Read the vault and say what would be sent; "
                                              "send nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON (for scripts).")
@_clean_errors
def import_command(vault_path: Path | None, project: str | None, memory: str | None,
                   dry_run: bool, as_json: bool) -> None:
    """Import an EchoVault vault (<vault>/<project>/*.md) as notes, one memory_save each.

    Entries with the same project and title are one note and its history: they are saved
    oldest first, so the newest is the note and the others its earlier versions (an entry
    identical to the one before it is sent once). Importing the same vault again changes
    nothing (counted as unchanged). Secrets are redacted by the server before storing.
    """
    from agent_cli import vault, vault_sync

    root = vault_path or vault.default_vault()
    if not root.is_dir():
        raise RemoteError(f"no vault at {root}: pass --vault PATH (the folder holding one "
                          "folder per project)")
    found = vault.read_vault(root, project)
    for warning in found.warnings:
        click.echo(f"warning: {warning}", err=True)
    summary = vault_sync.ImportSummary()
    if not dry_run and found.notes:
        settings = config.resolve()
        with _patient_remote(settings) as remote, click.progressbar(
                length=len(found.notes), label="importing notes", file=sys.stderr) as bar:
            summary = vault_sync.import_notes(remote, found.notes,
                                              memory or settings.memory,
                                              step=lambda: bar.update(1))
    skipped = found.skipped + summary.refused
    report = {
        "vault": str(root), "files": found.files, "notes": len(found.notes),
        "dry_run": dry_run, "created": summary.counts["created"],
        "updated": summary.counts["updated"], "unchanged": summary.counts["unchanged"],
        "skipped": [{"where": s.where, "title": s.title, "reason": s.reason} for s in skipped],
        "redacted": summary.redacted, "warnings": found.warnings,
        "changed_on_import": [{"where": n.where, "title": n.title, "notes": n.notes}
                              for n in found.notes if n.notes],
    }
    if as_json:
        _print_json(report)
    else:
        _print_import(report)
    if summary.refused:
        sys.exit(1)


def _print_import(report: dict[str, Any]) -> None:
    if report["dry_run"]:
        click.echo(f"dry run: {report['notes']} note(s) from {report['files']} file(s) in "
                   f"{report['vault']} would be sent; nothing was sent")
    else:
        click.echo(f"imported {report['notes']} note(s) from {report['files']} file(s): "
                   f"{report['created']} created, {report['updated']} updated, "
                   f"{report['unchanged']} unchanged")
    for change in report["changed_on_import"]:
        click.echo(f"  {change['where']} ({change['title']}): {'; '.join(change['notes'])}")
    click.echo(f"skipped {len(report['skipped'])}")
    for skip in report["skipped"]:
        click.echo(f"  {skip['where']} ({skip['title'] or 'untitled'}): {skip['reason']}")
    if report["redacted"]:
        click.echo(f"{report['redacted']} secret(s) were redacted by the server before "
                   "storing")


@main.command(name="export")
@click.option("--to", "target", type=click.Path(file_okay=False, path_type=Path),
              default=Path("echo-memory-vault"), show_default=True,
              help="Folder to write the vault into (one folder per project).")
@click.option("--project", help="Only this project  [default: every project].")
@vault_memory_option
@_clean_errors
def export_command(target: Path, project: str | None, memory: str | None) -> None:
    """Write the server's notes as an EchoVault vault: <DIR>/<project>/<date>-session.md,
    one file per project and day, with EchoVault's front matter. A note's earlier versions
    are written too, each on the day it was saved, so that importing the vault gives the
    note back with its history."""
    from agent_cli import vault, vault_sync

    settings = config.resolve()
    memory = memory or settings.memory
    with _patient_remote(settings) as remote:
        listed = vault_sync.list_notes(remote, project, memory)
        notes = []
        with click.progressbar(listed, label="exporting notes", file=sys.stderr) as ids:
            for note_id in ids:
                notes.append(vault_sync.note_details(remote, note_id, memory))
    written = vault.write_vault(target, notes)
    projects = {path.parent.name for path in written}
    click.echo(f"exported {len(notes)} note(s) of {len(projects)} project(s) into {target} "
               f"({len(written)} file(s))")


# --- bridge and config -------------------------------------------------------------------

@main.command(name="mcp")
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


@main.command(name="outbox")
@click.option("--send", "send_now", is_flag=True, help="Send the kept saves now.")
@click.option("--drop", is_flag=True, help="Discard every kept save (asks first).")
@_clean_errors
def outbox_command(send_now: bool, drop: bool) -> None:
    """List the saves the server could not take yet (rate limited past the wait, or down).
    Every `memory` command sends them first; --send does only that."""
    if drop:
        click.confirm(f"Discard {len(outbox.waiting())} kept save(s) for good?", abort=True)
        click.echo(f"discarded {outbox.drop()} kept save(s)")
        return
    if send_now:
        settings = config.resolve()
        with _remote(settings):
            pass
    entries = outbox.waiting()
    if not entries:
        click.echo("no saves are waiting")
        return
    click.echo(f"{len(entries)} save(s) waiting in {outbox.path()}:")
    for entry in entries:
        arguments = entry.get("arguments", {})
        state = f"refused: {entry['refused']}" if entry.get("refused") else entry.get("reason")
        click.echo(f"  {entry.get('kept_at')}  {arguments.get('title')!r} "
                   f"({arguments.get('project') or 'no project'}) for {entry.get('url')}: "
                   f"{state}")


@main.group(name="config")
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
