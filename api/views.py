from __future__ import annotations

from rest_framework.decorators import api_view
from rest_framework.request import Request
from rest_framework.response import Response

from memories.selectors import memory_list


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
