"""Where a sign-in came from, as a person reads it: the network (echomem/client_address.py
client_network: not the whole address) and the browser and system from the User-Agent,
kept short."""

from __future__ import annotations

import re

from echomem.client_address import client_network

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
    """The client's network, printable and at most 64 characters (a proxy may write text
    that is no address)."""
    return _UNPRINTABLE.sub("?", client_network(meta))[:64]


def device_of(user_agent: str) -> str:
    """`Firefox on Linux`, from a User-Agent header; its first characters when it names no
    browser or system we know; `unknown device` when there is none."""
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
