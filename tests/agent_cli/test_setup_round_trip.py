"""`memory setup` / `memory uninstall` for every client and scope, on files that already
hold the person's own servers, comments and layout: those bytes survive setup untouched,
a second setup changes nothing, uninstall gives back the original file byte for byte, and
what setup wrote parses in the client's format with the endpoint and header DESIGN lists."""

from __future__ import annotations

import difflib
import json
import os
import re
import tomllib
from pathlib import Path

import pytest

from agent_cli import jsonc

URL = "https://memory.example.com/mcp"
NAME = "echo-memory"
A_KEY = "em_0123456789ab_" + "k" * 43

# Where each client reads its servers (DESIGN.md, "Agent client configs").
GLOBAL_FILES = {
    "claude-code": ".claude.json",
    "cursor": ".cursor/mcp.json",
    "codex": ".codex/config.toml",
    "opencode": ".config/opencode/opencode.json",
    "windsurf": ".codeium/windsurf/mcp_config.json",
    "claude-desktop": ".config/Claude/claude_desktop_config.json",
}
PROJECT_FILES = {"claude-code": ".mcp.json", "cursor": ".cursor/mcp.json",
                 "codex": ".codex/config.toml", "opencode": "opencode.json"}
SERVERS_KEY = {"opencode": "mcp", "codex": "mcp_servers"}
# How each client names the endpoint and reads the key from ECHO_MEM_API_KEY.
REMOTE = {
    "claude-code": ("url", {"type": "http"}, "Bearer ${ECHO_MEM_API_KEY}"),
    "cursor": ("url", {}, "Bearer ${env:ECHO_MEM_API_KEY}"),
    "opencode": ("url", {"type": "remote", "oauth": False}, "Bearer {env:ECHO_MEM_API_KEY}"),
    "windsurf": ("serverUrl", {}, "Bearer ${env:ECHO_MEM_API_KEY}"),
}
# How a global entry names the project of the folder the client works in, where it can.
GLOBAL_PROJECT_HEADER = {"cursor": {"X-Echo-Project": "${workspaceFolderBasename}"}}

STRICT_JSON = """{
    "numStartups": 42,
    "SERVERS": {
        "github": {"type": "stdio", "command": "gh-mcp", "args": ["--read-only", "--org", "acme"]},
        "notes": {"command": "notes-mcp", "env": {"NOTES_DIR": "/srv/notes"}}
    },
    "tipsHistory": [1, 2,   3],
    "projects": {"/home/me/app": {"allowedTools": []}}
}
"""
COMMENTED_JSON = """// my editor's MCP servers; hand-edited, keep the comments
{
  /* the servers */
  "SERVERS": {
    "github": {"command": "gh-mcp", "args": ["--read-only"]}, // read-only on purpose
  },
  "theme": "dark", // trailing commas are fine here
}
"""
CODEX_TOML = """# my codex settings
model = "gpt-5-codex"   # fast enough
approval_policy = 'on-request'

[mcp_servers.github]
command = "gh-mcp"
args = [ "--read-only" ]  # keep read-only

[profiles.deep]
model_reasoning_effort = "high"
"""
AGENTS_MD = "# House rules\n\nRun the tests before every commit.\n"


def _cases():
    for client in GLOBAL_FILES:
        scopes = ["global", "project"] if client in PROJECT_FILES else ["global"]
        transports = ["http", "stdio"] if client in REMOTE or client == "codex" else ["stdio"]
        flavors = (["toml"] if client == "codex" else
                   ["strict", "comments"] if client in {"cursor", "opencode", "windsurf"} else
                   ["strict"])
        for scope in scopes:
            for transport in transports:
                for flavor in flavors:
                    yield pytest.param(client, scope, transport, flavor,
                                       id=f"{client}-{scope}-{transport}-{flavor}")


def config_path(box, client: str, scope: str) -> Path:
    if scope == "project":
        return box.project / PROJECT_FILES[client]
    return box.home / GLOBAL_FILES[client]


def original(client: str, flavor: str) -> str:
    if flavor == "toml":
        return CODEX_TOML
    text = STRICT_JSON if flavor == "strict" else COMMENTED_JSON
    if client == "opencode":  # OpenCode 2: the servers sit under mcp.servers
        text = (text.replace('"SERVERS": {', '"mcp": {"servers": {')
                .replace("    },\n    \"tipsHistory\"", "    }},\n    \"tipsHistory\"")
                .replace("  },\n  \"theme\"", "  }},\n  \"theme\""))
    return text.replace("SERVERS", SERVERS_KEY.get(client, "mcpServers"))


def servers_of(client: str, data: dict) -> dict:
    servers = data[SERVERS_KEY.get(client, "mcpServers")]
    return servers["servers"] if client == "opencode" else servers


def parsed(client: str, text: str, flavor: str) -> dict:
    """The file as the client reads it: TOML, strict JSON, or JSON with comments."""
    if client == "codex":
        return tomllib.loads(text)
    if flavor == "comments":
        return jsonc.parse(text).data()
    return json.loads(text)


