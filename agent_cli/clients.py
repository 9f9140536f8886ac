"""`memory setup` / `memory uninstall`: where each client keeps its config, and the edits.

The entries themselves come from echomem.agent_clients (the source the dashboard and
docs/agents.md use too); this module only knows where they go and how to put them there
without disturbing anything else in the file, and (install_record) how to give the file
back exactly as it was.
"""

from __future__ import annotations

import difflib
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_cli import created_dirs, install_record, jsonc, tomlfile
from echomem.agent_clients import (
    HEADERS_HELPER_CLIENTS,
    KEY_ENV,
    OPENCODE_CURRENT,
    OPENCODE_LAYOUTS,
    REMOTE_CLIENTS,
    WORKSPACE_HEADER,
    http_entry,
    servers_path,
    stdio_entry,
)
from echomem.request_context import PROJECT_HEADER

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


_KEEP = object()  # Change.record: leave what is remembered as it is


@dataclass
class Change:
    path: Path  # the file as the client names it
    target: Path  # the file actually read and written: a symlink's target
    before: str | None  # None: the file did not exist
    after: str | None  # None: the file is (to be) deleted
    name: str = ""
    record: Any = field(default=_KEEP)  # a Record to remember, None to forget, or _KEEP
    note: str = ""  # said after the summary, e.g. why a removal was not exact

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
            verb = "deleted (setup created it)"
        else:
            verb = "updated"
        diff = difflib.unified_diff((self.before or "").splitlines(),
                                    (self.after or "").splitlines(), lineterm="", n=1)
        body = [line for line in diff if not line.startswith(("---", "+++"))]
        lines = [f"{where}: {verb}", *(f"  {line}" for line in body)]
        return "\n".join(lines + ([f"  note: {self.note}"] if self.note else []))

    def apply(self) -> None:
        if self.changed:
            self._write()
        if self.record is not _KEEP:
            install_record.save(self.target, self.name, self.record)

    def _write(self) -> None:
        # A dotfile manager's symlink (to the file or to its folder) stays as it is: the
        # file it points to is what changes, or goes.
        target = self.target
        if self.after is None:
            target.unlink(missing_ok=True)
            return
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
    return next((path for path in paths if path.exists() or path.is_symlink()), paths[0])


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
                                    project_root / "opencode.jsonc",
                                    project_root / ".opencode" / "opencode.json",
                                    project_root / ".opencode" / "opencode.jsonc"),
    }[client]


def agents_file(*, project_root: Path | None) -> Path:
    """Where Codex reads its standing instructions for the chosen scope."""
    return project_root / "AGENTS.md" if project_root else _codex_home() / "AGENTS.md"


def memory_command() -> list[str]:
    """How a client starts this command: by absolute path, since EchoVault's own `memory`
    may be first on PATH on the very machines that use both."""
    script = Path(sys.executable).parent / ("memory.exe" if sys.platform == "win32" else "memory")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "agent_cli"]


def bridge_command(project: str | None) -> tuple[str, list[str]]:
    command = [*memory_command(), "mcp", *(["--project", project] if project else [])]
    return command[0], command[1:]


def headers_helper() -> str:
    """The shell command Claude Code runs, from the folder it was started in, for the
    project header (`memory project-header`)."""
    words = [*memory_command(), "project-header"]
    if sys.platform == "win32":
        return subprocess.list2cmdline(words)
    return shlex.join(words)


def entry(client: str, *, url: str | None, stdio: bool, project: str | None,
          opencode_layout: str = OPENCODE_CURRENT) -> dict[str, Any]:
    """Our entry for CLIENT. `project` is the project of a --project install; a global one
    names the project per folder where the client's config can (WORKSPACE_HEADER,
    HEADERS_HELPER_CLIENTS)."""
    if stdio or client not in REMOTE_CLIENTS:
        command, args = bridge_command(project)
        return stdio_entry(client, command, args, opencode_layout=opencode_layout)
    if not url:
        raise SetupError("no endpoint to write: set ECHO_MEM_URL or run `memory config set "
                         "--url URL` (or pass --stdio, which finds it when the client starts)")
    headers = ({PROJECT_HEADER: project} if project else
               {PROJECT_HEADER: WORKSPACE_HEADER[client]} if client in WORKSPACE_HEADER else
               None)
    helper = headers_helper() if not project and client in HEADERS_HELPER_CLIENTS else None
    return http_entry(client, url, KEY_ENV, headers, opencode_layout=opencode_layout,
                      headers_helper=helper)


def global_project_note(client: str, stdio: bool) -> str:
    """How a global install of CLIENT tells the server which project a note belongs to."""
    label = LABELS[client]
    if client == "claude-desktop":
        return (f"{label} starts the bridge outside any project, so notes name no project "
                "unless the agent passes one.")
    if stdio or client not in REMOTE_CLIENTS:
        return (f"the bridge names the project after the git root of the folder {label} "
                "starts it in (no project outside a repository).")
    if client in WORKSPACE_HEADER:
        return (f"{label} sends the name of the folder it has open as the project "
                f"({PROJECT_HEADER}: {WORKSPACE_HEADER[client]}).")
    if client in HEADERS_HELPER_CLIENTS:
        return (f"{label} runs `memory project-header` when it connects and sends the git "
                "root of the folder it was started in as the project.")
    return (f"{label}'s config cannot name the project of the folder it works in, so over "
            "HTTP a global install sends no project and notes of every project mix. Run "
            f"`memory setup {client} --project` in each project (its config names it), or "
            f"`memory setup {client} --stdio` (the bridge names the project after the folder "
            f"{label} starts it in).")


