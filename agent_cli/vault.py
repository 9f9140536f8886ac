"""EchoVault's Markdown vault, read and written: `<vault>/<project>/<YYYY-MM-DD>-session.md`,
one file per project and day, YAML front matter (project, sources, created, tags), then
`# <date> Session`, a `## <Category heading>` per category and a `### <title>` per note
with `**What:**`, `**Why:**`, `**Impact:**` lines and the details between `<details>` tags.

Reading is forgiving (a vault may be years old or edited by hand): odd front matter is a
warning for that file, never a crash. Writing adds two entry lines EchoVault's own reader
ignores, `**Tags:**` and `**Files:**`, because its files keep only the day's union of tags
and no related files, and a round trip through Echo Memory should lose neither.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

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

    def arguments(self) -> dict[str, Any]:
        out: dict[str, Any] = {"title": self.title, "what": self.what,
                               "category": self.category}
        if self.project != NO_PROJECT:
            out["project"] = self.project
        for name in ("why", "impact", "details"):
            if getattr(self, name):
                out[name] = getattr(self, name)
        if self.tags:
            out["tags"] = list(self.tags)
        if self.related_files:
            out["related_files"] = list(self.related_files)
        return out

    def key(self) -> tuple[str, str]:
        return (self.project, self.title)


@dataclass
class Skipped:
    where: str
    title: str
    reason: str


@dataclass
class Vault:
    notes: list[VaultNote] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    files: int = 0


def default_vault() -> Path:
    return Path.home() / ".memory" / "vault"


# --- reading -------------------------------------------------------------------------------

def read_vault(root: Path, project: str | None = None) -> Vault:
    """Every note of every `<project>/*.md` under root (or of one project's folder),
    deduplicated: an identical note is read once, and of two notes with the same project and
    title only the later one is kept (the server would let it replace the earlier)."""
    vault = Vault()
    folders = sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []
    if project is not None:
        folders = [p for p in folders if p.name == project]
    for folder in folders:
        for path in sorted(folder.glob("*.md")):
            vault.files += 1
            _read_file(path, root, vault)
    vault.notes = _deduplicated(vault)
    if project is not None:
        vault.notes = [n for n in vault.notes if n.project == project]
    return vault


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
    project = project.strip()
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
    if value is None:
        return []
    if isinstance(value, str):
        items: Iterable[Any] = value.strip("[]").split(",")
    elif isinstance(value, list | tuple):
        items = value
    else:
        problems.append(f"{name} {value!r} is neither a list nor a string; ignored")
        return []
    out: list[str] = []
    for item in items:
        text = str(item).strip() if item is not None else ""
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
            current = _Entry(line[4:].strip(), heading, archived)
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
        elif match := FIELD_LINE.match(stripped):
            last = match.group(1)
            current.values[last] = match.group(2).strip()
        elif stripped and last in ("What", "Why", "Impact") and not stripped.startswith("<!--"):
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
    note = VaultNote(project=project, title=entry.title, what=values["What"],
                     why=values.get("Why") or None, impact=values.get("Impact") or None,
                     where=where, date=date)
    note.details = "\n".join(entry.details).strip() or None
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
    """EchoVault's files carry the day's union of tags, so the same note written on two days
    reads with two tag lists: it is still the same note, and keeps both days' tags."""
    kept: dict[tuple[str, str], VaultNote] = {}
    for note in vault.notes:
        earlier = kept.get(note.key())
        if earlier is not None and _content(earlier) == _content(note):
            earlier.tags += [tag for tag in note.tags if tag not in earlier.tags]
            vault.skipped.append(Skipped(note.where, note.title,
                                         f"duplicate of {earlier.where}"))
            continue
        if earlier is not None:
            vault.skipped.append(Skipped(earlier.where, earlier.title,
                                         f"replaced by {note.where} (same project and "
                                         "title, written later)"))
            del kept[note.key()]
        kept[note.key()] = note
    return list(kept.values())


def _content(note: VaultNote) -> dict[str, Any]:
    arguments = note.arguments()
    arguments.pop("tags", None)
    return arguments


# --- writing -------------------------------------------------------------------------------

def write_vault(root: Path, notes: list[dict[str, Any]]) -> list[Path]:
    """Write notes (memory_details replies) as EchoVault session files, one per project and
    day of creation; returns the files written."""
    days: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for note in notes:
        created = str(note.get("created_at") or "")
        days.setdefault((note.get("project") or NO_PROJECT, created[:10] or "undated"),
                        []).append(note)
    written = []
    for (project, day), group in sorted(days.items()):
        group.sort(key=lambda n: str(n.get("created_at") or ""))
        folder = root / project
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{day}-session.md"
        path.write_text(render_day(project, day, group), encoding="utf-8")
        written.append(path)
    return written


def render_day(project: str, day: str, notes: list[dict[str, Any]]) -> str:
    tags = sorted({tag for note in notes for tag in note.get("tags") or []})
    created = str(notes[0].get("created_at") or day)
    lines = ["---", f"project: {_scalar(project)}", "sources: []", f"created: {created}",
             f"tags: [{', '.join(_scalar(t) for t in tags)}]", "---", "", f"# {day} Session",
             ""]
    for category, heading in HEADINGS.items():
        chosen = [n for n in notes if n.get("category") == category]
        if chosen:
            lines += [f"## {heading}", ""]
            for note in chosen:
                lines += [render_entry(note), ""]
    return "\n".join(lines).rstrip() + "\n"


def render_entry(note: dict[str, Any]) -> str:
    lines = [f"### {note['title']}", f"<!-- memory-id: {note['id']} -->",
             f"**What:** {note['what']}"]
    for label, name in (("Why", "why"), ("Impact", "impact")):
        if note.get(name):
            lines.append(f"**{label}:** {note[name]}")
    # Always written, even empty: without it a reader falls back to the file's tags.
    lines.append(f"**Tags:** {', '.join(note.get('tags') or [])}".rstrip())
    if note.get("related_files"):
        lines.append(f"**Files:** {', '.join(note['related_files'])}")
    if note.get("details"):
        lines += ["", "<details>", note["details"], "</details>"]
    return "\n".join(lines)


def _scalar(value: str) -> str:
    """A YAML flow scalar: bare when YAML reads it back as the same string."""
    try:
        if yaml.safe_load(value) == value and "," not in value and "]" not in value:
            return value
    except yaml.YAMLError:
        pass
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