def only_insertions(before: str, after: str) -> bool:
    """Every byte of `before` is still in `after`, in order: setup only added text."""
    opcodes = difflib.SequenceMatcher(None, before, after, autojunk=False).get_opcodes()
    return all(tag in {"equal", "insert"} for tag, *_ in opcodes)


def check_entry(client: str, entry: dict, transport: str, scope: str) -> None:
    project_header = ({"X-Echo-Project": "shop-api"} if scope == "project" else
                      GLOBAL_PROJECT_HEADER.get(client, {}))
    if transport == "stdio":
        command = entry["command"]
        words = command if isinstance(command, list) else [command, *entry["args"]]
        assert "mcp" in words and os.path.isabs(words[0])
        assert ("shop-api" in words) == (scope == "project")
        return
    if client == "codex":
        assert entry["url"] == URL and entry["bearer_token_env_var"] == "ECHO_MEM_API_KEY"
        assert entry.get("http_headers", {}) == project_header
        return
    url_field, fixed, authorization = REMOTE[client]
    assert entry[url_field] == URL
    assert all(entry[k] == v for k, v in fixed.items())
    assert entry["headers"] == {"Authorization": authorization, **project_header}
    if client == "claude-code":  # Claude Code runs it from the folder it was started in
        helper = entry.get("headersHelper", "")
        assert helper.endswith(" project-header") == (scope == "global"), helper


@pytest.mark.parametrize(("client", "scope", "transport", "flavor"), list(_cases()))
def test_setup_then_uninstall_keeps_every_other_byte(box, monkeypatch, client, scope,
                                                     transport, flavor):
    monkeypatch.setenv("ECHO_MEM_URL", URL)
    monkeypatch.setenv("ECHO_MEM_API_KEY", A_KEY)
    path = config_path(box, client, scope)
    path.parent.mkdir(parents=True, exist_ok=True)
    before = original(client, flavor)
    path.write_text(before)
    agents = (box.project / "AGENTS.md" if scope == "project" else box.home / ".codex/AGENTS.md")
    if client == "codex":
        agents.parent.mkdir(parents=True, exist_ok=True)
        agents.write_text(AGENTS_MD)
    args = ["setup", client, "--no-check", *(["--project"] if scope == "project" else []),
            *(["--stdio"] if transport == "stdio" else [])]

    done = box.run(*args)
    assert done.exit_code == 0, done.output
    written = path.read_text()
    assert f"{_shown(box, path)}: updated" in done.output and "\n  +" in done.output
    assert only_insertions(before, written)
    assert A_KEY not in written
    data = parsed(client, written, flavor)
    servers = servers_of(client, data)
    check_entry(client, servers[NAME], transport, scope)
    assert servers["github"] == servers_of(client, parsed(client, before, flavor))["github"]
    if client == "codex":
        assert only_insertions(AGENTS_MD, agents.read_text())
        assert "memory_context" in agents.read_text() and "memory_save" in agents.read_text()

    again = box.run(*args)
    assert again.exit_code == 0, again.output
    assert "already up to date" in again.output and "updated" not in again.output
    assert path.read_text() == written

    removed = box.run("uninstall", client, *(["--project"] if scope == "project" else []))
    assert removed.exit_code == 0, removed.output
    assert path.read_text() == before
    if client == "codex":
        assert agents.read_text() == AGENTS_MD


def _shown(box, path: Path) -> str:
    return "~/" + str(path.relative_to(box.home)) if box.home in path.parents else str(path)


@pytest.mark.parametrize("client", list(GLOBAL_FILES))
def test_setup_creates_missing_files_and_uninstall_deletes_them_again(box, monkeypatch,
                                                                      client):
    monkeypatch.setenv("ECHO_MEM_URL", URL)
    path = config_path(box, client, "global")
    done = box.run("setup", client, "--no-check")
    assert done.exit_code == 0, done.output
    assert "created" in done.output
    data = parsed(client, path.read_text(), "strict")
    transport = "http" if client in REMOTE or client == "codex" else "stdio"
    check_entry(client, servers_of(client, data)[NAME], transport, "global")
    removed = box.run("uninstall", client)
    assert removed.exit_code == 0
    assert not path.exists()
    assert not (box.home / ".codex" / "AGENTS.md").exists()
    # The folders setup made for the file go too, once empty (HOME itself stays).
    top = box.home / Path(GLOBAL_FILES[client]).parts[0]
    assert not top.exists() or top == path, removed.output
    if top != path:
        assert f"~/{top.name}/: deleted (setup made it" in removed.output


