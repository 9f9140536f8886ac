"""Which MCP protocol revisions we speak, and how a version is agreed."""

from __future__ import annotations

from mcp_gateway.jsonrpc import UNSUPPORTED_PROTOCOL_VERSION, RpcError

SUPPORTED = ("2025-03-26", "2025-06-18", "2025-11-25")
LATEST = SUPPORTED[-1]
# JSON-RPC batching was removed in 2025-06-18; only the oldest revision we speak allows it.
BATCHING = frozenset({"2025-03-26"})


def negotiate(requested: object) -> str:
    """The client's version when we speak it, else our latest (the client then decides)."""
    return requested if requested in SUPPORTED else LATEST


def check_header(value: str | None, request_id: object = None) -> str | None:
    """An unsupported MCP-Protocol-Version header is a 400, so newer clients fall back.

    The error carries -32022 with the versions we speak: a 2026-07-28 client probing
    `server/discover` reads that as "this server speaks the initialize handshake".
    """
    if value is None or not value.strip():
        return None
    version = value.strip()
    if version not in SUPPORTED:
        raise RpcError(
            UNSUPPORTED_PROTOCOL_VERSION,
            f"MCP-Protocol-Version {version} is not supported; this server speaks "
            f"{', '.join(SUPPORTED)}: send initialize with one of them, then send the "
            "negotiated version in this header",
            data={"field": "MCP-Protocol-Version", "supported": list(SUPPORTED),
                  "requested": version},
            http_status=400, request_id=request_id,
        )
    return version
