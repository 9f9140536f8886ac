"""The JSON-RPC methods of a tools-only MCP server: initialize, ping, tools/list, tools/call.

Tool failures a model can fix (bad arguments, an unknown memory or fact) come back
as results with isError: true and the fix; faults in the request itself are JSON-RPC
errors. An unknown tool name is a JSON-RPC error (-32602): the MCP spec lists it
among protocol errors, since no tool ran.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from accounts.principal import Principal
from echomem.errors import EchoError
from echomem.request_context import NO_CONTEXT, RequestContext
from mcp_gateway import extensions, stateless, versions
from mcp_gateway.instructions import SERVER_INSTRUCTIONS
from mcp_gateway.jsonrpc import INVALID_PARAMS, METHOD_NOT_FOUND, Message, RpcError
from mcp_gateway.models import McpSession
from tools.calling import call_tool
from tools.contract import Tool
from tools.registry import TOOLS

logger = logging.getLogger(__name__)
SERVER_NAME = "echo-memory"


def _server_version() -> str:
    try:
        return version("echo-mem")
    except PackageNotFoundError:
        return "0"


@dataclass
class Context:
    principal: Principal
    session: McpSession | None  # None: a 2026-07-28 request, which keeps no session
    request: RequestContext = NO_CONTEXT
    # 2026-07-28: the lowest log level the request asked for in its _meta; None sends none.
    log_level: str | None = None
    # The request's _meta.progressToken: progress is reported only for a request that asks.
    progress_token: str | int | None = None
    # Notifications for the client, sent before the reply on the same stream.
    notifications: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def for_request(cls, principal: Principal, session: McpSession | None, message: Message,
                    request: RequestContext) -> Context:
        meta = message.params.get("_meta")
        meta = meta if isinstance(meta, dict) else {}
        token = meta.get("progressToken")
        return cls(principal=principal, session=session, request=request,
                   log_level=meta.get(stateless.LOG_LEVEL_KEY) if session is None else None,
                   progress_token=(token if isinstance(token, str | int)
                                   and not isinstance(token, bool) else None))

    def progress(self, progress: float, total: float, message: str) -> None:
        if self.progress_token is None:
            return
        self.notifications.append({"jsonrpc": "2.0", "method": "notifications/progress",
                                   "params": {"progressToken": self.progress_token,
                                              "progress": progress, "total": total,
                                              "message": message}})

    def log(self, level: str, data: str) -> None:
        """A log message for the client, if the request asked for this level or a lower one."""
        levels = stateless.LOG_LEVELS
        if self.log_level is None or levels.index(level) < levels.index(self.log_level):
            return
        self.notifications.append({"jsonrpc": "2.0", "method": "notifications/message",
                                   "params": {"level": level, "logger": SERVER_NAME,
                                              "data": data}})


CAPABILITIES = {"tools": {"listChanged": False}}
# At 2026-07-28 every list a client may cache must carry caching hints, and the official
# conformance suite asks for prompts and resources too; we have none, and say so with
# empty catalogues rather than with "method not found".
STATELESS_CAPABILITIES = {**CAPABILITIES, "prompts": {"listChanged": False},
                          "resources": {"listChanged": False, "subscribe": False}}


def server_info() -> dict[str, str]:
    return {"name": SERVER_NAME, "title": "Echo Memory", "version": _server_version()}


def initialize_result(params: dict[str, Any]) -> dict[str, Any]:
    return {
        "protocolVersion": versions.negotiate(params.get("protocolVersion")),
        "capabilities": CAPABILITIES,
        "serverInfo": server_info(),
        "instructions": SERVER_INSTRUCTIONS,
    }


def discover(context: Context, params: dict[str, Any]) -> dict[str, Any]:
    """2026-07-28's server/discover: what initialize says, for clients that keep no session."""
    capabilities = STATELESS_CAPABILITIES
    if extensions.CAPABILITIES:
        capabilities = {**capabilities, **extensions.CAPABILITIES}
    return {"supportedVersions": list(versions.MODERN), "capabilities": capabilities,
            "instructions": SERVER_INSTRUCTIONS}


def empty_catalogue(member: str):
    def handler(context: Context, params: dict[str, Any]) -> dict[str, Any]:
        return {member: []}

    return handler


