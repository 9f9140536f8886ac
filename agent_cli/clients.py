"""Where each client keeps its config, and our entry for it: `memory setup` puts that entry
there (setup_plan.py plans the edit, config_formats.py knows the kinds of file).

The entries themselves come from echomem.agent_clients (the source the dashboard and
docs/agents.md use too); this module only knows where they go and, for a global install,
how each client tells the server which project a note belongs to.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

from echomem.agent_clients import (
    HEADERS_HELPER_CLIENTS,
    KEY_ENV,
    OPENCODE_CURRENT,
    REMOTE_CLIENTS,
    WORKSPACE_HEADER,
    http_entry,
    stdio_entry,
)
from echomem.request_context import PROJECT_HEADER

CLIENTS = ("claude-code", "cursor", "codex", "opencode", "windsurf", "claude-desktop")
LABELS = {"claude-code": "Claude Code", "cursor": "Cursor", "codex": "Codex",
          "opencode": "OpenCode", "windsurf": "Windsurf", "claude-desktop": "Claude Desktop"}


class SetupError(Exception):
    """A request this client cannot honour, or a file we must not touch; says the fix."""


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
