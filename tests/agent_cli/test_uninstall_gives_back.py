"""`memory setup` then `memory uninstall` gives back exactly what was there: the same bytes
and the same kind of inode (no file, a file, a symlink to the same target), for every
client and every shape its config file comes in: absent, empty, an empty server map, an
empty object, other servers, no final newline, Windows line endings, a byte order mark, a
symlinked file and a symlinked folder (dotfile managers). Setup writes through symlinks.

A file changed after setup (the client rewrote it) loses our entry only: the person's
objects and the file stay, and only what setup created goes."""

from __future__ import annotations

import json
import os
import stat
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest

from agent_cli import jsonc
from agent_cli.config_formats import AGENTS_BEGIN

URL = "https://memory.example.com/mcp"
OTHER_URL = "http://127.0.0.1:8000/mcp"
NAME = "echo-memory"

# The user config of each client, relative to HOME, and the keys of its server map.
FILES = {
    "claude-code": (".claude.json", ["mcpServers"]),
    "cursor": (".cursor/mcp.json", ["mcpServers"]),
    "windsurf": (".codeium/windsurf/mcp_config.json", ["mcpServers"]),
    "claude-desktop": (".config/Claude/claude_desktop_config.json", ["mcpServers"]),
    "opencode": (".config/opencode/opencode.json", ["mcp", "servers"]),
    "codex": (".codex/config.toml", ["mcp_servers"]),
    "codex-agents": (".codex/AGENTS.md", None),
}


def _json_with_servers(keys: list[str], servers: str) -> str:
    inner = servers
    for key in reversed(keys[1:]):
        inner = f'{{"{key}": {inner}}}'
    return ('{\n  "theme": "dark",\n  "' + keys[0] + '": ' + inner
            + ',\n  "tips": [1, 2,   3]\n}\n')


def shapes(client: str) -> dict[str, str | None]:
    """Every shape of this client's file: its text (None: no file)."""
    if client == "codex":
        other = ('# mine\nmodel = "gpt-5-codex"   # fast enough\n\n[mcp_servers.github]\n'
                 'command = "gh-mcp"\n')
        empty_map = 'model = "o3"\n\n[mcp_servers]\n'
    elif client == "codex-agents":
        other, empty_map = "# House rules\n\nRun the tests before every commit.\n", None
    else:
        keys = FILES[client][1]
        other = _json_with_servers(keys, '{"github": {"command": "gh-mcp", "args": ["-r"]}}')
        empty_map = _json_with_servers(keys, "{}")
    found: dict[str, str | None] = {"absent": None, "empty": "", "other-servers": other,
                                    "no-final-newline": other.rstrip("\n"),
                                    "crlf": other.replace("\n", "\r\n"),
                                    "bom": "\ufeff" + other}
    if empty_map is not None:
        found["empty-server-map"] = empty_map
    if client not in {"codex", "codex-agents"}:
        found["empty-object"] = "{}"
    return found


def _cases():
    for client, (relative, _) in FILES.items():
        has_own_folder = "/" in relative
        for shape in shapes(client):
            for link in ("", "symlinked-file", "symlinked-folder"):
                if link == "symlinked-file" and shape == "absent":
                    continue
                if link == "symlinked-folder" and not has_own_folder:
                    continue  # ~/.claude.json sits in HOME itself
                yield pytest.param(client, shape, link, id=f"{client}-{shape}-{link or 'plain'}")


@dataclass(frozen=True)
class Inode:
    kind: str  # "absent", "file", "folder" or "symlink"
    link: str | None
    data: bytes | None  # what reading through the path gives
    mode: int | None


def inode(path: Path) -> Inode:
    if path.is_symlink():
        return Inode("symlink", os.readlink(path), path.read_bytes() if path.is_file() else None,
                     None)
    if not path.exists():
        return Inode("absent", None, None, None)
    if path.is_dir():
        return Inode("folder", None, None, None)
    return Inode("file", None, path.read_bytes(), stat.S_IMODE(path.stat().st_mode))


def arrange(box, client: str, shape: str, link: str) -> Path:
    """The config file of CLIENT in SHAPE, plainly, through a symlinked file, or inside a
    symlinked folder (the real ones live in ~/dotfiles)."""
    relative = FILES[client][0]
    path = box.home / relative
    text = shapes(client)[shape]
    dotfiles = box.home / "dotfiles"
    if link == "symlinked-folder":
        real_folder = dotfiles / "folder"
        real_folder.mkdir(parents=True)
        path.parent.parent.mkdir(parents=True, exist_ok=True)
        path.parent.symlink_to(real_folder, target_is_directory=True)
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
    if text is None:
        return path
    data = text.encode("utf-8")
    if link == "symlinked-file":
        real = dotfiles / path.name
        real.parent.mkdir(parents=True, exist_ok=True)
        real.write_bytes(data)
        real.chmod(0o600)
        path.symlink_to(os.path.relpath(real, path.parent))  # relative, as stow makes them
    else:
        path.write_bytes(data)
        path.chmod(0o600)
    return path


