"""How each MCP client is pointed at this server: the one source the dashboard's connect
panel, docs/agents.md (`echo-memory manage agent_docs`) and `memory setup` all read.

The formats follow each client's own documentation (DESIGN.md, "Agent client configs").
No snippet ever holds a key: every client reads it from an environment variable (or, for
Claude Desktop, which passes its servers no shell environment, from its own config's env
block, filled in by the person). Config files are built as data and emitted by json.dumps /
tomli_w, so a snippet is always valid in its format. `http_entry` / `stdio_entry` are the
entries themselves, which `memory setup` (agent_cli/) merges into the clients' own files.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass

import tomli_w

from echomem.request_context import PROJECT_HEADER

SERVER_NAME = "echo-memory"
KEY_ENV = "ECHO_MEM_API_KEY"
# What the person replaces in Claude Desktop's env block: visibly not a key.
KEY_PLACEHOLDER = "em_YOUR_KEY"
# The variable's name goes unquoted into shells, TOML values and JS member access.
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class Snippet:
    client: str  # stable id, e.g. "claude-code"; a client may have several snippets
    label: str  # the client's name as people know it
    where: str  # where this text goes, in a few words
    language: str  # bash, json, toml, python or javascript
    text: str


@dataclass(frozen=True)
class Client:
    id: str
    label: str
    note: str  # what a person must know beyond the snippet, one or two sentences
    snippets: tuple[Snippet, ...]


def _json(data: object) -> str:
    return json.dumps(data, indent=2) + "\n"


def _bearer(reference: str) -> str:
    return f"Bearer {reference}"


# Where each client keeps its servers inside its config file (a path of object keys), and
# how it spells a reference to an environment variable (None: no such expansion).
SERVERS_PATH = {"claude-code": ("mcpServers",), "cursor": ("mcpServers",),
                "codex": ("mcp_servers",), "opencode": ("mcp", "servers"),
                "windsurf": ("mcpServers",), "claude-desktop": ("mcpServers",)}
# OpenCode 2 lists servers under mcp.servers (no `enabled` field); OpenCode 1 put them
# directly under mcp, with `enabled`. Both read {env:NAME}. (opencode.ai/docs/mcp-servers)
OPENCODE_LAYOUTS = {"2": ("mcp", "servers"), "1": ("mcp",)}
OPENCODE_CURRENT = "2"
_ENV_REFERENCE = {"claude-code": "${%s}", "cursor": "${env:%s}", "opencode": "{env:%s}",
                  "windsurf": "${env:%s}"}
# Clients that can reach a remote (streamable HTTP) server from their config file.
REMOTE_CLIENTS = ("claude-code", "cursor", "codex", "opencode", "windsurf")
# How a global (every project) HTTP entry names the project of the folder the client works
# in, where the client's config can say it (checked against each client's documentation):
# Cursor expands ${workspaceFolderBasename} in headers; Claude Code runs a headersHelper
# command from the folder it was started in and sends the headers it prints. Codex,
# OpenCode and Windsurf expand only environment variables (and files) there, so a global
# HTTP entry of theirs sends no project: setup says so and offers the stdio bridge.
WORKSPACE_HEADER = {"cursor": "${workspaceFolderBasename}"}
HEADERS_HELPER_CLIENTS = ("claude-code",)


def servers_path(client_id: str, opencode_layout: str = OPENCODE_CURRENT) -> tuple[str, ...]:
    if client_id == "opencode":
        return OPENCODE_LAYOUTS[opencode_layout]
    return SERVERS_PATH[client_id]


def http_entry(client_id: str, url: str, key_env: str = KEY_ENV,
               extra_headers: dict[str, str] | None = None, *,
               opencode_layout: str = OPENCODE_CURRENT,
               headers_helper: str | None = None) -> dict[str, object]:
    """One client's entry for this server over HTTP, the key read from `key_env`.

    `extra_headers` are further headers (the project header); `headers_helper` is the
    command Claude Code runs for headers computed when it connects.
    """
    extra = dict(extra_headers or {})
    if client_id == "codex":
        # Codex refuses an inline bearer_token: it reads the key from the variable it is told.
        entry: dict[str, object] = {"url": url, "bearer_token_env_var": key_env}
        if extra:
            entry["http_headers"] = extra
        return entry
    if client_id not in _ENV_REFERENCE:
        raise ValueError(f"{client_id} cannot reach a remote server from its config file; "
                         "use the stdio bridge")
    headers = {"Authorization": _bearer(_ENV_REFERENCE[client_id] % key_env), **extra}
    if client_id == "claude-code":
        entry = {"type": "http", "url": url, "headers": headers}
        if headers_helper:
            entry["headersHelper"] = headers_helper
        return entry
    if client_id == "opencode":
        # oauth: false: the key is the credential; without it OpenCode tries OAuth first.
        entry = {"type": "remote", "url": url, "headers": headers, "oauth": False}
        if opencode_layout == "1":
            entry["enabled"] = True
        return entry
    if client_id == "windsurf":
        return {"serverUrl": url, "headers": headers}
    return {"url": url, "headers": headers}


def stdio_entry(client_id: str, command: str, args: list[str], *,
                opencode_layout: str = OPENCODE_CURRENT) -> dict[str, object]:
    """One client's entry for a local server it starts itself (our `memory mcp` bridge)."""
    if client_id == "opencode":
        entry: dict[str, object] = {"type": "local", "command": [command, *args]}
        if opencode_layout == "1":
            entry["enabled"] = True
        return entry
    if client_id == "claude-code":
        return {"type": "stdio", "command": command, "args": list(args)}
    if client_id not in SERVERS_PATH:
        raise ValueError(f"unknown client {client_id!r}")
    return {"command": command, "args": list(args)}


