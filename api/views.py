from __future__ import annotations

from datetime import datetime

from drf_spectacular.utils import extend_schema
from pydantic import BaseModel
from rest_framework.decorators import api_view
from rest_framework.request import Request
from rest_framework.response import Response

from api.schema import ERROR_RESPONSES
from memories.graph.selectors import memory_list


class MemoryOut(BaseModel):
    name: str
    description: str
    created_at: datetime
    default: bool


class MemoriesOut(BaseModel):
    memories: list[MemoryOut]


@extend_schema(operation_id="list_memories", summary="List memories", tags=["memories"],
               responses={200: MemoriesOut, **ERROR_RESPONSES})
@api_view(["GET"])
def memories(request: Request) -> Response:
    """The memories (graphs) of the key's account, with the key's default marked."""
    principal = request.auth
    rows = memory_list(principal)
    default_id = principal.default_memory_id or next(
        (m.pk for m in rows if m.name == "default"), None
    )
    return Response({"memories": [
        {"name": m.name, "description": m.description, "created_at": m.created_at,
         "default": m.pk == default_id}
        for m in rows
    ]})
