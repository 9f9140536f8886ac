"""`memory setup` / `memory uninstall`: where each client keeps its config, and the edits.

The entries themselves come from echomem.agent_clients (the source the dashboard and
docs/agents.md use too); this module only knows where they go and how to put them there
without disturbing anything else in the file.
"""

from __future__ import annotations

import difflib
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_cli import created_dirs, jsonc, tomlfile
from agent_cli.remote import PROJECT_HEADER
from echomem.agent_clients import KEY_ENV, REMOTE_CLIENTS, SERVERS_KEY, http_entry, stdio_entry

CLIENTS = ("claude-code", "cursor", "codex", "opencode", "windsurf", "claude-desktop")
LABELS = {"claude-code": "Claude Code", "cursor": "Cursor", "codex": "Codex",
          "opencode": "OpenCode", "windsurf": "Windsurf", "claude-desktop": "Claude Desktop"}
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


class SetupError(Exception):
    """A request this client cannot honour, or a file we must not touch; says the fix."""


@dataclass
class Change:
    path: Path
    before: str | None  # None: the file did not exist
    after: str | None  # None: the file is (to be) deleted

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def summary(self) -> str:
        where = shown(self.path)
        if not self.changed:
            return f"{where}: already up to date"
        if self.before is None:
            verb = "created"
        elif self.after is None:
            verb = "deleted (nothing else was in it)"
        else:
            verb = "updated"
        diff = difflib.unified_diff((self.before or "").splitlines(),
                                    (self.after or "").splitlines(), lineterm="", n=1)
        body = [line for line in diff if not line.startswith(("---", "+++"))]
        return "\n".join([f"{where}: {verb}", *(f"  {line}" for line in body)])

    def apply(self) -> None:
        if not self.changed:
            return
        if self.after is None:
            self.path.unlink(missing_ok=True)
            return
        # A dotfile manager's symlink stays a symlink: the file it points to is edited.
        target = self.path.resolve() if self.path.is_symlink() else self.path
        made = created_dirs.missing(target.parent)
        target.parent.mkdir(parents=True, exist_ok=True)
        created_dirs.remember(made)
        mode = target.stat().st_mode & 0o777 if target.exists() else None
        temporary = target.with_name(target.name + ".echo-memory.tmp")
        temporary.write_text(self.after, encoding="utf-8", newline="")
        if mode is not None:
            os.chmod(temporary, mode)
        os.replace(temporary, target)  # whole or nothing: a client never reads half


def shown(path: Path) -> str:
    home = Path.home()
    try:
        return "~/" + str(path.relative_to(home))
    except ValueError:
        return str(path)


def _config_home() -> Path:
    return Path(os.environ.get("XDG_CONFIG_HOME", "").strip() or Path.home() / ".config")


def _codex_home() -> Path:
    configured = os.environ.get("CODEX_HOME", "").strip()
    return Path(configured).expanduser() if configured else Path.home() / ".codex"


def _claude_desktop_config() -> Path:
    if sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    elif sys.platform == "win32":
        base = Path(os.environ.get("APPDATA") or Path.home() / "AppData" / "Roaming")
    else:
        base = _config_home()
    return base / "Claude" / "claude_desktop_config.json"


def _first_existing(*paths: Path) -> Path:
    return next((path for path in paths if path.exists()), paths[0])


def config_file(client: str, *, project_root: Path | None) -> Path:
    """The file the client reads its servers from: user config, or the project's."""
    home = Path.home()
    if project_root is None:
        return {
            "claude-code": lambda: home / ".claude.json",
            "cursor": lambda: home / ".cursor" / "mcp.json",
            "codex": lambda: _codex_home() / "config.toml",
            "opencode": lambda: _first_existing(_config_home() / "opencode" / "opencode.json",
                                                _config_home() / "opencode" / "opencode.jsonc"),
            "windsurf": lambda: home / ".codeium" / "windsurf" / "mcp_config.json",
            "claude-desktop": _claude_desktop_config,
        }[client]()
    if client in {"windsurf", "claude-desktop"}:
        raise SetupError(f"{LABELS[client]} has no per-project config: run `memory setup "
                         f"{client}` without --project (its config is global)")
    return {
        "claude-code": project_root / ".mcp.json",
        "cursor": project_root / ".cursor" / "mcp.json",
        "codex": project_root / ".codex" / "config.toml",
        "opencode": _first_existing(project_root / "opencode.json",
                                    project_root / "opencode.jsonc"),
    }[client]