def entry_of(client: str, path: Path) -> dict | str:
    text = path.read_bytes().decode("utf-8").removeprefix("\ufeff")
    if client == "codex":
        return tomllib.loads(text)["mcp_servers"][NAME]
    if client == "codex-agents":
        assert text.count(AGENTS_BEGIN) == 1
        return "the block"
    data = jsonc.parse(text).data()
    for key in FILES[client][1]:
        data = data[key]
    return data[NAME]


def setup_args(client: str) -> list[str]:
    return ["setup", "codex" if client == "codex-agents" else client, "--no-check"]


def uninstall_args(client: str) -> list[str]:
    return ["uninstall", "codex" if client == "codex-agents" else client]


def no_record_left(box) -> bool:
    state = box.home / ".local" / "state" / "echo-memory"
    return not (state / "installs.json").exists()


@pytest.mark.parametrize(("client", "shape", "link"), list(_cases()))
def test_setup_then_uninstall_gives_back_the_same_bytes_and_inode(box, monkeypatch, client,
                                                                   shape, link):
    monkeypatch.setenv("ECHO_MEM_URL", URL)
    path = arrange(box, client, shape, link)
    folder_before = inode(path.parent)
    before = inode(path)

    done = box.run(*setup_args(client))
    assert done.exit_code == 0, done.output
    assert entry_of(client, path)  # written where the client reads, through any symlink
    written = inode(path)
    if before.kind != "absent":
        assert (written.kind, written.link) == (before.kind, before.link)
    if before.mode is not None:
        assert written.mode == before.mode
    assert inode(path.parent).kind == folder_before.kind
    again = box.run(*setup_args(client))
    assert again.exit_code == 0 and inode(path) == written, again.output

    removed = box.run(*uninstall_args(client))
    assert removed.exit_code == 0, removed.output
    assert inode(path) == before
    assert inode(path.parent).kind == folder_before.kind
    assert not list(path.parent.glob("*.echo-memory.tmp")) if path.parent.exists() else True
    assert no_record_left(box)


@pytest.mark.parametrize("client", ["claude-code", "cursor", "opencode", "codex"])
def test_a_changed_endpoint_then_uninstall_still_gives_back_the_original(box, monkeypatch,
                                                                         client):
    path = arrange(box, client, "crlf", "")
    before = inode(path)
    for url in (URL, OTHER_URL):
        monkeypatch.setenv("ECHO_MEM_URL", url)
        assert box.run(*setup_args(client)).exit_code == 0
    assert OTHER_URL in path.read_text()
    assert box.run(*uninstall_args(client)).exit_code == 0
    assert inode(path) == before


@pytest.mark.parametrize("shape", ["absent", "empty-server-map", "empty-object"])
def test_a_file_the_client_rewrote_loses_our_entry_and_what_setup_created_only(
        box, monkeypatch, shape):
    monkeypatch.setenv("ECHO_MEM_URL", URL)
    path = arrange(box, "cursor", shape, "")
    assert box.run("setup", "cursor", "--no-check").exit_code == 0
    data = json.loads(path.read_text())
    data["lastOpened"] = "today"  # the client writes the file its own way
    path.write_text(json.dumps(data, indent=4))

    removed = box.run("uninstall", "cursor")
    assert removed.exit_code == 0, removed.output
    assert "only our entry was taken out" in removed.output
    left = json.loads(path.read_text())
    assert left.pop("lastOpened") == "today"
    expected = json.loads(shapes("cursor")[shape] or "{}")
    assert left == expected  # the person's empty map stays; the one setup made goes


def test_the_file_setup_created_goes_once_only_what_setup_wrote_is_left(box, monkeypatch):
    monkeypatch.setenv("ECHO_MEM_URL", URL)
    path = arrange(box, "cursor", "absent", "")
    assert box.run("setup", "cursor", "--no-check").exit_code == 0
    path.write_text(path.read_text().replace("\n", "\n\n"))  # reformatted, same content
    assert box.run("uninstall", "cursor").exit_code == 0
    assert not path.exists()


def test_an_entry_without_a_record_is_taken_out_and_everything_else_stays(box):
    # What an older `memory setup` left: our entry in the person's empty map, no record.
    path = box.home / ".cursor" / "mcp.json"
    path.parent.mkdir()
    path.write_text('{\n  "mcpServers": {\n    "echo-memory": {"url": "u"}\n  }\n}\n')
    removed = box.run("uninstall", "cursor")
    assert removed.exit_code == 0, removed.output
    assert json.loads(path.read_text()) == {"mcpServers": {}}
    assert "setup left no record" in removed.output


def test_a_dangling_symlink_stays_dangling(box, monkeypatch):
    monkeypatch.setenv("ECHO_MEM_URL", URL)
    path = box.home / ".cursor" / "mcp.json"
    path.parent.mkdir()
    real = box.home / "dotfiles" / "mcp.json"
    path.symlink_to(real)  # the dotfile manager has not written it yet
    assert box.run("setup", "cursor", "--no-check").exit_code == 0
    assert path.is_symlink() and NAME in json.loads(real.read_text())["mcpServers"]
    assert box.run("uninstall", "cursor").exit_code == 0
    assert path.is_symlink() and not real.exists()
