"""Where the `memory` command finds its server: the environment, its own config file, or the
Echo Memory running on this machine.

Order, per setting: ECHO_MEM_URL / ECHO_MEM_API_KEY / ECHO_MEM_MEMORY; else the config file
this command writes (`memory config set`, mode 0600); else, for the endpoint only, the
server `echo-memory quickstart` / `serve` recorded in its home (server.json).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import platformdirs
import tomlkit

URL_ENV = "ECHO_MEM_URL"
KEY_ENV = "ECHO_MEM_API_KEY"
MEMORY_ENV = "ECHO_MEM_MEMORY"
CONFIG_ENV = "ECHO_MEM_CONFIG"

# The server's own home and the file it records itself in (echomem/home.py, echomem/server.py);
# read here by name, since this side never imports the server.
SERVER_HOME_ENV = "ECHO_MEMORY_HOME"
SERVER_FILE = "server.json"


@dataclass
class Settings:
    url: str | None
    key: str | None
    memory: str | None
    source: dict[str, str] = field(default_factory=dict)  # setting -> where it came from


def config_path() -> Path:
    configured = os.environ.get(CONFIG_ENV, "").strip()
    if configured:
        return Path(configured).expanduser()
    base = os.environ.get("XDG_CONFIG_HOME", "").strip() or str(Path.home() / ".config")
    return Path(base) / "echo-memory" / "agent.toml"


def read_file() -> dict[str, str]:
    path = config_path()
    try:
        data = tomlkit.parse(path.read_text(encoding="utf-8")).unwrap()
    except FileNotFoundError:
        return {}
    return {k: str(v) for k, v in data.items() if k in {"url", "key", "memory"} and v}


def write_file(updates: dict[str, str | None]) -> Path:
    """Merge `updates` into the config file (None removes a setting); the file is 0600."""
    path = config_path()
    try:
        doc = tomlkit.parse(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        doc = tomlkit.document()
    for key, value in updates.items():
        if value is None:
            doc.pop(key, None)
        else:
            doc[key] = value
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(tomlkit.dumps(doc))
    os.chmod(path, 0o600)  # an older file keeps its mode through O_CREAT: make it private
    return path


def server_home() -> Path:
    configured = os.environ.get(SERVER_HOME_ENV, "").strip()
    if configured:
        return Path(configured).expanduser()
    return Path(platformdirs.user_data_dir("echo-memory", appauthor=False))


def local_endpoint() -> str | None:
    """The endpoint of the server running on this machine, as `echo-memory serve` recorded it."""
    try:
        data = json.loads((server_home() / SERVER_FILE).read_text())
        host, port, pid = str(data["host"]), int(data["port"]), int(data["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not _alive(pid):
        return None
    # As the server prints its own URL (echomem/commands/serve.py): this machine is localhost.
    host = "localhost" if host in {"127.0.0.1", "::1", "localhost", "0.0.0.0", "::", ""} else host
    host = f"[{host}]" if ":" in host else host
    return f"http://{host}:{port}/mcp"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def resolve() -> Settings:
    stored = read_file()
    settings = Settings(None, None, None)
    for name, variable in (("url", URL_ENV), ("key", KEY_ENV), ("memory", MEMORY_ENV)):
        value = os.environ.get(variable, "").strip()
        if value:
            setattr(settings, name, value)
            settings.source[name] = f"${variable}"
        elif stored.get(name):
            setattr(settings, name, stored[name])
            settings.source[name] = str(config_path())
    if not settings.url:
        found = local_endpoint()
        if found:
            settings.url = found
            settings.source["url"] = f"the local server ({server_home() / SERVER_FILE})"
    return settings


def project_root(start: Path | None = None) -> Path:
    """The git root above `start` (the working directory), or `start` itself outside git."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / ".git").exists():
            return folder
    return here


def project_name(start: Path | None = None) -> str:
    return project_root(start).name


def git_project(start: Path | None = None) -> str | None:
    """The git root's name, or None outside a repository (a client started us in / or ~)."""
    root = project_root(start)
    return root.name if (root / ".git").exists() and root.name else None
