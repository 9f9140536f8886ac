"""OpenCode's config as its current documentation writes it (opencode.ai/docs/mcp-servers):
OpenCode 2 lists servers under mcp.servers and has no `enabled`; OpenCode 1 lists them
directly under mcp, with `enabled`. Setup writes the layout the file already uses, else the
one of the OpenCode installed (`opencode --version`), else OpenCode 2's; uninstall finds our
entry in either."""

from __future__ import annotations

import json
import os
import stat

import pytest

from agent_cli import jsonc

URL = "https://memory.example.com/mcp"
REMOTE_V2 = {"type": "remote", "url": URL, "oauth": False,
             "headers": {"Authorization": "Bearer {env:ECHO_MEM_API_KEY}"}}
REMOTE_V1 = {**REMOTE_V2, "enabled": True}
V1_FILE = ('{\n  "$schema": "https://opencode.ai/config.json",\n  "mcp": {\n    "github": '
           '{"type": "local", "command": ["gh-mcp"], "enabled": true}\n  }\n}\n')
V2_FILE = ('{\n  "$schema": "https://opencode.ai/config.json",\n  "mcp": {\n    "servers": {\n'
           '      "github": {"type": "local", "command": ["gh-mcp"]},\n    },\n  },\n}\n')


def fake_opencode(box, monkeypatch, version: str) -> None:
    """An `opencode` on PATH that answers --version as that release does."""
    folder = box.home / "bin"
    folder.mkdir()
    program = folder / "opencode"
    program.write_text(f"#!/bin/sh\necho '{version}'\n")
    program.chmod(program.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")


def opencode_file(box):
    return box.home / ".config" / "opencode" / "opencode.json"


def test_a_new_file_gets_opencode_2s_layout(box, monkeypatch):
    monkeypatch.setenv("ECHO_MEM_URL", URL)
    assert box.run("setup", "opencode", "--no-check").exit_code == 0
    data = json.loads(opencode_file(box).read_text())
    assert data["mcp"] == {"servers": {"echo-memory": REMOTE_V2}}


@pytest.mark.parametrize(("version", "layout"), [("1.17.9", "1"), ("opencode 2.0.3", "2")])
def test_without_a_file_the_installed_opencode_decides(box, monkeypatch, version, layout):
    monkeypatch.setenv("ECHO_MEM_URL", URL)
    fake_opencode(box, monkeypatch, version)
    assert box.run("setup", "opencode", "--no-check").exit_code == 0
    mcp = json.loads(opencode_file(box).read_text())["mcp"]
    assert mcp == ({"echo-memory": REMOTE_V1} if layout == "1" else
                   {"servers": {"echo-memory": REMOTE_V2}})


@pytest.mark.parametrize(("text", "layout"), [(V1_FILE, "1"), (V2_FILE, "2")])
@pytest.mark.parametrize("transport", ["http", "stdio"])
def test_a_file_keeps_its_own_layout_and_uninstall_finds_it(box, monkeypatch, text, layout,
                                                            transport):
    monkeypatch.setenv("ECHO_MEM_URL", URL)
    fake_opencode(box, monkeypatch, "2.1.0" if layout == "1" else "1.0.0")  # the file wins
    path = opencode_file(box)
    path.parent.mkdir(parents=True)
    path.write_text(text)
    done = box.run("setup", "opencode", "--no-check",
                   *(["--stdio"] if transport == "stdio" else []))
    assert done.exit_code == 0, done.output
    mcp = jsonc.parse(path.read_text()).data()["mcp"]
    servers = mcp if layout == "1" else mcp["servers"]
    entry = servers["echo-memory"]
    assert set(servers) == {"github", "echo-memory"}
    if transport == "http":
        assert entry == (REMOTE_V1 if layout == "1" else REMOTE_V2)
    else:
        assert entry["type"] == "local" and entry["command"][-1] == "mcp"
        assert ("enabled" in entry) == (layout == "1")
    assert box.run("uninstall", "opencode").exit_code == 0
    assert path.read_text() == text