def nest(path: tuple[str, ...], name: str, entry: object) -> dict[str, object]:
    """{path[0]: {path[1]: ... {name: entry}}}: a whole config file holding one entry."""
    value: dict[str, object] = {name: entry}
    for key in reversed(path):
        value = {key: value}
    return value


def _claude_code(url: str, name: str, key_env: str) -> list[tuple[str, str, str]]:
    header = f"Authorization: {_bearer('${' + key_env + '}')}"
    # Claude Code documents ${VAR} expansion for .mcp.json, the project scope, so the
    # command writes there; single quotes keep the shell from putting the key itself in.
    command = (f"claude mcp add --transport http --scope project {shlex.quote(name)} "
               f"{shlex.quote(url)} \\\n  --header '{header}'\n")
    project = {"mcpServers": {name: http_entry("claude-code", url, key_env)}}
    return [("a shell, at the project root (writes .mcp.json)", "bash", command),
            (".mcp.json at the project root (the same entry, by hand)", "json", _json(project))]


def _cursor(url: str, name: str, key_env: str) -> list[tuple[str, str, str]]:
    # The workspace header files notes under the opened folder's name, in either file.
    headers = {PROJECT_HEADER: WORKSPACE_HEADER["cursor"]}
    config = {"mcpServers": {name: http_entry("cursor", url, key_env, headers)}}
    return [("~/.cursor/mcp.json (all projects) or .cursor/mcp.json (one project)", "json",
             _json(config))]


def _codex(url: str, name: str, key_env: str) -> list[tuple[str, str, str]]:
    config = {"mcp_servers": {name: http_entry("codex", url, key_env)}}
    command = (f"codex mcp add {shlex.quote(name)} --url {shlex.quote(url)} "
               f"--bearer-token-env-var {key_env}\n")
    return [("~/.codex/config.toml (or .codex/config.toml in a trusted project)", "toml",
             tomli_w.dumps(config)),
            ("a shell instead (writes the same table)", "bash", command)]


def _opencode(url: str, name: str, key_env: str) -> list[tuple[str, str, str]]:
    config = {"$schema": "https://opencode.ai/config.json",
              **nest(servers_path("opencode"), name, http_entry("opencode", url, key_env))}
    return [("opencode.json in the project, or ~/.config/opencode/opencode.json", "json",
             _json(config))]


def _windsurf(url: str, name: str, key_env: str) -> list[tuple[str, str, str]]:
    config = {"mcpServers": {name: http_entry("windsurf", url, key_env)}}
    return [("~/.codeium/windsurf/mcp_config.json", "json", _json(config))]


def _claude_desktop(url: str, name: str, key_env: str) -> list[tuple[str, str, str]]:
    # Claude Desktop starts only local (stdio) servers from its config and gives them no
    # shell environment, so mcp-remote bridges to HTTP and reads the key from `env`.
    config = {"mcpServers": {name: {
        "command": "npx",
        "args": ["-y", "mcp-remote", url, "--header",
                 f"Authorization: {_bearer('${' + key_env + '}')}"],
        "env": {key_env: KEY_PLACEHOLDER}}}}
    return [("claude_desktop_config.json (Settings, Developer, Edit Config); put your key "
             f"in place of {KEY_PLACEHOLDER}", "json", _json(config))]


