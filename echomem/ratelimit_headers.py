"""The key's window on every reply of both doors: the RateLimit header fields.

Which form. The IETF draft "RateLimit header fields for HTTP"
(draft-ietf-httpapi-ratelimit-headers, -08 and later, -12 as of 2026-11) defines two
structured fields, `RateLimit-Policy: "key";q=240;w=60` (the quota and its window) and
`RateLimit: "key";r=12;t=5` (what is left and when it next grows). It is still a draft,
and most clients and libraries that pace themselves today read the three fields of its
earlier revisions (-00 to -06): `RateLimit-Limit`, `RateLimit-Remaining` and
`RateLimit-Reset` (delta seconds, not a timestamp). We send both forms with the same
numbers: the current draft for what comes, the trio for what is deployed; about 100 bytes
a reply. docs/api.md and docs/agents.md say the same.

What the numbers mean, on a sliding log (echomem/ratelimit.py). `r`/Remaining is what
the window still takes after this request; `t`/Reset is the seconds until the oldest
counted request leaves the window, the moment Remaining next grows (a rolling window
never empties all at once, so "until the whole quota returns" would always read about
60 s and help no one). A single request refused at Remaining 0 has that as its 429's
`Retry-After`; a refused batch's may be later (it waits for room for all its messages).

Which replies. Every reply to a request counted against a key's (or a connected app's)
window: 2xx, 202, tool errors, every 4xx after admission, the 429 of that window. A
request refused before it reached a key's window (403 for its Origin, 401 for its
credential, the 429 of the per-address windows) carries none: those windows are shared by
everyone behind one address (a NAT, a connector relaying many people), so their numbers
are not this client's budget, and telling them would tell one client of the others'
traffic; their 429 has `Retry-After`, as before.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse

from echomem.ratelimit import Decision

POLICY = "key"  # the policy's name in both structured fields: per key (or connected app)
_ATTRIBUTE = "rate_limit_decision"


def remember(request: HttpRequest, decision: Decision) -> None:
    """The request's latest decision on its key's window (a batch's replaces the POST's)."""
    setattr(request, _ATTRIBUTE, decision)


def headers_of(decision: Decision) -> dict[str, str]:
    return {
        "RateLimit-Policy": f'"{POLICY}";q={decision.limit};w={decision.window}',
        "RateLimit": f'"{POLICY}";r={decision.remaining};t={decision.reset}',
        "RateLimit-Limit": str(decision.limit),
        "RateLimit-Remaining": str(decision.remaining),
        "RateLimit-Reset": str(decision.reset),
    }


class RateLimitHeaders:
    """Adds the fields to the reply of any request admission counted against a key."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        decision = getattr(request, _ATTRIBUTE, None)
        if decision is not None:
            for name, value in headers_of(decision).items():
                response[name] = value
        return response