def agents_file(*, project_root: Path | None) -> Path:
    """Where Codex reads its standing instructions for the chosen scope."""
    return project_root / "AGENTS.md" if project_root else _codex_home() / "AGENTS.md"


def bridge_command(project: str | None) -> tuple[str, list[str]]:
    """How a client starts our stdio bridge: by absolute path, since EchoVault's own
    `memory` may be first on PATH on the very machines that use both."""
    args = ["mcp", *(["--project", project] if project else [])]
    script = Path(sys.executable).parent / ("memory.exe" if sys.platform == "win32" else "memory")
    if script.exists():
        return str(script), args
    return sys.executable, ["-m", "agent_cli", *args]


def entry(client: str, *, url: str | None, stdio: bool, project: str | None) -> dict[str, Any]:
    if stdio or client not in REMOTE_CLIENTS:
        command, args = bridge_command(project)
        return stdio_entry(client, command, args)
    if not url:
        raise SetupError("no endpoint to write: set ECHO_MEM_URL or run `memory config set "
                         "--url URL` (or pass --stdio, which finds it when the client starts)")
    headers = {PROJECT_HEADER: project} if project else None
    return http_entry(client, url, KEY_ENV, headers)


def _read(path: Path) -> str | None:
    try:
        with path.open(encoding="utf-8", newline="") as handle:  # CRLF stays CRLF
            return handle.read()
    except FileNotFoundError:
        return None
    except UnicodeDecodeError as exc:
        raise SetupError(f"{path} is not UTF-8 text; fix or move it, then run again") from exc


def _edit_servers(client: str, path: Path, name: str, value: dict[str, Any] | None) -> Change:
    before = _read(path)
    try:
        if path.suffix == ".toml":
            text = before or ""
            after: str | None = (tomlfile.set_server(text, name, value) if value is not None
                                 else tomlfile.remove_server(text, name))
        else:
            text = before if before and before.strip() else "{}\n"
            key = [SERVERS_KEY[client]]
            after = (jsonc.set_member(text, key, name, value) if value is not None
                     else jsonc.remove_member(text, key, name))
    except (jsonc.JsoncError, tomlfile.TomlError) as exc:
        raise SetupError(f"{path} could not be read ({exc}); it is left untouched: fix it, "
                         "then run again") from exc
    if value is None and after == text:  # nothing of ours was there
        after = before
    elif value is None and not (after or "").strip():
        after = None  # the file held nothing but our entry: it goes
    return Change(path, before, after)


def _edit_agents(path: Path, install: bool) -> Change:
    before = _read(path)
    text = before or ""
    newline = jsonc.newline_of(text)
    block = f"{AGENTS_BEGIN}\n{AGENTS_TEXT}\n{AGENTS_END}".replace("\n", newline)
    begin, end = text.find(AGENTS_BEGIN), text.find(AGENTS_END)
    if begin >= 0 and end > begin:
        stop = end + len(AGENTS_END)
        if install:
            return Change(path, before, text[:begin] + block + text[stop:])
        if text.startswith(newline, stop):
            stop += len(newline)
        if text[:begin].endswith(newline * 2) or text[:begin] == newline:
            begin -= len(newline)  # the blank line setup put before the block
        after = text[:begin] + text[stop:]
        return Change(path, before, after if after.strip() else None)
    if not install:
        return Change(path, before, before)
    separator = "" if not text else newline if text.endswith("\n") else newline * 2
    return Change(path, before, text + separator + block + newline)


def plan(client: str, *, install: bool, project_root: Path | None, stdio: bool,
         url: str | None, name: str) -> list[Change]:
    """The changes setup (install=True) or uninstall would make; nothing is written yet."""
    if client not in CLIENTS:
        raise SetupError(f"unknown client {client!r}: choose one of {', '.join(CLIENTS)}")
    path = config_file(client, project_root=project_root)
    value = None
    if install:
        project = project_root.name if project_root else None
        value = entry(client, url=url, stdio=stdio, project=project)
    changes = [_edit_servers(client, path, name, value)]
    if client == "codex":
        changes.append(_edit_agents(agents_file(project_root=project_root), install))
    return changes
