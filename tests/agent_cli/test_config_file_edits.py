"""The file edits under `memory setup` on the shapes people's files really have: one-line
objects, tabs, Windows line endings, symlinked dotfiles, a TOML table we cannot extend."""

from __future__ import annotations

import json
import tomllib

import pytest

from agent_cli import jsonc, tomlfile
from agent_cli.clients import SetupError
from agent_cli.config_formats import AGENTS_BEGIN
from agent_cli.setup_plan import plan

ENTRY = {"url": "https://m.example/mcp", "headers": {"Authorization": "Bearer ${env:K}"}}


@pytest.mark.parametrize("text", [
    '{"mcpServers": {"a": {"command": "x"}}}',
    '{\n\t"mcpServers": {\n\t\t"a": {"command": "x"}\n\t}\n}\n',
    '{\r\n  "mcpServers": {\r\n    "a": {"command": "x"}\r\n  }\r\n}\r\n',
    '{\n  "other": true\n}',
    '{}',
    '\ufeff{\n    "mcpServers": {}, "x": [1,\n 2]\n}\n',
], ids=["one-line", "tabs", "crlf", "no-servers-key", "empty", "bom-and-empty-servers"])
def test_json_set_then_remove(text):
    added = jsonc.set_member(text, ["mcpServers"], "echo-memory", ENTRY)
    assert json.loads(added.lstrip("\ufeff"))["mcpServers"]["echo-memory"] == ENTRY
    assert jsonc.set_member(added, ["mcpServers"], "echo-memory", ENTRY) == added
    if "\r\n" in text:
        assert added.count("\n") == added.count("\r\n")
    if "\t" in text:
        assert '\n\t\t"echo-memory": {\n\t\t\t"url"' in added
    created = jsonc.missing_depth(text, ["mcpServers"])  # what setup made, it may take out
    removed = jsonc.remove_member(added, ["mcpServers"], "echo-memory", prune_from=created)
    assert jsonc.parse(removed).data() == jsonc.parse(text).data()
    if '"mcpServers": {}' not in text and text != "{}":
        assert removed == text
    # (An emptied map of the person's own keeps its meaning; uninstall gives its exact bytes
    # back from the install record: tests/agent_cli/test_uninstall_gives_back.py.)


def test_a_non_object_where_servers_belong_is_refused():
    with pytest.raises(jsonc.JsoncError, match='"mcpServers" is not an object'):
        jsonc.set_member('{"mcpServers": []}', ["mcpServers"], "echo-memory", ENTRY)


def test_toml_with_windows_line_endings_keeps_them():
    text = 'model = "o3"\r\n\r\n[mcp_servers.github]\r\ncommand = "gh"\r\n'
    added = tomlfile.set_server(text, "echo-memory", {"url": "u", "bearer_token_env_var": "K"})
    assert added.count("\n") == added.count("\r\n")
    assert tomllib.loads(added)["mcp_servers"]["echo-memory"]["url"] == "u"
    assert tomlfile.remove_server(added, "echo-memory") == text


def test_toml_where_mcp_servers_is_an_inline_table_is_refused_not_broken():
    text = 'mcp_servers = { github = { command = "gh" } }\n'
    with pytest.raises(tomlfile.TomlError, match="edit it by hand"):
        tomlfile.set_server(text, "echo-memory", {"url": "u"})


def test_toml_our_table_changed_in_place_keeps_the_rest():
    text = '# mine\n[mcp_servers.echo-memory]\nurl = "old"\n\n[profiles.x]\nmodel = "y"\n'
    changed = tomlfile.set_server(text, "echo-memory", {"url": "new"})
    assert changed.startswith("# mine\n") and changed.endswith('[profiles.x]\nmodel = "y"\n')
    assert tomllib.loads(changed)["mcp_servers"]["echo-memory"] == {"url": "new"}
    assert tomlfile.remove_server(changed, "echo-memory") == (
        '# mine\n\n[profiles.x]\nmodel = "y"\n')


def test_a_symlinked_config_stays_a_symlink(box, monkeypatch, tmp_path):
    monkeypatch.setenv("ECHO_MEM_URL", "https://m.example/mcp")
    real = tmp_path / "dotfiles" / "mcp.json"
    real.parent.mkdir()
    real.write_text('{\n  "mcpServers": {}\n}\n')
    (box.home / ".cursor").mkdir()
    (box.home / ".cursor" / "mcp.json").symlink_to(real)
    assert box.run("setup", "cursor", "--no-check").exit_code == 0
    assert (box.home / ".cursor" / "mcp.json").is_symlink()
    assert "echo-memory" in json.loads(real.read_text())["mcpServers"]


def test_agents_md_with_windows_line_endings_round_trips(box):
    agents = box.project / "AGENTS.md"
    agents.write_bytes(b"# Rules\r\n\r\nBe kind.\r\n")
    [_, change] = plan("codex", install=True, project_root=box.project, stdio=False,
                       url="https://m.example/mcp", name="echo-memory")
    change.apply()
    text = agents.read_bytes().decode()
    assert AGENTS_BEGIN in text and text.count("\n") == text.count("\r\n")
    [_, change] = plan("codex", install=False, project_root=box.project, stdio=False,
                       url=None, name="echo-memory")
    change.apply()
    assert agents.read_bytes() == b"# Rules\r\n\r\nBe kind.\r\n"


def test_an_unknown_client_is_named(box):
    with pytest.raises(SetupError, match="unknown client 'vim'"):
        plan("vim", install=True, project_root=None, stdio=False, url="u", name="n")