def _read(path: Path) -> str | None:
    try:
        with path.open(encoding="utf-8", newline="") as handle:  # CRLF stays CRLF
            return handle.read()
    except FileNotFoundError:
        return None
    except IsADirectoryError as exc:
        raise SetupError(f"{path} is a folder, not a config file; move it, then run again"
                         ) from exc
    except UnicodeDecodeError as exc:
        raise SetupError(f"{path} is not UTF-8 text; fix or move it, then run again") from exc


# --- the three kinds of file --------------------------------------------------------------

class _JsonServers:
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


class _TomlServers:
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


class _AgentsBlock:
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


# --- planning -----------------------------------------------------------------------------

def _real(path: Path) -> Path:
    """The file behind `path`, through a symlinked file or folder (dangling ones too)."""
    return Path(os.path.realpath(path))


def _readable(edit):
    """A file we cannot parse is named, with the fix, and left untouched."""
    def wrapper(kind: Any, path: Path, *args: Any) -> Change:
        try:
            return edit(kind, path, *args)
        except (jsonc.JsoncError, tomlfile.TomlError) as exc:
            raise SetupError(f"{path} could not be read ({exc}); it is left untouched: fix "
                             "it, then run again") from exc
    return wrapper


@_readable
def _install(kind: Any, path: Path, name: str, value: Any, extra: dict[str, str]) -> Change:
    target = _real(path)
    before = _read(target)
    record = install_record.load(target, name)
    restored = record.restore(before) if record and before is not None else None
    if restored is not None:  # as setup left it: the original is known exactly
        original, existed, created = restored, record.existed, record.created
    elif before is None:
        original, existed, created = "", False, kind.created(None)
    elif kind.holds(before, name):  # ours, from an earlier setup the file changed since
        prune = record.created if record else None
        original = kind.remove(before, name, prune)
        existed = record.existed if record else True
        created = record.created if record else None
    else:
        original, existed, created = before, True, kind.created(before)
    after = kind.set(before, name, value)
    remembered = install_record.record_for(after, original, existed=existed, created=created,
                                           extra=extra)
    return Change(path, target, before, after, name, remembered)


@_readable
def _uninstall(kind: Any, path: Path, name: str) -> Change:
    target = _real(path)
    before = _read(target)
    record = install_record.load(target, name)
    if before is None:
        return Change(path, target, None, None, name, None)
    restored = record.restore(before) if record else None
    if restored is not None:  # untouched since setup: give back exactly what was there
        return Change(path, target, before, restored if record.existed else None, name, None)
    if not kind.holds(before, name):
        return Change(path, target, before, before, name, None)
    after: str | None = kind.remove(before, name, record.created if record else None)
    if record and not record.existed and kind.empty(after):
        after = None
    note = ("the file changed after setup, so only our entry was taken out"
            + ("" if record else " (setup left no record of what else it added)"))
    return Change(path, target, before, after, name, None, note)


def opencode_layout(text: str | None) -> str:
    """OpenCode's layout for this file: the one it already uses, else the installed
    OpenCode's (`opencode --version`), else the current one."""
    if text and text.strip().lstrip("\ufeff").strip():
        try:
            servers = jsonc.parse(text).data().get("mcp")
        except jsonc.JsoncError:
            servers = None
        if isinstance(servers, dict) and isinstance(servers.get("servers"), dict):
            return "2"
        if isinstance(servers, dict) and any(isinstance(v, dict) and "type" in v
                                             for v in servers.values()):
            return "1"
    return _installed_opencode_major() or OPENCODE_CURRENT


def _installed_opencode_major() -> str | None:
    program = shutil.which("opencode")
    if not program:
        return None
    try:
        shown_version = subprocess.run([program, "--version"], capture_output=True, text=True,
                                       timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    found = re.search(r"(\d+)\.\d+", shown_version)
    return found.group(1) if found and found.group(1) in OPENCODE_LAYOUTS else None


def _servers_kind(client: str, path: Path, install: bool, name: str) -> tuple[Any, dict]:
    if client == "codex":
        return _TomlServers(), {}
    if client != "opencode":
        return _JsonServers(servers_path(client)), {}
    text = _read(_real(path))
    if not install and text:  # wherever our entry is
        for layout, keys in OPENCODE_LAYOUTS.items():
            kind = _JsonServers(keys)
            try:
                if kind.holds(text, name):
                    return kind, {"opencode_layout": layout}
            except jsonc.JsoncError:
                break
    layout = opencode_layout(text)
    return _JsonServers(servers_path("opencode", layout)), {"opencode_layout": layout}


def plan(client: str, *, install: bool, project_root: Path | None, stdio: bool,
         url: str | None, name: str) -> list[Change]:
    """The changes setup (install=True) or uninstall would make; nothing is written yet."""
    if client not in CLIENTS:
        raise SetupError(f"unknown client {client!r}: choose one of {', '.join(CLIENTS)}")
    path = config_file(client, project_root=project_root)
    kind, extra = _servers_kind(client, path, install, name)
    files = [(kind, path)]
    if client == "codex":
        files.append((_AgentsBlock(), agents_file(project_root=project_root)))
    changes = []
    for file_kind, file_path in files:
        if not install:
            changes.append(_uninstall(file_kind, file_path, name))
            continue
        value = None
        if file_kind is kind:
            project = project_root.name if project_root else None
            value = entry(client, url=url, stdio=stdio, project=project,
                          opencode_layout=extra.get("opencode_layout", OPENCODE_CURRENT))
        changes.append(_install(file_kind, file_path, name, value, extra))
    return changes
