"""The three kinds of file setup edits, each able to set, find and remove our entry without
disturbing anything else: a JSON (with comments) servers object, Codex's TOML table, and
the block setup adds to Codex's AGENTS.md."""

from __future__ import annotations

from typing import Any

from agent_cli import jsonc, tomlfile

AGENTS_BEGIN = "<!-- BEGIN echo-memory (`memory uninstall codex` removes this block) -->"
AGENTS_END = "<!-- END echo-memory -->"
AGENTS_TEXT = """## Memory (Echo Memory)

The `echo-memory` MCP server keeps notes across sessions: decisions, bugs, patterns.

- At the start of a task, call `memory_context` to load this project's recent notes, and
  `memory_search` for anything the task touches before you decide.
- Before you end a task in which you changed code, fixed a bug, made a decision or learned
  something not obvious from the code, call `memory_save` (title, what, why, impact,
  category, tags, related_files; details for a future agent with no context).
- Do not save typo fixes, formatting, or what the code already says plainly."""


class JsonServers:
    """A JSON (or JSON with comments) file with our entry at `path`.`name`."""

    def __init__(self, path: tuple[str, ...]):
        self.path = list(path)

    def start(self, text: str | None) -> str:
        return text if text and text.strip().lstrip("\ufeff").strip() else "{}\n"

    def set(self, text: str | None, name: str, value: Any) -> str:
        return jsonc.set_member(self.start(text), self.path, name, value)

    def holds(self, text: str, name: str) -> bool:
        return bool(text.strip().lstrip("\ufeff").strip()) and jsonc.holds(text, self.path,
                                                                             name)

    def remove(self, text: str, name: str, prune_from: int | None) -> str:
        return jsonc.remove_member(text, self.path, name, prune_from=prune_from)

    def created(self, text: str | None) -> int | None:
        return jsonc.missing_depth(self.start(text), self.path)

    def empty(self, text: str) -> bool:
        return not text.strip().lstrip("\ufeff").strip() or jsonc.is_empty(text)


class TomlServers:
    """Codex's TOML: our [mcp_servers.NAME] table."""

    def set(self, text: str | None, name: str, value: Any) -> str:
        return tomlfile.set_server(text or "", name, value)

    def holds(self, text: str, name: str) -> bool:
        return tomlfile.holds(text, name)

    def remove(self, text: str, name: str, prune_from: int | None) -> str:
        return tomlfile.remove_server(text, name, prune=prune_from is not None)

    def created(self, text: str | None) -> int | None:
        return None if tomlfile.has_servers_table(text or "") else 0

    def empty(self, text: str) -> bool:
        return not text.lstrip("\ufeff").strip()


class AgentsBlock:
    """A Markdown file (AGENTS.md) with our block between two marker comments."""

    def set(self, text: str | None, name: str, value: Any) -> str:
        text = text or ""
        newline = jsonc.newline_of(text)
        block = f"{AGENTS_BEGIN}\n{AGENTS_TEXT}\n{AGENTS_END}".replace("\n", newline)
        span = self._span(text)
        if span:
            return text[:span[0]] + block + text[span[1]:]
        body = text.removeprefix("\ufeff")
        separator = "" if not body else newline if text.endswith("\n") else newline * 2
        return text + separator + block + newline

    def _span(self, text: str) -> tuple[int, int] | None:
        begin, end = text.find(AGENTS_BEGIN), text.find(AGENTS_END)
        return (begin, end + len(AGENTS_END)) if begin >= 0 and end > begin else None

    def holds(self, text: str, name: str) -> bool:
        return self._span(text) is not None

    def remove(self, text: str, name: str, prune_from: int | None) -> str:
        begin, stop = self._span(text)
        newline = jsonc.newline_of(text)
        if text.startswith(newline, stop):
            stop += len(newline)
        if text[:begin].endswith(newline * 2) or text[:begin] == newline:
            begin -= len(newline)  # the blank line setup put before the block
        return text[:begin] + text[stop:]

    def created(self, text: str | None) -> int | None:
        return None

    def empty(self, text: str) -> bool:
        return not text.lstrip("\ufeff").strip()
