"""Reading an EchoVault vault (the layout is described in vault.py) into VaultNotes, oldest
first, forgivingly: a vault may be years old or edited by hand, so odd front matter is a
warning for that file, never a crash, and an entry that cannot be a note is skipped with
the reason."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from agent_cli.vault import HEADINGS, Skipped, Vault, VaultNote, chains
from agent_cli.vault_text import blank, read_details, read_list, read_value

TITLE_CHARS = 60  # the server's limit (EchoVault's "max 60 chars", which it never enforced)
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


def _read_file(path: Path, root: Path, vault: Vault) -> None:
    where = str(path.relative_to(root))
    text = path.read_bytes().decode("utf-8", errors="replace").lstrip("\ufeff")
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    front, body, problems = _front_matter(text)
    project = front.get("project")
    if not isinstance(project, str) or blank(project):
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
