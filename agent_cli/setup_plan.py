"""`memory setup` / `memory uninstall` planned: for each file the client reads, the Change
that puts our entry in or takes it out (giving back exactly what was there before setup,
when the file did not change since). Nothing is written until a Change is applied."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

from agent_cli import install_record, jsonc, tomlfile
from agent_cli.clients import CLIENTS, SetupError, agents_file, config_file, entry
from agent_cli.config_change import Change
from agent_cli.config_formats import AgentsBlock, JsonServers, TomlServers
from echomem.agent_clients import OPENCODE_CURRENT, OPENCODE_LAYOUTS, servers_path


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
        return TomlServers(), {}
    if client != "opencode":
        return JsonServers(servers_path(client)), {}
    text = _read(_real(path))
    if not install and text:  # wherever our entry is
        for layout, keys in OPENCODE_LAYOUTS.items():
            kind = JsonServers(keys)
            try:
                if kind.holds(text, name):
                    return kind, {"opencode_layout": layout}
            except jsonc.JsoncError:
                break
    layout = opencode_layout(text)
    return JsonServers(servers_path("opencode", layout)), {"opencode_layout": layout}


def plan(client: str, *, install: bool, project_root: Path | None, stdio: bool,
         url: str | None, name: str) -> list[Change]:
    """The changes setup (install=True) or uninstall would make; nothing is written yet."""
    if client not in CLIENTS:
        raise SetupError(f"unknown client {client!r}: choose one of {', '.join(CLIENTS)}")
    path = config_file(client, project_root=project_root)
    kind, extra = _servers_kind(client, path, install, name)
    files = [(kind, path)]
    if client == "codex":
        files.append((AgentsBlock(), agents_file(project_root=project_root)))
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
