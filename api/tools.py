"""POST /api/v1/tools/<name>: each MCP tool as one REST endpoint, generated from the registry.

Same validation (the tool's argument model), same engine call, same units hook and
rate limit as tools/call; errors are 400/404 with the field and the fix.
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.decorators import api_view, parser_classes
from rest_framework.request import Request
from rest_framework.response import Response

from api.parsers import JsonBodyParser
from api.schema import ERROR_RESPONSES
from echomem.errors import ValidationFailed
from echomem.request_context import RequestContext
from tools.calling import call_tool
from tools.contract import Tool
from tools.registry import TOOLS


def tool_view(tool: Tool):
    def view(request: Request) -> Response:
        if not isinstance(request.data, dict):
            raise ValidationFailed("the body must be a JSON object of the tool's arguments",
                                   field="body", fix='send e.g. {"scope": "shared", ...}')
        return Response(call_tool(request.auth, tool, request.data,
                                  RequestContext.from_headers(request.headers)))

    view.__name__ = view.__qualname__ = tool.name
    view.__doc__ = tool.description
    view = api_view(["POST"])(parser_classes([JsonBodyParser])(view))
    return extend_schema(
        operation_id=tool.name, summary=tool.title, description=tool.description,
        request=tool.args, tags=["tools"],
        responses={200: tool.output, **ERROR_RESPONSES},
    )(view)


VIEWS = {name: tool_view(tool) for name, tool in TOOLS.items()}
