"""Who is on the other end of a request, for every limit and check that goes by address.

One function reads the address (`client_address`) and one makes the key a limit counts
under (`client_key`), for both doors (/mcp and /api/v1, echomem/admission.py) and the
web's pages (web/limits.py): the same client is one client everywhere.
"""

from __future__ import annotations

import ipaddress

from django.conf import settings

# An address a proxy wrote that is no IP at all still counts under a bounded key.
_UNPARSED_KEEP = 64


def client_address(meta: dict) -> str:
    """The client's IP address: the peer, or with ECHO_MEMORY_TRUSTED_PROXY_HOPS the one the
    proxies saw. An IPv4 client reaching an IPv6 socket (`::ffff:192.0.2.1`) is that IPv4
    address, and a zone (`fe80::1%eth0`) is dropped; text that is no address is returned
    as it came (stripped, at most 64 characters)."""
    peer = meta.get("REMOTE_ADDR") or ""
    hops = settings.TRUSTED_PROXY_HOPS
    if hops > 0:
        forwarded = [part.strip() for part in (meta.get("HTTP_X_FORWARDED_FOR") or "").split(",")]
        forwarded = [part for part in forwarded if part]
        if forwarded:
            peer = forwarded[-hops] if len(forwarded) >= hops else forwarded[0]
    ip = _parsed(peer)
    return str(ip) if ip is not None else peer.strip()[:_UNPARSED_KEEP]


def client_key(meta: dict) -> str:
    """What a per-address limit counts under: the IPv4 address, the /64 of an IPv6 one
    (one host commonly holds a whole /64), except loopback (`::1` is this machine, not
    the `::/64` it would round to); `unknown` when there is no address at all."""
    address = client_address(meta)
    ip = _parsed(address)
    if ip is None:
        return address or "unknown"
    if ip.version == 6 and not ip.is_loopback:
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)


def network_of(address: str | None) -> str:
    """The network an address (as client_address gives it) belongs to, as the keys page
    shows a key's last use: an IPv4 address's /24, an IPv6 address's /48 (a home or an
    office, not a person's exact address); '' when there is no address."""
    ip = _parsed(address or "")
    if ip is None:
        return ""
    return str(ipaddress.ip_network(f"{ip}/{24 if ip.version == 4 else 48}", strict=False))


def client_network(meta: dict) -> str:
    """The network a client is in, as the sessions page and new-sign-in mails name it: the
    /24 of an IPv4 address, the /48 of an IPv6 one (a phone moves within its provider's
    block; the whole address is more than is needed), `loopback` for this machine, the text
    as the proxy wrote it when it is no address, `unknown` when there is none."""
    address = client_address(meta)
    ip = _parsed(address)
    if ip is None:
        return address or "unknown"
    if ip.is_loopback:
        return "loopback"
    return network_of(address)


def is_loopback(address: str | None) -> bool:
    """Whether the address (as client_address gives it) is this machine."""
    ip = _parsed(address or "")
    return ip is not None and ip.is_loopback


def _parsed(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        ip = ipaddress.ip_address(text.strip().split("%", 1)[0])
    except ValueError:
        return None
    if ip.version == 6 and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip
