"""Which callbacks a client may register (RFC 8252, RFC 9700 2.1): https anywhere; http only
on a loopback address or localhost (a native app's callback, on any port at request time);
a private-use scheme (`cursor:`) as the settings list them. Checked where a registration
arrives, dynamic (RFC 7591) or by metadata document, before django-oauth-toolkit stores it."""

from __future__ import annotations

from urllib.parse import urlsplit

LOOPBACK_HOSTS = {"127.0.0.1", "::1", "localhost"}
MAX_URIS = 10
MAX_URI_CHARS = 2000


def redirect_uri_problem(uris: object) -> str | None:
    """Why these redirect URIs cannot be registered, or None when they can."""
    if not isinstance(uris, list) or not uris:
        return "redirect_uris must be a non-empty array of absolute URIs"
    if len(uris) > MAX_URIS:
        return f"redirect_uris holds at most {MAX_URIS} URIs"
    for uri in uris:
        if not isinstance(uri, str) or not uri or len(uri) > MAX_URI_CHARS:
            return f"each redirect URI must be a string of 1 to {MAX_URI_CHARS} characters"
        if "\x00" in uri or any(ch.isspace() for ch in uri):
            return f"the redirect URI {uri[:80]!r} holds whitespace or a NUL character"
        parts = urlsplit(uri)
        if parts.fragment:
            return f"the redirect URI {uri} must not have a fragment (RFC 6749 3.1.2)"
        if parts.scheme == "http" and parts.hostname not in LOOPBACK_HOSTS:
            return (f"the redirect URI {uri} uses http on a host that is not this machine; "
                    "use https, or http://127.0.0.1:PORT/... for a native app (RFC 8252)")
    return None
