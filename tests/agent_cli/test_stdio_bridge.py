"""`memory mcp` driven over stdio by the official `mcp` client, against a live server:
tools/list and tools/call pass through, and a call that names no project gets the one
the bridge was started for."""

from __future__ import annotations

import sys
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.agent_cli.conftest import bridge_environment
from tests.harness import free_port

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")


def drive(env: dict[str, str], cwd: str, body, *args: str) -> Any:
    server = StdioServerParameters(command=sys.executable, args=["-m", "agent_cli", "mcp", *args],
                                   env=env, cwd=cwd)

    async def main():
        async with Client(server) as client:
            return await body(client)

    return anyio.run(main)


def episode(tag: str) -> dict[str, Any]:
    return {"scope": "shared", "assume_new": True,
            "entities": [{"name": f"{tag} cache", "type": "thing"},
                         {"name": f"{tag} outage", "type": "thing"}],
            "facts": [{"source": f"{tag} outage", "target": f"{tag} cache",
                       "relation_type": "caused_by", "confidence": "extracted",
                       "fact": f"The {tag} outage was caused by the {tag} cache filling up."}]}


def test_the_bridge_lists_and_calls_tools_and_fills_the_project(box, live_server, alice):
    env = bridge_environment(ECHO_MEM_URL=f"{live_server.url}/mcp",
                             ECHO_MEM_API_KEY=alice.plaintext, HOME=str(box.home),
                             ECHO_MEMORY_HOME=str(box.server_home))

    async def body(client):
        tools = await client.list_tools()
        written = await client.call_tool("write_episode", episode("Quartz"))
        found = await client.call_tool("query_memory", {
            "scope": "shared", "query": "why did the Quartz outage happen", "top_k": 3})
        bad = await client.call_tool("query_memory", {"scope": "shared", "query": "x",
                                                      "top_k": 0})
        return {t.name for t in tools.tools}, written, found, bad

    names, written, found, bad = drive(env, str(box.project / "src"), body)
    assert {"write_episode", "query_memory", "trace_cause"} <= names
    assert written.is_error is False and written.structured_content["stored"] is True
    [fact] = [f for f in found.structured_content["facts"] if "Quartz" in f["fact"]]
    assert fact["project"] == "shop-api"  # the git root the client started the bridge in
    assert bad.is_error is True and "top_k" in bad.content[0].text


def test_an_explicit_project_wins_over_the_directory(box, live_server, alice):
    env = bridge_environment(ECHO_MEM_URL=f"{live_server.url}/mcp",
                             ECHO_MEM_API_KEY=alice.plaintext, HOME=str(box.home),
                             ECHO_MEMORY_HOME=str(box.server_home))

    async def body(client):
        arguments = {**episode("Basalt"), "project": "billing"}
        await client.call_tool("write_episode", arguments)
        await client.call_tool("write_episode", episode("Granite"))
        return await client.call_tool("query_memory", {
            "scope": "shared", "query": "outage caused by cache filling up", "top_k": 10})

    found = drive(env, str(box.project), body, "--project", "storefront")
    projects = {f["fact"].split()[1]: f["project"] for f in found.structured_content["facts"]}
    assert projects == {"Basalt": "billing", "Granite": "storefront"}


def test_a_server_that_is_down_is_a_tool_error_the_model_can_read(box):
    url = f"http://127.0.0.1:{free_port()}/mcp"
    env = bridge_environment(ECHO_MEM_URL=url, HOME=str(box.home),
                             ECHO_MEMORY_HOME=str(box.server_home))

    async def body(client):
        return await client.call_tool("query_memory", {"scope": "shared", "query": "x"})

    result = drive(env, str(box.project), body)
    assert result.is_error is True
    assert f"cannot reach {url}" in result.content[0].text


def test_outside_a_repository_the_bridge_leaves_the_project_to_the_server(box, live_server,
                                                                          alice):
    env = bridge_environment(ECHO_MEM_URL=f"{live_server.url}/mcp",
                             ECHO_MEM_API_KEY=alice.plaintext, HOME=str(box.home),
                             ECHO_MEMORY_HOME=str(box.server_home))

    async def body(client):
        await client.call_tool("write_episode", episode("Slate"))
        return await client.call_tool("query_memory", {
            "scope": "shared", "query": "why did the Slate outage happen", "top_k": 3})

    found = drive(env, str(box.home), body)  # Claude Desktop starts it in ~, not a project
    [fact] = [f for f in found.structured_content["facts"] if "Slate" in f["fact"]]
    assert fact["project"] in ("", None)
