"""The connect snippets: one source (echomem.agent_clients) for the dashboard's panel, the
landing page and docs/agents.md; each snippet valid in its own format, holding this
server's endpoint and the key's variable, never a key. Before them, the clients that sign
in (echomem.agent_connectors): their entries hold the endpoint and no credential at all."""

from __future__ import annotations

import ast
import dataclasses
import html
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from echomem.agent_clients import KEY_ENV, KEY_PLACEHOLDER, clients, snippets
from echomem.agent_connectors import connectors
from echomem.doc_regions import MarkersMissing, render
from echomem.oauth_settings import oauth_provider
from web import agent_docs
from web.agent_docs import REGION
from web.user_docs import heading_anchor

DOC = REGION.doc

ENDPOINT = "https://memory.example.com:8443/mcp"
A_KEY = re.compile(r"em_[0-9a-f]{12}_")
SNIPPETS = snippets(ENDPOINT)


def parsed(snippet) -> object:
    """The snippet read back by a parser of its language: a syntax error fails the test."""
    if snippet.language == "json":
        return json.loads(snippet.text)
    if snippet.language == "toml":
        return tomllib.loads(snippet.text)
    if snippet.language == "bash":
        return shlex.split(snippet.text.replace("\\\n", " "))
    if snippet.language == "python":
        return ast.parse(snippet.text)
    raise AssertionError(f"no parser for {snippet.language}")  # javascript: see below


@pytest.mark.parametrize("snippet", [s for s in SNIPPETS if s.language != "javascript"],
                         ids=lambda s: f"{s.client}-{s.language}")
def test_every_snippet_parses_and_holds_the_endpoint_and_variable_but_no_key(snippet):
    assert parsed(snippet)
    assert ENDPOINT in snippet.text and KEY_ENV in snippet.text
    assert not A_KEY.search(snippet.text)


def test_the_node_snippet_is_a_valid_es_module(tmp_path):
    node = shutil.which("node")
    assert node, "the Node snippet is checked with node --check: install Node.js"
    [snippet] = [s for s in SNIPPETS if s.language == "javascript"]
    module = tmp_path / "connect.mjs"
    module.write_text(snippet.text)
    checked = subprocess.run([node, "--check", str(module)], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr
    assert ENDPOINT in snippet.text and f"process.env.{KEY_ENV}" in snippet.text


def one(client_id: str, language: str):
    [found] = [s for s in SNIPPETS if s.client == client_id and s.language == language]
    return parsed(found)


def test_each_config_has_the_shape_its_client_reads():
    bearer = "Bearer ${" + KEY_ENV + "}"
    assert one("claude-code", "json")["mcpServers"]["echo-memory"] == {
        "type": "http", "url": ENDPOINT, "headers": {"Authorization": bearer}}
    command = one("claude-code", "bash")
    assert command[:8] == ["claude", "mcp", "add", "--transport", "http", "--scope", "project",
                           "echo-memory"]
    # Single-quoted in the shell, so the reference (not the key) is what Claude Code stores.
    assert command[8:] == [ENDPOINT, "--header", f"Authorization: {bearer}"]
    assert one("cursor", "json")["mcpServers"]["echo-memory"]["headers"] == {
        "Authorization": "Bearer ${env:" + KEY_ENV + "}",
        "X-Echo-Project": "${workspaceFolderBasename}"}
    assert one("codex", "toml") == {"mcp_servers": {"echo-memory": {
        "url": ENDPOINT, "bearer_token_env_var": KEY_ENV}}}
    assert one("codex", "bash")[-2:] == ["--bearer-token-env-var", KEY_ENV]
    opencode = one("opencode", "json")["mcp"]["servers"]["echo-memory"]  # OpenCode 2
    assert (opencode["type"], opencode["url"], opencode["oauth"]) == ("remote", ENDPOINT, False)
    assert "enabled" not in opencode
    assert opencode["headers"]["Authorization"] == "Bearer {env:" + KEY_ENV + "}"
    windsurf = one("windsurf", "json")["mcpServers"]["echo-memory"]
    assert windsurf["serverUrl"] == ENDPOINT and "url" not in windsurf
    desktop = one("claude-desktop", "json")["mcpServers"]["echo-memory"]
    assert desktop["command"] == "npx" and desktop["args"][1:3] == ["mcp-remote", ENDPOINT]
    assert desktop["env"] == {KEY_ENV: KEY_PLACEHOLDER}


def test_a_server_name_with_dots_and_spaces_stays_one_name_in_every_format():
    named = {(s.client, s.language): s for s in snippets(ENDPOINT, server_name="team notes.v2")}
    assert "team notes.v2" in tomllib.loads(named["codex", "toml"].text)["mcp_servers"]
    assert "team notes.v2" in shlex.split(named["codex", "bash"].text)
    assert "team notes.v2" in json.loads(named["cursor", "json"].text)["mcpServers"]


@pytest.mark.parametrize(("options", "field"), [
    ({"key_env": "MY KEY"}, "key_env"), ({"key_env": "1KEY"}, "key_env"),
    ({"key_env": "K'; rm -rf ~"}, "key_env"), ({"server_name": " "}, "server_name")])
def test_a_bad_variable_or_server_name_is_refused_naming_the_argument(options, field):
    with pytest.raises(ValueError, match=f"^{field} "):
        snippets(ENDPOINT, **options)


def test_every_client_the_design_lists_is_offered():
    assert [c.label for c in clients(ENDPOINT)] == [
        "Claude Code", "Cursor", "Codex", "OpenCode", "Windsurf", "Claude Desktop",
        "Python", "Node"]


def test_the_python_snippet_talks_to_this_server_with_the_key_from_the_environment(
        live_server, alice, tmp_path):
    [snippet] = snippets(f"{live_server.url}/mcp", key_env="ECHO_TEST_KEY")[-2:-1]
    assert snippet.language == "python"
    script = tmp_path / "connect.py"
    script.write_text(snippet.text)
    ran = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=120, env={**os.environ, "ECHO_TEST_KEY": alice.plaintext})
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert "write_episode" in ran.stdout and "query_memory" in ran.stdout