def test_uninstall_keeps_folders_that_were_there_before_or_hold_the_persons_files(
        box, monkeypatch):
    monkeypatch.setenv("ECHO_MEM_URL", URL)
    (box.home / ".codex").mkdir()  # the person's, empty
    assert box.run("setup", "codex", "--no-check").exit_code == 0
    assert box.run("setup", "cursor", "--no-check").exit_code == 0
    (box.home / ".cursor" / "rules.md").write_text("mine\n")  # setup made it; now it is theirs too
    assert box.run("uninstall", "codex").exit_code == 0
    assert box.run("uninstall", "cursor").exit_code == 0
    assert (box.home / ".codex").is_dir() and not any((box.home / ".codex").iterdir())
    assert (box.home / ".cursor" / "rules.md").read_text() == "mine\n"
    assert not (box.home / ".cursor" / "mcp.json").exists()


def test_project_uninstall_removes_the_client_folder_setup_made_in_the_project(box, monkeypatch):
    monkeypatch.setenv("ECHO_MEM_URL", URL)
    for client in ("cursor", "codex"):
        assert box.run("setup", client, "--project", "--no-check").exit_code == 0
        assert box.run("uninstall", client, "--project").exit_code == 0
    assert sorted(p.name for p in box.project.iterdir()) == [".git", "src"]


def test_codex_project_setup_writes_agents_md_at_the_project_root(box, monkeypatch):
    monkeypatch.setenv("ECHO_MEM_URL", URL)
    assert box.run("setup", "codex", "--project", "--no-check").exit_code == 0
    text = (box.project / "AGENTS.md").read_text()
    assert text.startswith("<!-- BEGIN echo-memory")
    assert text.rstrip().endswith("END echo-memory -->")
    assert not (box.home / ".codex").exists()
    assert box.run("uninstall", "codex", "--project").exit_code == 0
    assert not (box.project / "AGENTS.md").exists()


@pytest.mark.parametrize("client", ["windsurf", "claude-desktop"])
def test_a_client_without_project_config_refuses_project_setup(box, monkeypatch, client):
    monkeypatch.setenv("ECHO_MEM_URL", URL)
    done = box.run("setup", client, "--project", "--no-check")
    assert done.exit_code == 2
    assert "has no per-project config" in done.output
    assert not any(box.project.rglob("*.json"))


def test_claude_desktop_always_gets_the_stdio_bridge(box, monkeypatch):
    monkeypatch.setenv("ECHO_MEM_URL", URL)
    done = box.run("setup", "claude-desktop", "--no-check")
    assert done.exit_code == 0 and "bridge" in done.output
    entry = json.loads(config_path(box, "claude-desktop", "global").read_text())[
        "mcpServers"][NAME]
    assert "url" not in entry and entry["args"][-1] == "mcp"


def test_a_broken_config_file_is_refused_and_left_untouched(box, monkeypatch):
    monkeypatch.setenv("ECHO_MEM_URL", URL)
    path = box.home / ".cursor" / "mcp.json"
    path.parent.mkdir()
    path.write_text('{"mcpServers": {"github": {"command": "gh"}\n')
    done = box.run("setup", "cursor", "--no-check")
    assert done.exit_code == 2
    assert re.search(r"mcp.json could not be read \(line 2, column 1: expected", done.output)
    assert path.read_text() == '{"mcpServers": {"github": {"command": "gh"}\n'


def test_setup_without_an_endpoint_says_how_to_give_one(box):
    done = box.run("setup", "cursor", "--no-check")
    assert done.exit_code == 2
    assert "ECHO_MEM_URL" in done.output and not (box.home / ".cursor").exists()


def test_a_changed_endpoint_replaces_only_our_entry(box, monkeypatch):
    monkeypatch.setenv("ECHO_MEM_URL", URL)
    path = box.home / ".cursor" / "mcp.json"
    path.parent.mkdir()
    path.write_text(original("cursor", "comments"))
    box.run("setup", "cursor", "--no-check")
    monkeypatch.setenv("ECHO_MEM_URL", "http://127.0.0.1:8000/mcp")
    done = box.run("setup", "cursor", "--no-check")
    assert done.exit_code == 0
    assert f'-      "url": "{URL}",' in done.output
    assert '+      "url": "http://127.0.0.1:8000/mcp",' in done.output
    data = jsonc.parse(path.read_text()).data()
    assert data["mcpServers"][NAME]["url"] == "http://127.0.0.1:8000/mcp"
    assert box.run("uninstall", "cursor").exit_code == 0
    assert path.read_text() == original("cursor", "comments")


def test_dry_run_writes_nothing(box, monkeypatch):
    monkeypatch.setenv("ECHO_MEM_URL", URL)
    done = box.run("setup", "codex", "--dry-run")
    assert done.exit_code == 0 and "dry run" in done.output and "+url = " in done.output
    assert "nothing written, nothing checked" in done.output
    assert not (box.home / ".codex").exists()


@pytest.mark.parametrize("client", list(GLOBAL_FILES))
def test_uninstall_where_nothing_was_installed_changes_nothing(box, client):
    path = config_path(box, client, "global")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("")
    done = box.run("uninstall", client)
    assert done.exit_code == 0, done.output
    assert "already up to date" in done.output
    assert path.read_text() == ""
