"""EchoVault's Markdown vault, read and written: `<vault>/<project>/<YYYY-MM-DD>-session.md`,
one file per project and day, YAML front matter (project, sources, created, tags), then
`# <date> Session`, a `## <Category heading>` per category and a `### <title>` per note
with `**What:**`, `**Why:**`, `**Impact:**` lines and the details between `<details>` tags.

Reading is forgiving (a vault may be years old or edited by hand): odd front matter is a
warning for that file, never a crash. Writing adds two entry lines EchoVault's own reader
ignores, `**Tags:**` and `**Files:**`, because its files keep only the day's union of tags
and no related files, and a round trip through Echo Memory should lose neither; and a
comment with the version and save time of each entry, so that a note's history (several
entries with one project and title) reads back in its order. Text the layout cannot hold
as it is goes in as JSON on its line (vault_text.py).

Entries with the same project and title are one note and its history, oldest first: import
saves them in that order (the last is the note, the others its earlier versions), and
export writes a note's earlier versions back as entries of the days they were saved.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from agent_cli.vault_text import (
    read_details,
    read_list,
    read_value,
    write_details,
    write_list,
    write_value,
)

TITLE_CHARS = 60  # the server's limit (EchoVault's "max 60 chars", which it never enforced)
NO_PROJECT = "_no-project"  # the folder for notes saved without a project
HEADINGS = {"decision": "Decisions", "pattern": "Patterns", "bug": "Bugs Fixed",
            "context": "Context", "learning": "Learnings"}
CATEGORY_OF_HEADING = {heading: category for category, heading in HEADINGS.items()}
# EchoVault's later categories, folded into the five the server keeps.
FOLDED = {"playbook": "pattern", "known_fix": "bug", "constraint": "decision",
          "project_state": "context", "active_work": "context"}
FOLDED_HEADINGS = {"Playbooks": "playbook", "Known Fixes": "known_fix",
                   "Constraints": "constraint", "Project State": "project_state",
                   "Active Work": "active_work"}
ARCHIVED = "Archived"
FIELD_LINE = re.compile(r"\*\*(What|Why|Impact|Source|Category|Tags|Files|Living Memory|"
                        r"Archived|Archive Reason|Superseded By):\*\*\s?(.*)\Z")
DATE_IN_NAME = re.compile(r"(\d{4}-\d{2}-\d{2})")
VERSION_LINE = re.compile(r"<!-- echo-memory: version (\d+), saved (\S+) -->")


@dataclass
class VaultNote:
    """One note as memory_save takes it, and where it came from."""

    project: str
    title: str
    what: str
    why: str | None = None
    impact: str | None = None
    tags: list[str] = field(default_factory=list)
    category: str = "context"
    related_files: list[str] = field(default_factory=list)
    details: str | None = None
    where: str = ""
    date: str = ""
    notes: list[str] = field(default_factory=list)  # what the import changed, said once
    own_tags: bool = False  # a **Tags:** line of its own (not the file's union of tags)
    saved: str = ""  # when the server saved this version, from an exported vault
    order: int = 0  # the place it was read in

    def arguments(self) -> dict[str, Any]:
        """A whole snapshot: every field given, empty ones as empty, so that the server's
        merge rule (fields left out keep their value) never mixes two entries."""
        out: dict[str, Any] = {"title": self.title, "what": self.what,
                               "category": self.category, "why": self.why or "",
                               "impact": self.impact or "", "details": self.details or "",
                               "tags": list(self.tags),
                               "related_files": list(self.related_files)}
        if self.project != NO_PROJECT:
            out["project"] = self.project
        return out

    def key(self) -> tuple[str, str]:
        return (self.project, self.title)

    def when(self) -> tuple[str, int]:
        """Oldest first: the save time an export wrote, else the file's day; then reading
        order."""
        return (self.saved or self.date, self.order)


@dataclass
class Skipped:
    where: str
    title: str
    reason: str


@dataclass
class Vault:
    notes: list[VaultNote] = field(default_factory=list)  # every note and version, oldest first
    skipped: list[Skipped] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    files: int = 0


def default_vault() -> Path:
    return Path.home() / ".memory" / "vault"


# --- reading -------------------------------------------------------------------------------

def read_vault(root: Path, project: str | None = None) -> Vault:
    """Every note of every `<project>/*.md` under root (or of one project), oldest first;
    an entry identical to the one before it (same project, title and content) is read
    once."""
    vault = Vault()
    folders = sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []
    for folder in folders:
        for path in sorted(folder.glob("*.md")):
            vault.files += 1
            _read_file(path, root, vault)
    if project is not None:
        vault.notes = [n for n in vault.notes if n.project == project]
    vault.notes = _deduplicated(vault)
    return vault


def chains(notes: list[VaultNote]) -> list[list[VaultNote]]:
    """The notes grouped by project and title, each group oldest first: a note and the
    versions before it."""
    grouped: dict[tuple[str, str], list[VaultNote]] = {}
    for note in notes:
        grouped.setdefault(note.key(), []).append(note)
    return list(grouped.values())


def _read_file(path: Path, root: Path, vault: Vault) -> None:
    where = str(path.relative_to(root))
    text = path.read_bytes().decode("utf-8", errors="replace").lstrip("\ufeff")
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    front, body, problems = _front_matter(text)
    project = front.get("project")
    if not isinstance(project, str) or not project.strip():
        if "project" in front:
            problems.append(f"project {project!r} is not a name; using the folder's")
        project = path.parent.name
    tags = _names(front.get("tags"), "tags", problems)
    date = _date(front.get("created"), path, problems)
    extra = sorted(set(front) - {"project", "sources", "created", "tags"})
    if extra:
        problems.append(f"ignored front matter field(s): {', '.join(map(str, extra))}")
    if problems:
        vault.warnings.append(f"{where}: " + "; ".join(problems))
    for number, entry in enumerate(_entries(body), start=1):
        _add(vault, entry, project=project, tags=tags, date=date,
             where=f"{where}#{number}")


def _front_matter(text: str) -> tuple[dict[str, Any], str, list[str]]:
    if not text.startswith("---\n"):
        return {}, text, ["no front matter; the project is the folder's name"]
    end = text.find("\n---", 3)
    if end < 0:
        return {}, text, ["front matter is never closed (no second ---); read as body"]
    raw, body = text[4:end], text[end + 4:].split("\n", 1)[-1]
    try:
        data = yaml.safe_load(raw)
    except (yaml.YAMLError, ValueError) as exc:  # ValueError: a date like 2026-13-45
        reason = str(exc).splitlines()[0]
        return {}, body, [f"front matter is not valid YAML ({reason}); ignored it"]
    if data is None:
        return {}, body, []
    if not isinstance(data, dict):
        return {}, body, ["front matter is not a mapping; ignored it"]
    return {str(k): v for k, v in data.items()}, body, []


def _names(value: Any, name: str, problems: list[str]) -> list[str]:
    """Tags or files: a YAML list, a JSON array (exactly as written), or a comma-separated
    string (each item stripped)."""
    if value is None:
        return []
    exact = False
    if isinstance(value, str):
        items: Iterable[Any] | None = read_list(value)
        exact = items is not None
        if items is None:
            items = value.split(",")
    elif isinstance(value, list | tuple):
        items = value
    else:
        problems.append(f"{name} {value!r} is neither a list nor a string; ignored")
        return []
    out: list[str] = []
    for item in items:
        text = "" if item is None else str(item) if exact else str(item).strip()
        if text and text not in out:
            out.append(text)
    return out


def _date(value: Any, path: Path, problems: list[str]) -> str:
    named = DATE_IN_NAME.match(path.stem)
    fallback = named.group(1) if named else ""
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()[:10]
    if isinstance(value, str):
        try:
            parsed = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
            return parsed.date().isoformat()
        except ValueError:
            problems.append(f"created {value!r} is not a date; using {fallback or 'none'}")
            return fallback
    if value is not None:
        problems.append(f"created {value!r} is not a date; using {fallback or 'none'}")
    return fallback


@dataclass
class _Entry:
    title: str
    heading: str | None
    archived: bool
    values: dict[str, str] = field(default_factory=dict)
    details: list[str] = field(default_factory=list)
    saved: str = ""


def _entries(body: str) -> list[_Entry]:
    """The `### ` sections, each with its `## ` heading; details are read verbatim, so a
    heading inside them does not end the note (EchoVault's own reader cuts it there)."""
    entries: list[_Entry] = []
    heading: str | None = None
    archived = False
    current: _Entry | None = None
    last: str | None = None
    in_details = False
    for line in body.split("\n"):
        stripped = line.strip()
        if in_details:
            if stripped == "</details>":
                in_details = False
            elif current is not None:
                current.details.append(line)
            continue
        if line.startswith("### "):
            current = _Entry(read_value(line[4:]), heading, archived)
            entries.append(current)
            last = None
        elif line.startswith("## "):
            heading = line[3:].strip()
            archived = heading == ARCHIVED
            current, last = None, None
        elif current is None:
            continue
        elif stripped == "<details>":
            in_details, last = True, None
        elif version := VERSION_LINE.fullmatch(stripped):
            current.saved = version.group(2)
        elif match := FIELD_LINE.match(stripped):
            last = match.group(1)
            current.values[last] = match.group(2).strip()
        elif (stripped and last in ("What", "Why", "Impact") and not stripped.startswith("<!--")
              and not current.values[last].startswith('"')):
            current.values[last] += "\n" + stripped  # a value written over several lines
    return entries


def _add(vault: Vault, entry: _Entry, *, project: str, tags: list[str], date: str,
         where: str) -> None:
    values = entry.values
    if entry.archived or "Archived" in values:
        vault.skipped.append(Skipped(where, entry.title, "archived in the vault"))
        return
    if not entry.title:
        vault.skipped.append(Skipped(where, entry.title, "no title after ###"))
        return
    if not values.get("What"):
        vault.skipped.append(Skipped(where, entry.title, "no **What:** line (the server "
                                                         "requires it)"))
        return
    text = {label: read_value(values[label]) for label in ("What", "Why", "Impact")
            if label in values}
    note = VaultNote(project=project, title=entry.title, what=text["What"],
                     why=text.get("Why") or None, impact=text.get("Impact") or None,
                     where=where, date=date, saved=entry.saved, order=len(vault.notes),
                     own_tags="Tags" in values)
    note.details = read_details(entry.details) or None
    note.tags = _names(values["Tags"], "tags", []) if "Tags" in values else list(tags)
    note.related_files = _names(values.get("Files"), "files", [])
    note.category = _category(entry, note)
    if len(note.title) > TITLE_CHARS:
        note.title = short_title(entry.title)
        note.details = f"Full title: {entry.title}" + (f"\n\n{note.details}"
                                                       if note.details else "")
        note.notes.append(f"title cut to {TITLE_CHARS} characters (the full title opens "
                          "the details)")
    vault.notes.append(note)


def _category(entry: _Entry, note: VaultNote) -> str:
    given = entry.values.get("Category") or None
    if given is None and entry.heading is not None:
        given = CATEGORY_OF_HEADING.get(entry.heading) or FOLDED_HEADINGS.get(entry.heading)
        if given is None:
            note.notes.append(f"heading {entry.heading!r} is no category; saved as context")
            return "context"
    if given is None:
        return "context"
    given = given.strip().lower()
    if given in HEADINGS:
        return given
    if given in FOLDED:
        note.notes.append(f"category {given} saved as {FOLDED[given]}")
        return FOLDED[given]
    note.notes.append(f"category {given!r} is not one of {', '.join(HEADINGS)}; saved as "
                      "context")
    return "context"


def short_title(title: str) -> str:
    """At most TITLE_CHARS characters, cut at a word where one is near the end."""
    room = TITLE_CHARS - 1
    cut = title[:room]
    space = cut.rfind(" ")
    if space >= room - 20:
        cut = cut[:space]
    return cut.rstrip(" ,;:-") + "…"


def _deduplicated(vault: Vault) -> list[VaultNote]:
    """The notes oldest first, each entry identical to the one before it with the same
    project and title read once. EchoVault's files carry the day's union of tags, so the
    same note written on two days reads with two tag lists: without **Tags:** lines of their
    own they are still the same note, and it keeps both days' tags."""
    kept: list[VaultNote] = []
    last: dict[tuple[str, str], VaultNote] = {}
    for note in sorted(vault.notes, key=VaultNote.when):
        earlier = last.get(note.key())
        if earlier is not None and _same(earlier, note):
            if not (earlier.own_tags or note.own_tags):
                earlier.tags += [tag for tag in note.tags if tag not in earlier.tags]
            vault.skipped.append(Skipped(note.where, note.title,
                                         f"duplicate of {earlier.where}"))
            continue
        last[note.key()] = note
        kept.append(note)
    for chain in chains(kept):
        for number, note in enumerate(chain[:-1], start=1):
            note.notes.append(f"saved as version {number} of {len(chain)}: the same project "
                              f"and title as {chain[-1].where}, which is the note now")
    return kept


def _same(one: VaultNote, other: VaultNote) -> bool:
    if one.own_tags or other.own_tags:
        return one.arguments() == other.arguments()
    return _content(one) == _content(other)


def _content(note: VaultNote) -> dict[str, Any]:
    arguments = note.arguments()
    arguments.pop("tags", None)
    return arguments


# --- writing -------------------------------------------------------------------------------

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