def page_text(reply) -> str:
    assert reply.status_code == 200
    return html.unescape(reply.content.decode())


def test_the_dashboard_shows_a_tab_and_a_copy_button_per_client_with_this_servers_endpoint(
        client, alice, settings):
    settings.OAUTH2_PROVIDER = oauth_provider("https://mem.example.org")
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "mem.example.org", "other.example.org"]
    client.force_login(alice.user)
    # The configured public URL, whatever Host the browser came by: an app signs in for it.
    text = page_text(client.get("/dashboard/", HTTP_HOST="other.example.org"))
    assert "other.example.org" not in text
    for found in clients("https://mem.example.org/mcp"):
        assert f'id="connect-{found.id}-tab"' in text
        for number, snippet in enumerate(found.snippets, start=1):
            assert snippet.text in text
            assert f'data-copy="connect-{found.id}-{number}"' in text
    for found in connectors("https://mem.example.org/mcp"):
        assert f'id="connect-signin-{found.id}-tab"' in text
        for number, snippet in enumerate(found.snippets, start=1):
            assert snippet.text in text
            assert f'data-copy="connect-signin-{found.id}-{number}"' in text
    assert "bootstrap.bundle.min.js" in text and "web/copy.js" in text
    assert "<script>" not in text and "onclick" not in text  # no inline scripts
    assert alice.plaintext not in text


def test_the_panel_offers_signing_in_first_and_keys_after(client, alice):
    client.force_login(alice.user)
    text = page_text(client.get("/dashboard/"))
    signin, keys = text.index("Sign in from the app"), text.index("With an API key")
    assert signin < keys
    first_tabs = re.findall(r'id="connect-([a-z-]+)-tab"', text)
    assert first_tabs[:5] == ["signin-claude-ai", "signin-chatgpt", "signin-claude-code",
                              "signin-vscode", "signin-cursor"]
    assert 'href="/apps/"' in text[signin:keys] and 'href="/docs/connect/#chatgpt"' in text


SIGN_IN = connectors(ENDPOINT)


@pytest.mark.parametrize("snippet", [s for c in SIGN_IN for s in c.snippets],
                         ids=lambda s: f"{s.client}-{s.language}")
