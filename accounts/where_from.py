"""Where a sign-in came from, as a person reads it: the network (not the address: a phone's
address changes within its provider's block, and a whole address is more than the sessions
page needs to keep) and the browser and system, from the User-Agent, kept short."""

from __future__ import annotations

import ipaddress
import re

from echomem.client_address import client_address

IPV4_PREFIX = 24
IPV6_PREFIX = 48
DEVICE_CHARS = 80

# First match wins: Edge and Opera say "Chrome" too, Chrome says "Safari" too.
_BROWSERS = (("Edg/", "Edge"), ("OPR/", "Opera"), ("Firefox/", "Firefox"),
             ("Chrome/", "Chrome"), ("Chromium/", "Chromium"), ("Safari/", "Safari"),
             ("curl/", "curl"), ("python-", "Python"))
_SYSTEMS = (("iPhone", "iPhone"), ("iPad", "iPad"), ("Android", "Android"),
            ("Windows", "Windows"), ("Mac OS X", "macOS"), ("Macintosh", "macOS"),
            ("CrOS", "ChromeOS"), ("Linux", "Linux"))
_UNPRINTABLE = re.compile(r"[^\x20-\x7e]")


def network_of(meta: dict) -> str:
    """The client's network: `192.0.2.0/24`, `2001:db8:1::/48`, `loopback`, or the address
    text as the proxy wrote it when it is no IP (bounded), `unknown` when there is none."""
    address = client_address(meta)
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return _UNPRINTABLE.sub("?", address)[:64] or "unknown"
    if ip.is_loopback:
        return "loopback"
    prefix = IPV4_PREFIX if ip.version == 4 else IPV6_PREFIX
    return str(ipaddress.ip_network(f"{ip}/{prefix}", strict=False))


def device_of(user_agent: str) -> str:
    """`Firefox on Linux`, from a User-Agent header; its first words when it names no
    browser we know; `unknown device` when there is none."""
    text = _UNPRINTABLE.sub("", user_agent or "").strip()
    browser = next((name for mark, name in _BROWSERS if mark in text), "")
    system = next((name for mark, name in _SYSTEMS if mark in text), "")
    if browser and system:
        return f"{browser} on {system}"
    if browser or system:
        return browser or system
    if not text:
        return "unknown device"
    return text if len(text) <= DEVICE_CHARS else text[:DEVICE_CHARS - 1] + "…"
