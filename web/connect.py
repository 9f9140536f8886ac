"""What the pages that show the connect snippets need: this server's MCP endpoint as it is
configured (the OAuth resource: the URL an app signs in for must be this one, whatever Host
a browser came by), the clients that sign in (echomem.agent_connectors) and every client's
key snippets (echomem.agent_clients)."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from echomem import oauth_addresses
from echomem.agent_clients import KEY_ENV, clients
from echomem.agent_connectors import connectors


def mcp_url(request: HttpRequest | None = None) -> str:
    return oauth_addresses.mcp_resource()


def connect_context(request: HttpRequest, only: tuple[str, ...] = ()) -> dict[str, Any]:
    """`only` narrows the key clients (by id, in that order) for pages with less room."""
    endpoint = mcp_url(request)
    found = clients(endpoint)
    if only:
        by_id = {client.id: client for client in found}
        found = [by_id[client_id] for client_id in only]
    return {"mcp_url": endpoint, "connect_clients": found, "key_env": KEY_ENV,
            "connect_signin": connectors(endpoint)}
