"""What the pages that show the connect snippets need: this server's own endpoint, as the
browser reached it, and every client's snippets for it from echomem.agent_clients."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from echomem.agent_clients import KEY_ENV, clients


def mcp_url(request: HttpRequest) -> str:
    return request.build_absolute_uri("/mcp")


def connect_context(request: HttpRequest, only: tuple[str, ...] = ()) -> dict[str, Any]:
    """`only` narrows the clients (by id, in that order) for pages with less room."""
    endpoint = mcp_url(request)
    found = clients(endpoint)
    if only:
        by_id = {client.id: client for client in found}
        found = [by_id[client_id] for client_id in only]
    return {"mcp_url": endpoint, "connect_clients": found, "key_env": KEY_ENV}
