"""Which MCP protocol revisions we speak, and how a version is agreed.

Two eras share /mcp. The handshake revisions (2025-*) agree a version in `initialize`
and keep it in a session. The stateless revision (2026-07-28) agrees nothing: every
request names its version in `params._meta` and in the MCP-Protocol-Version header,
and `server/discover` tells a client which modern versions we speak.
"""

from __future__ import annotations

from mcp_gateway.jsonrpc import UNSUPPORTED_PROTOCOL_VERSION, RpcError

HANDSHAKE = ("2025-03-26", "2025-06-18", "2025-11-25")
MODERN = ("2026-07-28",)
SUPPORTED = HANDSHAKE + MODERN
# What initialize answers a client whose offer we do not speak: the newest handshake revision.
LATEST = HANDSHAKE[-1]
# JSON-RPC batching was removed in 2025-06-18; only the oldest revision we speak allows it.
BATCHING = frozenset({"2025-03-26"})


def negotiate(requested: object) -> str:
    """The client's version when we speak it, else our latest (the client then decides)."""
    return requested if requested in HANDSHAKE else LATEST


def unsupported(version: str, supported: tuple[str, ...], request_id: object = None,
                how: str = "") -> RpcError:
    """-32022 with the versions we speak: what a client reads to pick one of them."""
    return RpcError(
        UNSUPPORTED_PROTOCOL_VERSION,
        f"MCP protocol version {version} is not supported; this server speaks "
        f"{', '.join(supported)}{how}",
        data={"field": "MCP-Protocol-Version", "supported": list(supported),
              "requested": version},
        http_status=400, request_id=request_id,
    )


def check_header(value: str | None, request_id: object = None) -> str | None:
    """The handshake-era MCP-Protocol-Version header; an unknown one is a 400 with -32022.

    (A 2026-07-28 header never reaches here: the view serves those requests statelessly.)
    """
    if value is None or not value.strip():
        return None
    version = value.strip()
    if version not in HANDSHAKE:
        raise unsupported(version, SUPPORTED, request_id,
                          ": send initialize with a 2025 version and repeat the negotiated one "
                          "in this header, or send 2026-07-28 requests without a session")
    return version