def _python(url: str, name: str, key_env: str) -> list[tuple[str, str, str]]:
    code = f'''import os

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

URL = {json.dumps(url)}


async def main() -> None:
    key = os.environ[{json.dumps(key_env)}]
    headers = {{"Authorization": f"Bearer {{key}}"}}
    async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
        async with Client(streamable_http_client(URL, http_client=http)) as client:
            tools = await client.list_tools()
            print([tool.name for tool in tools.tools])


anyio.run(main)
'''
    return [("a Python script (pip install mcp)", "python", code)]


def _node(url: str, name: str, key_env: str) -> list[tuple[str, str, str]]:
    transport_module = "@modelcontextprotocol/sdk/client/streamableHttp.js"
    code = f'''import {{ Client }} from "@modelcontextprotocol/sdk/client/index.js";
import {{ StreamableHTTPClientTransport }} from "{transport_module}";

const transport = new StreamableHTTPClientTransport(new URL({json.dumps(url)}), {{
  requestInit: {{ headers: {{ Authorization: `Bearer ${{process.env.{key_env}}}` }} }},
}});
const client = new Client({{ name: {json.dumps(name + "-example")}, version: "1.0.0" }});
await client.connect(transport);
console.log((await client.listTools()).tools.map((tool) => tool.name));
await client.close();
'''
    return [("an ES module, e.g. connect.mjs (npm install @modelcontextprotocol/sdk)",
             "javascript", code)]


NOTES = {
    "claude-code": ("Claude Code expands ${VAR} in .mcp.json when it starts, so the file can "
                    "be committed and the key stays in the environment. Add \"X-Echo-Project\": "
                    "\"<the project>\" to headers to file the notes under the project. For "
                    "every project instead, `memory setup claude-code` writes ~/.claude.json "
                    "with a headersHelper that names the project of the folder Claude Code "
                    "starts in."),
    "cursor": ("Cursor expands ${env:NAME} and ${workspaceFolderBasename} in url and "
               "headers, so notes are filed under the project folder Cursor has open."),
    "codex": ("Codex sends the variable named by bearer_token_env_var as the bearer token and "
              "refuses an inline bearer_token."),
    "opencode": ("OpenCode substitutes {env:NAME} in its config. This is OpenCode 2's layout "
                 "(mcp.servers); OpenCode 1 lists the entry directly under mcp, with "
                 "\"enabled\": true (memory setup opencode writes the layout your file or "
                 "your opencode --version uses). oauth: false makes it use the key instead of "
                 "trying OAuth first."),
    "windsurf": ("Windsurf expands ${env:NAME}; an unset variable sends an empty bearer, which "
                 "the server refuses with 401."),
    "claude-desktop": ("Claude Desktop starts only local servers from its config file, so "
                       "mcp-remote (Node) bridges it to HTTP; its custom connectors take no "
                       "API-key header. Its servers get no shell environment: the key goes in "
                       "the env block, in a file only you can read."),
    "python": "The official mcp SDK's streamable HTTP client, with the key in the header.",
    "node": "The official @modelcontextprotocol/sdk client, with the key in requestInit.",
}

CLIENTS = (
    ("claude-code", "Claude Code", _claude_code),
    ("cursor", "Cursor", _cursor),
    ("codex", "Codex", _codex),
    ("opencode", "OpenCode", _opencode),
    ("windsurf", "Windsurf", _windsurf),
    ("claude-desktop", "Claude Desktop", _claude_desktop),
    ("python", "Python", _python),
    ("node", "Node", _node),
)


def clients(endpoint_url: str, server_name: str = SERVER_NAME,
            key_env: str = KEY_ENV) -> list[Client]:
    """Every client with its snippets, in the order the panel and the doc show them."""
    if not ENV_NAME.fullmatch(key_env):
        raise ValueError(f"key_env {key_env!r} is not an environment variable name: use "
                         "letters, digits and underscores, not starting with a digit")
    if not server_name.strip():
        raise ValueError("server_name is empty: give the name the client lists the server by")
    return [Client(id=client_id, label=label, note=NOTES[client_id], snippets=tuple(
                Snippet(client=client_id, label=label, where=where, language=language, text=text)
                for where, language, text in build(endpoint_url, server_name, key_env)))
            for client_id, label, build in CLIENTS]


def snippets(endpoint_url: str, server_name: str = SERVER_NAME,
             key_env: str = KEY_ENV) -> list[Snippet]:
    """Every snippet of every client, flat (what `memory setup` picks one from)."""
    return [s for c in clients(endpoint_url, server_name, key_env) for s in c.snippets]


def export_line(key_env: str = KEY_ENV, key: str = KEY_PLACEHOLDER) -> str:
    """The shell line that puts a key where the snippets look for it."""
    return f"export {key_env}={shlex.quote(key)}"
