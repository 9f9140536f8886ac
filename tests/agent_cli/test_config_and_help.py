"""Where the command finds its server (environment, then its own file, then the local
server), the private config file, and `--help` on every command."""

from __future__ import annotations

import json
import os
import stat

import click
import pytest
from click.testing import CliRunner

from agent_cli import config
from agent_cli.cli import main
from echomem.cli import main as echo_memory


def _commands(group: click.Group, prefix: tuple[str, ...] = ()):
    for name, command in group.commands.items():
        yield (*prefix, name)
        if isinstance(command, click.Group):
            yield from _commands(command, (*prefix, name))


@pytest.mark.parametrize("words", [(), *list(_commands(main))], ids=" ".join)
def test_every_command_has_help(words):
    shown = CliRunner().invoke(main, [*words, "--help"])
    assert shown.exit_code == 0, shown.output
    assert shown.output.startswith("Usage: ") and "--help" in shown.output
    summary = (main if not words else main.commands[words[0]])
    assert summary.help and summary.help.split()[0] in shown.output


@pytest.mark.parametrize("words", [(), ("setup",), ("search",), ("config", "set")], ids=" ".join)
def test_echo_memory_agent_reaches_the_same_commands(words):
    shown = CliRunner().invoke(echo_memory, ["agent", *words, "--help"])
    assert shown.exit_code == 0, shown.output
    own = CliRunner().invoke(main, [*words, "--help"])
    assert shown.output.split("\n", 2)[2] == own.output.split("\n", 2)[2]


def test_settings_come_from_the_environment_first_then_the_file(box, monkeypatch):
    written = box.run("config", "set", "--url", "http://file.example/mcp", "--memory", "work",
                      "--key", "-", input="em_fromfile\n")
    assert written.exit_code == 0, written.output
    path = box.home / ".config" / "echo-memory" / "agent.toml"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert "em_fromfile" not in written.output

    settings = config.resolve()
    assert (settings.url, settings.key, settings.memory) == (
        "http://file.example/mcp", "em_fromfile", "work")
    assert settings.source["url"] == str(path)

    monkeypatch.setenv("ECHO_MEM_URL", "http://env.example/mcp")
    monkeypatch.setenv("ECHO_MEM_API_KEY", "em_fromenv")
    settings = config.resolve()
    assert (settings.url, settings.key, settings.memory) == (
        "http://env.example/mcp", "em_fromenv", "work")
    assert settings.source == {"url": "$ECHO_MEM_URL", "key": "$ECHO_MEM_API_KEY",
                               "memory": str(path)}
    shown = box.run("config", "show")
    assert "em_fromenv" in shown.output and "from $ECHO_MEM_API_KEY" in shown.output

    assert box.run("config", "set", "--unset", "memory").exit_code == 0
    assert config.resolve().memory is None


def test_xdg_config_home_and_an_explicit_file_are_honoured(box, monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert config.config_path() == tmp_path / "xdg" / "echo-memory" / "agent.toml"
    monkeypatch.setenv("ECHO_MEM_CONFIG", str(tmp_path / "mine.toml"))
    box.run("config", "set", "--url", "http://mine/mcp")
    assert config.resolve().url == "http://mine/mcp"


def test_on_a_quickstart_box_the_local_server_is_found_last(box, monkeypatch):
    (box.server_home / "server.json").write_text(
        json.dumps({"pid": os.getpid(), "host": "0.0.0.0", "port": 8123}))
    settings = config.resolve()
    assert settings.url == "http://localhost:8123/mcp"
    assert "server.json" in settings.source["url"]

    box.run("config", "set", "--url", "http://file.example/mcp")
    assert config.resolve().url == "http://file.example/mcp"


def test_a_server_that_is_gone_is_not_used(box):
    (box.server_home / "server.json").write_text(
        json.dumps({"pid": 2**22 + 12345, "host": "127.0.0.1", "port": 8123}))
    assert config.resolve().url is None
    done = box.run("search", "anything")
    assert done.exit_code == 1 and "no Echo Memory endpoint is configured" in done.output


def test_the_project_is_the_git_root_name(box):
    assert config.project_name() == "shop-api"


def test_the_command_never_imports_the_server():
    import subprocess
    import sys

    from tests.agent_cli.conftest import WORKTREE, bridge_environment

    probe = ("import sys, agent_cli.cli, agent_cli.bridge; "
             "print(sorted({m.split('.')[0] for m in sys.modules} & {'django', 'memories', "
             "'accounts', 'mcp_gateway', 'api', 'web', 'billing'}))")
    ran = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         env=bridge_environment(), cwd=WORKTREE, timeout=60)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == "[]"


@pytest.mark.parametrize(("args", "project"), [
    (["q"], None), (["q", "--project"], "\0current"), (["q", "--project", "--json"], "\0current"),
    (["q", "--project", "web"], "web")])
def test_search_project_is_all_by_default_current_alone_or_named(args, project):
    """As EchoVault's AGENTS.md uses it: `memory search "q" --project` means this project."""
    params = main.commands["search"].make_context("search", args).params
    assert params["project"] == project