def test_every_sign_in_snippet_holds_the_endpoint_and_no_credential(snippet):
    if snippet.language != "text":
        assert parsed(snippet)
    assert ENDPOINT in snippet.text
    assert "Authorization" not in snippet.text and KEY_ENV not in snippet.text


def test_each_sign_in_entry_has_the_shape_its_client_reads():
    by_id = {c.id: {s.language: s for s in c.snippets} for c in SIGN_IN}
    assert parsed(by_id["claude-code"]["bash"]) == [
        "claude", "mcp", "add", "--transport", "http", "echo-memory", ENDPOINT]
    assert parsed(by_id["claude-code"]["json"]) == {
        "mcpServers": {"echo-memory": {"type": "http", "url": ENDPOINT}}}
    assert parsed(by_id["vscode"]["json"]) == {
        "servers": {"echo-memory": {"type": "http", "url": ENDPOINT}}}
    assert parsed(by_id["cursor"]["json"]) == {"mcpServers": {"echo-memory": {"url": ENDPOINT}}}
    assert by_id["claude-ai"]["text"].text.strip() == ENDPOINT
    assert all(c.source.startswith("https://") for c in SIGN_IN)


def test_docs_connect_md_has_a_section_for_every_client_that_signs_in():
    doc = (DOC.parent / "connect.md").read_text(encoding="utf-8")
    headings = {heading_anchor(h) for h in re.findall(r"^#+ (.+)$", doc, re.MULTILINE)}
    assert {c.anchor for c in SIGN_IN} <= headings
    assert "claude mcp add --transport http echo-memory http://localhost:8000/mcp" in doc


def test_the_landing_page_shows_the_connect_snippet_and_the_way_in(client, settings):
    settings.OPEN_SIGNUP = True
    text = page_text(client.get("/"))
    for found in clients("http://localhost:8000/mcp")[:2]:  # Claude Code and Cursor
        assert all(snippet.text in text for snippet in found.snippets)
    assert 'href="/signup/"' in text and 'href="/login/"' in text
    assert "Go to your dashboard" not in text

    settings.OPEN_SIGNUP = False
    text = page_text(client.get("/"))
    assert 'href="/signup/"' not in text and "by invitation" in text


def test_the_landing_page_sends_a_signed_in_person_to_the_dashboard(client, alice):
    client.force_login(alice.user)
    text = page_text(client.get("/"))
    assert 'href="/dashboard/"' in text and "Go to your dashboard" in text
    assert 'href="/login/"' not in text


def test_the_new_key_page_gives_the_export_line_for_the_variable(client, alice):
    client.force_login(alice.user)
    text = page_text(client.post("/keys/new/", {"name": "laptop 2", "tool": "cursor"},
                                 follow=True))
    [key] = re.findall(r"em_[0-9a-f]{12}_[A-Za-z0-9_-]{43}", text.split("export ")[0])
    assert f'value="export {KEY_ENV}={key}"' in text


def test_docs_agents_md_is_what_the_generator_writes():
    current = DOC.read_text(encoding="utf-8")
    assert render(REGION, current) == current, (
        "docs/agents.md differs from echomem/agent_clients.py: run "
        "`echo-memory manage agent_docs --write`")
    assert REGION.text() in current
    call_command("agent_docs", "--check")


def test_a_drifted_doc_is_put_back_and_one_without_markers_is_refused():
    current = DOC.read_text(encoding="utf-8")
    drifted = current.replace("bearer_token_env_var", "bearer_token", 1)
    assert drifted != current and render(REGION, drifted) == current
    with pytest.raises(MarkersMissing, match="no generated region"):
        render(REGION, "# Connecting agents\n")


def test_the_check_fails_when_the_doc_has_drifted(tmp_path, monkeypatch):
    stale = tmp_path / "agents.md"
    stale.write_text(DOC.read_text(encoding="utf-8").replace("Codex", "Kodex", 1))
    monkeypatch.setattr(agent_docs, "REGION", dataclasses.replace(REGION, doc=stale))
    with pytest.raises(CommandError, match="agent_docs --write"):
        call_command("agent_docs", "--check")
    call_command("agent_docs", "--write")
    assert stale.read_text(encoding="utf-8") == DOC.read_text(encoding="utf-8")
