"""Writing notes (memory_details replies, with their history) as an EchoVault vault, in the
layout vault.py describes, so that reading it back gives every note and version again."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

import yaml

from agent_cli.vault import HEADINGS, NO_PROJECT
from agent_cli.vault_text import write_details, write_list, write_value


def entries_of(note: dict[str, Any]) -> list[dict[str, Any]]:
    """A note (a memory_details reply) as vault entries: its earlier versions, oldest first,
    each dated when it was saved, then the note as it is now."""
    base = {"id": note["id"], "title": note["title"], "project": note.get("project")}
    versions = sorted(note.get("history") or [], key=lambda v: v.get("version", 0))
    out = [{**version, **base, "saved": str(version.get("saved_at") or "")}
           for version in versions]
    out.append({**note, "saved": str(note.get("updated_at") or note.get("created_at") or "")})
    return out


def folder_name(project: str) -> str:
    """A folder for the project's files that stays inside the vault: the name itself when it
    is a plain name, else a safe spelling of it (the front matter keeps the real one)."""
    safe = re.sub(r"[^\w.@+-]", "_", project).lstrip(".")[:80]
    if safe == project and safe:
        return safe
    digest = hashlib.sha256(project.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{safe or 'project'}-{digest}"


def write_vault(root: Path, notes: list[dict[str, Any]]) -> list[Path]:
    """Write notes (memory_details replies, with their history) as EchoVault session files,
    one per project and day an entry was saved; returns the files written."""
    days: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for note in notes:
        for entry in entries_of(note):
            days.setdefault((entry.get("project") or NO_PROJECT,
                             entry["saved"][:10] or "undated"), []).append(entry)
    written = []
    for (project, day), group in sorted(days.items()):
        group.sort(key=lambda e: e["saved"])
        folder = root / (NO_PROJECT if project == NO_PROJECT else folder_name(project))
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{day}-session.md"
        path.write_text(render_day(project, day, group), encoding="utf-8")
        written.append(path)
    return written


def render_day(project: str, day: str, entries: list[dict[str, Any]]) -> str:
    tags = sorted({tag for entry in entries for tag in entry.get("tags") or []})
    lines = ["---", f"project: {_scalar(project)}", "sources: []",
             f"created: {entries[0]['saved'] or day}",
             f"tags: [{', '.join(_scalar(t) for t in tags)}]", "---", "", f"# {day} Session",
             ""]
    for category, heading in HEADINGS.items():
        chosen = [e for e in entries if e.get("category") == category]
        if chosen:
            lines += [f"## {heading}", ""]
            for entry in chosen:
                lines += [render_entry(entry), ""]
    return "\n".join(lines).rstrip() + "\n"


def render_entry(entry: dict[str, Any]) -> str:
    lines = [f"### {write_value(entry['title'])}", f"<!-- memory-id: {entry['id']} -->"]
    if entry.get("version") and entry.get("saved"):
        lines.append(f"<!-- echo-memory: version {entry['version']}, saved {entry['saved']} -->")
    lines.append(f"**What:** {write_value(entry['what'])}")
    for label, name in (("Why", "why"), ("Impact", "impact")):
        if entry.get(name):
            lines.append(f"**{label}:** {write_value(entry[name])}")
    # Always written, even empty: without it a reader falls back to the file's tags.
    lines.append(f"**Tags:** {write_list(list(entry.get('tags') or []))}".rstrip())
    if entry.get("related_files"):
        lines.append(f"**Files:** {write_list(list(entry['related_files']))}")
    if entry.get("details"):
        lines += ["", "<details>", write_details(entry["details"]), "</details>"]
    return "\n".join(lines)


PLAIN_NAME = re.compile(r"[A-Za-z0-9_@/+-][A-Za-z0-9_.@/+-]*")


def _scalar(value: str) -> str:
    """A YAML flow scalar that reads back as exactly this string: bare for a plain name,
    else double-quoted with every character YAML could misread escaped."""
    try:
        if PLAIN_NAME.fullmatch(value) and yaml.safe_load(value) == value:
            return value
    except yaml.YAMLError:
        pass
    out = []
    for char in value:
        code = ord(char)
        if char in '\\"':
            out.append("\\" + char)
        elif code < 0x20 or 0x7F <= code <= 0x9F or char in "\u2028\u2029\ufeff\ufffe\uffff":
            out.append(f"\\u{code:04x}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'
