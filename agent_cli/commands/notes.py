"""`memory save`, `search`, `context`, `details`, `delete` and `outbox`: read and write notes
from a shell, and see the saves the server could not take yet."""

from __future__ import annotations

import sys
from typing import Any

import click

from agent_cli import config, outbox
from agent_cli.commands.common import (
    chosen_project,
    clean_errors,
    connect,
    json_option,
    print_json,
    project_option,
)
from agent_cli.remote import RemoteError, Unavailable

KEPT_EXIT = 75  # EX_TEMPFAIL: not done now, kept, will be done later
CATEGORIES = ("decision", "bug", "pattern", "learning", "context")
FORGET_TOOL = "forget"


def _csv(value: str | None) -> list[str]:
    return [part.strip() for part in (value or "").split(",") if part.strip()]


@click.command()
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
@clean_errors
def save(title: str, what: str, why: str | None, impact: str | None, tags: str | None,
         category: str | None, related_files: str | None, details: str | None,
         project: str | None, memory: str | None, source: str | None, as_json: bool) -> None:
    """Save a note (memory_save). A note with the same project and title is updated."""
    if details == "-":
        details = sys.stdin.read()
    arguments: dict[str, Any] = {"title": title, "what": what,
                                 "project": chosen_project(project, default_current=True)}
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
        with connect(settings) as remote:
            reply = remote.call("memory_save", arguments)
    except Unavailable as exc:  # not lost: kept here, sent by the next command
        where = outbox.keep(settings, arguments, str(exc))
        click.echo(f"memory: {exc}. The note is kept in {where} and will be sent by the next "
                   "`memory` command (or `memory outbox --send`).", err=True)
        sys.exit(KEPT_EXIT)
    if as_json:
        return print_json(reply)
    click.echo(f"saved {reply.get('id', '')} in project {arguments['project']}")
    for warning in reply.get("warnings") or []:
        click.echo(f"warning: {warning}")


def _call(tool: str, arguments: dict[str, Any], memory: str | None = None) -> dict[str, Any]:
    settings = config.resolve()
    memory = memory or settings.memory
    if memory:
        arguments["memory"] = memory
    with connect(settings) as remote:
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


@click.command()
@click.argument("query")
@click.option("--limit", default=5, show_default=True, type=click.IntRange(1, 100),
              help="At most this many notes.")
@project_option("Only this project (--project alone: the current one)  [default: all].")
@click.option("--memory", help="Memory to search  [default: ECHO_MEM_MEMORY, else the key's].")
@json_option
@clean_errors
def search(query: str, limit: int, project: str | None, memory: str | None,
           as_json: bool) -> None:
    """Find notes by meaning and by words (memory_search), best first."""
    arguments: dict[str, Any] = {"query": query, "limit": limit}
    chosen = chosen_project(project, default_current=False)
    if chosen:
        arguments["project"] = chosen
    reply = _call("memory_search", arguments, memory)
    if as_json:
        return print_json(reply)
    found = _results(reply)
    if not found:
        click.echo("no notes found")
    for note in found:
        click.echo(_line(note))
        if note.get("what"):
            click.echo(f"    {note['what']}")
        if note.get("has_details"):
            click.echo(f"    (details: memory details {note.get('id')})")


@click.command()
@project_option("Project  [default: the git root's name].")
@click.option("--limit", default=10, show_default=True, type=click.IntRange(1, 100),
              help="At most this many notes.")
@click.option("--memory", help="Memory to read  [default: ECHO_MEM_MEMORY, else the key's].")
@json_option
@clean_errors
def context(project: str | None, limit: int, memory: str | None, as_json: bool) -> None:
    """The project's recent notes (memory_context): what an agent loads at the start."""
    chosen = chosen_project(project, default_current=True)
    reply = _call("memory_context", {"project": chosen, "limit": limit}, memory)
    if as_json:
        return print_json(reply)
    found = _results(reply)
    total = reply.get("total", len(found))
    click.echo(f"{chosen}: showing {reply.get('showing', len(found))} of {total} note(s)")
    for note in found:
        click.echo(f"  {_line(note)}")
    if reply.get("message"):
        click.echo(reply["message"])


@click.command()
@click.argument("note_id")
@click.option("--memory", help="Memory of the note  [default: ECHO_MEM_MEMORY, else the key's].")
@json_option
@clean_errors
def details(note_id: str, memory: str | None, as_json: bool) -> None:
    """A note in full (memory_details); NOTE_ID is its id or a unique prefix of 8+ characters."""
    reply = _call("memory_details", {"id": note_id}, memory)
    if as_json:
        return print_json(reply)
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


@click.command()
@click.argument("note_id")
@click.option("--memory", help="Memory of the note  [default: ECHO_MEM_MEMORY, else the key's].")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@json_option
@clean_errors
def delete(note_id: str, memory: str | None, yes: bool, as_json: bool) -> None:
    """Erase a note for good (the forget tool): the note and its earlier versions go, and
    their text leaves the server's audit trail. NOTE_ID is its id or a unique prefix of 8+
    characters."""
    settings = config.resolve()
    with connect(settings) as remote:
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
        return print_json(reply)
    versions = reply.get("note_versions", 0)
    click.echo(f"erased note {note_id}"
               + (f" and {versions} earlier version(s)" if versions else "")
               + f"; its text was erased from {reply.get('audit_events_erased', 0)} audit "
                 "event(s)")


@click.command(name="outbox")
@click.option("--send", "send_now", is_flag=True, help="Send the kept saves now.")
@click.option("--drop", is_flag=True, help="Discard every kept save (asks first).")
@clean_errors
def outbox_command(send_now: bool, drop: bool) -> None:
    """List the saves the server could not take yet (rate limited past the wait, or down).
    Every `memory` command sends them first; --send does only that."""
    if drop:
        click.confirm(f"Discard {len(outbox.waiting())} kept save(s) for good?", abort=True)
        click.echo(f"discarded {outbox.drop()} kept save(s)")
        return
    if send_now:
        settings = config.resolve()
        with connect(settings):
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