def prompts_list(context: Context, params: dict[str, Any]) -> dict[str, Any]:
    served = extensions.served_prompts(stateless=context.session is None)
    return {"prompts": [listing for listing, _ in served.values()]}


def prompts_get(context: Context, params: dict[str, Any]) -> dict[str, Any]:
    name = params.get("name")
    served = extensions.served_prompts(stateless=context.session is None)
    if not isinstance(name, str) or name not in served:
        raise RpcError(INVALID_PARAMS, f"prompt {name!r} not found: this server offers no "
                       "prompts (prompts/list is empty); its memory is reached through tools",
                       data={"field": "params.name"})
    _, run = served[name]
    return run(params, context)


def resources_read(context: Context, params: dict[str, Any]) -> dict[str, Any]:
    uri = params.get("uri")
    raise RpcError(INVALID_PARAMS, f"resource {uri!r} not found: this server offers no "
                   "resources (resources/list is empty); its memory is reached through tools",
                   data={"field": "params.uri", "uri": uri})


def ping(context: Context, params: dict[str, Any]) -> dict[str, Any]:
    return {}


def served_tools(context: Context) -> dict[str, Any]:
    """The memory tools, and those an installed app added (none in production)."""
    extra = extensions.served_tools(stateless=context.session is None)
    return {**TOOLS, **extra} if extra else TOOLS


def tools_list(context: Context, params: dict[str, Any]) -> dict[str, Any]:
    listed = []
    for tool in served_tools(context).values():
        entry = {"name": tool.name, "title": tool.title, "description": tool.description,
                 "inputSchema": tool.input_schema(), "outputSchema": tool.output_schema(),
                 "annotations": tool.annotations()}
        listed.append({k: v for k, v in entry.items() if v is not None})
    return {"tools": listed}


def tools_call(context: Context, params: dict[str, Any]) -> dict[str, Any]:
    name = params.get("name")
    served = served_tools(context)
    tool = served.get(name) if isinstance(name, str) else None
    if tool is None:
        raise RpcError(INVALID_PARAMS,
                       f"unknown tool {name!r}; call tools/list for the names, which are "
                       f"{', '.join(served)}", data={"field": "params.name"})
    arguments = params.get("arguments", {})
    if arguments is not None and not isinstance(arguments, dict):
        raise RpcError(INVALID_PARAMS, "params.arguments must be a JSON object of the tool's "
                       "arguments", data={"field": "params.arguments"})
    if not isinstance(tool, Tool):  # an extension's tool builds its own result
        return tool.call(params, context)
    try:
        output = call_tool(context.principal, tool, arguments, context.request)
    except EchoError as exc:
        return tool_error(exc)
    return {**output, "content": [{"type": "text", "text": tool.text(output)}],
            "structuredContent": output, "isError": False}


def tool_error(exc: EchoError) -> dict[str, Any]:
    error = exc.as_dict()
    text = exc.message
    if exc.fix:
        text += f". Fix: {exc.fix}"
    return {"content": [{"type": "text", "text": text}], "isError": True, "error": error}


HANDLERS = {"ping": ping, "tools/list": tools_list, "tools/call": tools_call}
# 2026-07-28 removed initialize and ping; server/discover takes their place.
STATELESS_HANDLERS = {"server/discover": discover, "tools/list": tools_list,
                      "tools/call": tools_call, "prompts/list": prompts_list,
                      "prompts/get": prompts_get,
                      "resources/list": empty_catalogue("resources"),
                      "resources/templates/list": empty_catalogue("resourceTemplates"),
                      "resources/read": resources_read}


def dispatch(context: Context, message: Message) -> dict[str, Any]:
    sessionless = context.session is None
    handler = (STATELESS_HANDLERS if sessionless else HANDLERS).get(message.method)
    if handler is None:
        served = (", ".join(STATELESS_HANDLERS) + " (at 2026-07-28, without a session)"
                  if sessionless else f"initialize, {', '.join(HANDLERS)}")
        raise RpcError(METHOD_NOT_FOUND,
                       f"method {message.method!r} is not served here; this tools-only server "
                       f"answers {served}", data={"field": "method"}, request_id=message.id)
    try:
        return handler(context, message.params)
    except RpcError as exc:
        exc.request_id = message.id
        raise
