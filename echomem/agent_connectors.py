"""How each MCP client that speaks OAuth connects by signing in (no key): the one source the
connect panel and docs/connect.md read. The app finds this server's authorization server
from /mcp's 401, registers itself (or names its client ID metadata document), and opens the
consent page in a browser; the person signs in and picks the memories and the access.

Checked against each client's own documentation (docs/connect.md cites them). Clients that
cannot sign in (and scripts) use a key: echomem/agent_clients.py.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass

from echomem.agent_clients import SERVER_NAME, Snippet


@dataclass(frozen=True)
class Connector:
    id: str
    label: str
    steps: tuple[str, ...]  # what the person does, in order; `{url}` is this server's /mcp
    snippets: tuple[Snippet, ...]
    source: str  # the client's own documentation these steps follow

    @property
    def anchor(self) -> str:
        """docs/connect.md's section for this client is headed by its label: GitHub's id."""
        return re.sub(r"[^\w\- ]", "", self.label.lower()).replace(" ", "-")


def _json(data: object) -> str:
    return json.dumps(data, indent=2) + "\n"


def connectors(endpoint_url: str, server_name: str = SERVER_NAME) -> list[Connector]:
    """Every client that signs in, in the order the panel and the doc show them."""
    if not server_name.strip():
        raise ValueError("server_name is empty: give the name the client lists the server by")
    url, name = endpoint_url, server_name

    def snippet(client: str, label: str, where: str, language: str, text: str) -> Snippet:
        return Snippet(client=client, label=label, where=where, language=language, text=text)

    claude_add = (f"claude mcp add --transport http {shlex.quote(name)} "
                  f"{shlex.quote(url)}\n")
    return [
        Connector(
            "claude-ai", "Claude.ai and Claude Desktop",
            ("Open Settings (or Customize), then Connectors, and choose Add custom connector.",
             "Name it Echo Memory and paste the URL below as the remote MCP server URL; leave "
             "the advanced OAuth fields empty.",
             "Choose Connect: this site opens; sign in, pick what it may use, and Allow.",
             "Claude Desktop uses the connectors of your Claude account: add it once, on "
             "either."),
            (snippet("claude-ai", "Claude.ai", "the connector's URL field", "text", url + "\n"),),
            "https://support.claude.com/en/articles/11175166"),
        Connector(
            "chatgpt", "ChatGPT",
            ("Turn on developer mode: Settings, Apps, Advanced settings (a workspace admin "
             "turns it on for Business and Enterprise).",
             "Back in Settings, Apps, choose Create app: name it Echo Memory, paste the URL "
             "below as the MCP server URL, and pick OAuth as the authentication.",
             "Confirm you trust it and create it: this site opens; sign in, pick what it may "
             "use, and Allow."),
            (snippet("chatgpt", "ChatGPT", "the app's MCP server URL field", "text",
                     url + "\n"),),
            "https://help.openai.com/en/articles/12584461"),
        Connector(
            "claude-code", "Claude Code",
            ("Add the server with no header (the command below).",
             "Start Claude Code and run /mcp, pick echo-memory and Authenticate: this site "
             "opens; sign in, pick what it may use, and Allow.",
             "Claude Code keeps the token and refreshes it; `claude mcp login echo-memory` "
             "signs in from the shell instead."),
            (snippet("claude-code", "Claude Code", "a shell", "bash", claude_add),
             snippet("claude-code", "Claude Code", ".mcp.json at the project root (the same "
                     "entry, by hand)", "json",
                     _json({"mcpServers": {name: {"type": "http", "url": url}}}))),
            "https://code.claude.com/docs/en/mcp"),
        Connector(
            "vscode", "VS Code",
            ("Add the entry below to .vscode/mcp.json (one workspace) or to your user "
             "mcp.json (the command MCP: Open User Configuration).",
             "Start the server (the Start action above its entry, or the MCP servers list): "
             "VS Code asks to let it sign in and opens this site; sign in, pick what it may "
             "use, and Allow."),
            (snippet("vscode", "VS Code", ".vscode/mcp.json", "json",
                     _json({"servers": {name: {"type": "http", "url": url}}})),),
            "https://code.visualstudio.com/docs/copilot/reference/mcp-configuration"),
        Connector(
            "cursor", "Cursor",
            ("Add the entry below to ~/.cursor/mcp.json (all projects) or .cursor/mcp.json "
             "(one project), with no headers, and reload Cursor.",
             "When Cursor shows echo-memory as needing sign-in (Cursor Settings, MCP), choose "
             "Connect: this site opens; sign in, pick what it may use, and Allow."),
            (snippet("cursor", "Cursor", "~/.cursor/mcp.json or .cursor/mcp.json", "json",
                     _json({"mcpServers": {name: {"url": url}}})),),
            "https://cursor.com/docs/mcp"),
    ]
