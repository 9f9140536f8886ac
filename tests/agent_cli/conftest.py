"""A private HOME, config folder and project for each test, so `memory setup` edits only
temporary files, and no setting of the machine running the tests leaks in."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from agent_cli.cli import main

WORKTREE = Path(__file__).resolve().parents[2]
VARIABLES = ("ECHO_MEM_URL", "ECHO_MEM_API_KEY", "ECHO_MEM_MEMORY", "ECHO_MEM_CONFIG",
             "XDG_CONFIG_HOME", "XDG_STATE_HOME", "CODEX_HOME", "APPDATA")


@dataclass
class Box:
    home: Path
    project: Path
    server_home: Path

    def run(self, *args: str, input: str | None = None) -> Result:
        return CliRunner().invoke(main, list(args), input=input, catch_exceptions=False)


@pytest.fixture
def box(tmp_path, monkeypatch) -> Box:
    home, project, server_home = tmp_path / "home", tmp_path / "shop-api", tmp_path / "echo-home"
    for folder in (home, project / ".git", project / "src", server_home):
        folder.mkdir(parents=True)
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("ECHO_MEMORY_HOME", str(server_home))
    monkeypatch.setattr(sys, "platform", "linux")  # Claude Desktop's Linux path under HOME
    monkeypatch.chdir(project / "src")  # a subfolder: the project is the git root
    return Box(home, project, server_home)


def bridge_environment(**extra: str) -> dict[str, str]:
    """What a client gives `memory mcp`: this checkout importable, our settings, no others."""
    env = {k: v for k, v in os.environ.items() if k not in VARIABLES}
    env["PYTHONPATH"] = str(WORKTREE)
    env.update(extra)
    return env


@pytest.fixture
def server(box, monkeypatch, live_server, alice):
    """A live server the `memory` command reaches through its environment, as alice."""
    monkeypatch.setenv("ECHO_MEM_URL", f"{live_server.url}/mcp")
    monkeypatch.setenv("ECHO_MEM_API_KEY", alice.plaintext)
    return live_server
