"""`memory mcp`: a stdio MCP server that passes tools/list and tools/call to the endpoint.

For clients that start only local servers (Claude Desktop) or a person who prefers them.
The key never sits in the client's config: the bridge reads it from the environment or the
`memory` config file. A call without `project`, to a tool that takes one, gets the name of
the git root the client started the bridge in (or the --project it was given); outside a
repository (Claude Desktop starts it in / or ~) it is left to the server.

On the server's rate limit the bridge waits what Retry-After says, within ECHO_MEM_RATE_WAIT
(saying so on stderr, which clients keep in their MCP log). A memory_save that still cannot
go through (or meets the server down) is kept (outbox.py) and sent before the next call;
the model is told so and need not save it again.
"""

from __future__ import annotations

import sys
import threading
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

from agent_cli import outbox
from agent_cli.config import Settings
from agent_cli.remote import Remote, RemoteError, Unavailable, say_waiting

SAVE_TOOL = "memory_save"
INSTRUCTIONS = ("Echo Memory through a local bridge. At the start of a task call "
                "memory_context (and memory_search for what the task touches); before you end "
                "one in which you changed or learned something, call memory_save.")


KEPT = ("Echo Memory could not take this save now ({reason}). The bridge kept the note and "
        "sends it before the next call: do not save it again.")


class Bridge:
    def __init__(self, settings: Settings, project: str | None):
        self.settings = settings
        self.remote = Remote(settings, project=project, on_rate_limit=say_waiting)
        self.project = project
        self.lock = threading.Lock()  # one session, one request at a time
        self.takes_project: dict[str, bool] = {}

    def _tools(self) -> list[dict[str, Any]]:
        with self.lock:
            self._send_kept()
            tools = self.remote.list_tools()
        self.takes_project = {
            tool["name"]: "project" in (tool.get("inputSchema") or {}).get("properties", {})
            for tool in tools}
        return tools

    def _send_kept(self) -> None:
        if outbox.waiting(self.settings):
            outbox.send(self.remote, self.settings, said=lambda line: say(line))

    def _arguments(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        if name not in self.takes_project:
            self._tools()
        if self.project and self.takes_project.get(name) and not arguments.get("project"):
            arguments = {**arguments, "project": self.project}
        return arguments

    def _call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        try:
            arguments = self._arguments(name, arguments)
            with self.lock:
                self._send_kept()
                return self.remote.call_raw(name, arguments)
        except Unavailable as exc:
            if name != SAVE_TOOL:
                raise
            if self.project and not arguments.get("project"):  # tools/list did not answer
                arguments = {**arguments, "project": self.project}
            outbox.keep(self.settings, arguments, str(exc))
            say(f"memory mcp: kept a memory_save for later: {exc}")
            text = KEPT.format(reason=exc)
            return {"content": [{"type": "text", "text": text}], "isError": True}

    async def list_tools(self, ctx: Any, params: Any) -> types.ListToolsResult:
        try:
            tools = await anyio.to_thread.run_sync(self._tools)
        except RemoteError as exc:
            raise MCPError(types.INTERNAL_ERROR, f"Echo Memory is unreachable: {exc}") from exc
        return types.ListToolsResult(tools=[types.Tool.model_validate(t) for t in tools])

    async def call_tool(self, ctx: Any, params: types.CallToolRequestParams
                        ) -> types.CallToolResult:
        arguments = dict(params.arguments or {})
        try:
            result = await anyio.to_thread.run_sync(self._call, params.name, arguments)
        except RemoteError as exc:
            # The model reads this: a tool error it can report, not a broken connection.
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=f"Echo Memory: {exc}")],
                is_error=True)
        return types.CallToolResult.model_validate({
            key: result[key] for key in ("content", "structuredContent", "isError")
            if key in result})


def say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def serve(settings: Settings, project: str | None) -> None:
    bridge = Bridge(settings, project)
    server = Server("echo-memory", version="1", instructions=INSTRUCTIONS,
                    on_list_tools=bridge.list_tools, on_call_tool=bridge.call_tool)

    async def main() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    try:
        anyio.run(main)
    finally:
        bridge.remote.close()
