"""A global install still files each note under the project it was written in: Claude Code
runs `memory project-header` from the folder it was started in, Cursor expands
${workspaceFolderBasename}, the stdio bridge reads its folder; the other clients' configs
cannot name a folder, and setup says so and offers the bridge. A header the client did not
expand is no project at all."""

from __future__ import annotations

import json
import subprocess

import pytest

from agent_cli.config import Settings
from agent_cli.remote import Remote
from memories.models import Note
from tests.agent_cli.conftest import bridge_environment
from tests.agent_cli.test_setup_round_trip import GLOBAL_FILES, URL


def _save(url: str, key: str, project_header: str | None, title: str) -> dict:
    with Remote(Settings(url, key, None), project=project_header) as remote:
        return remote.call("memory_save", {"title": title, "what": "Kept for the test."})


def test_project_header_prints_the_git_root_of_the_folder(box, monkeypatch):
    done = box.run("project-header")
    assert done.exit_code == 0
    assert json.loads(done.output) == {"X-Echo-Project": "shop-api"}
    monkeypatch.chdir(box.home)
    assert json.loads(box.run("project-header").output) == {}


def test_a_global_claude_code_install_sends_the_project_of_the_folder_it_runs_in(
        box, monkeypatch, live_server, alice):
    url = f"{live_server.url}/mcp"
    monkeypatch.setenv("ECHO_MEM_URL", url)
    monkeypatch.setenv("ECHO_MEM_API_KEY", alice.plaintext)
    done = box.run("setup", "claude-code")
    assert done.exit_code == 0, done.output
    assert "sends the git root of the folder it was started in" in done.output
    entry = json.loads((box.home / ".claude.json").read_text())["mcpServers"]["echo-memory"]
    # What Claude Code does when it connects: run the helper in a shell, in its folder.
    ran = subprocess.run(entry["headersHelper"], shell=True, capture_output=True, text=True,
                         cwd=box.project / "src", env=bridge_environment(), timeout=60)
    assert ran.returncode == 0, ran.stderr
    headers = json.loads(ran.stdout)
    assert headers == {"X-Echo-Project": "shop-api"}
    saved = _save(entry["url"], alice.plaintext, headers["X-Echo-Project"], "Helper header")
    assert saved["project"] == "shop-api"
    assert Note.objects.get(title="Helper header").project == "shop-api"


def test_a_global_cursor_install_sends_the_open_folder(box, monkeypatch, live_server, alice):
    monkeypatch.setenv("ECHO_MEM_URL", f"{live_server.url}/mcp")
    monkeypatch.setenv("ECHO_MEM_API_KEY", alice.plaintext)
    done = box.run("setup", "cursor")
    assert done.exit_code == 0, done.output
    entry = json.loads((box.home / ".cursor" / "mcp.json").read_text())["mcpServers"][
        "echo-memory"]
    assert entry["headers"]["X-Echo-Project"] == "${workspaceFolderBasename}"
    # Cursor with shop-api open sends its name; a client that does not expand the variable
    # sends it as written, which names no project rather than a project "${...}".
    expanded = entry["headers"]["X-Echo-Project"].replace("${workspaceFolderBasename}",
                                                          "shop-api")
    assert _save(entry["url"], alice.plaintext, expanded, "Expanded")["project"] == "shop-api"
    for placeholder in ("${workspaceFolderBasename}", "{env:PROJECT}", "x-${env:P}"):
        reply = _save(entry["url"], alice.plaintext, placeholder, f"Raw {placeholder}")
        assert reply["project"] is None, placeholder
    assert not Note.objects.filter(project__contains="{").exists()


NOTES = {
    "claude-code": "runs `memory project-header` when it connects",
    "cursor": "sends the name of the folder it has open",
    "codex": "sends no project and notes of every project mix",
    "opencode": "sends no project and notes of every project mix",
    "windsurf": "sends no project and notes of every project mix",
    "claude-desktop": "starts the bridge outside any project",
}


@pytest.mark.parametrize("client", list(GLOBAL_FILES))
@pytest.mark.parametrize("transport", ["http", "stdio"])
def test_setup_says_how_each_global_install_names_the_project(box, monkeypatch, client,
                                                              transport):
    monkeypatch.setenv("ECHO_MEM_URL", URL)
    args = ["setup", client, "--no-check", *(["--stdio"] if transport == "stdio" else [])]
    done = box.run(*args)
    assert done.exit_code == 0, done.output
    [line] = [line for line in done.output.splitlines() if line.startswith("project: ")]
    if transport == "stdio" and client != "claude-desktop":
        assert "the bridge names the project after the git root" in line
    else:
        assert NOTES[client] in line, line
    if NOTES[client].endswith("mix") and transport == "http":
        assert f"memory setup {client} --stdio" in line
        assert f"memory setup {client} --project" in line


def test_a_project_install_says_the_project_it_names(box, monkeypatch):
    monkeypatch.setenv("ECHO_MEM_URL", URL)
    done = box.run("setup", "codex", "--project", "--no-check")
    assert "project: every note saved through this entry names shop-api" in done.output
