"""The time zone a page shows times in: the person's choice (their settings), else their
browser's (the `tz` cookie web/static/web/timezone.js sets), else UTC.

The choice is read once per sign-in into the session, so a page costs no query for it.
A cookie anyone can set is only ever looked up in zoneinfo's list, never passed on.
"""

from __future__ import annotations

import zoneinfo
from dataclasses import dataclass

from django.contrib.auth import SESSION_KEY
from django.contrib.auth.signals import user_logged_in
from django.dispatch import receiver
from django.utils import timezone

from accounts.preferences import chosen_time_zone, known_time_zone

COOKIE = "tz"
CHOICE = "echo_memory_time_zone"


@dataclass(frozen=True)
class ViewerZone:
    name: str
    source: str  # "settings", "browser" or "default"

    @property
    def explained(self) -> str:
        return {"settings": "your setting", "browser": "your browser's",
                "default": "the default; your browser's zone is used once script runs"
                }[self.source]


def viewer_zone(request) -> ViewerZone:
    session = request.session
    choice = session.get(CHOICE)
    if choice is None and session.get(SESSION_KEY) is not None:
        choice = session[CHOICE] = chosen_time_zone(session[SESSION_KEY])  # an older session
    if known_time_zone(choice):
        return ViewerZone(choice, "settings")
    if browser := known_time_zone(request.COOKIES.get(COOKIE)):
        return ViewerZone(browser, "browser")
    return ViewerZone("UTC", "default")


def remember_choice(request, name: str) -> None:
    request.session[CHOICE] = name


@receiver(user_logged_in)
def _read_choice_at_sign_in(sender, request, user, **kwargs) -> None:
    if request is not None and hasattr(request, "session"):
        request.session[CHOICE] = chosen_time_zone(user.pk)


# The agents' doors answer in UTC whoever calls (their ISO times carry the offset anyway),
# and an agent's request never touches a session here.
MACHINE_DOORS = ("/mcp", "/api/")


class ViewerTimeZone:
    """Activates the viewer's zone for the request: every `date` filter shows it."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.path.startswith(MACHINE_DOORS):
            return self.get_response(request)
        zone = request.time_zone = viewer_zone(request)
        timezone.activate(zoneinfo.ZoneInfo(zone.name))
        try:
            return self.get_response(request)
        finally:
            timezone.deactivate()


def time_zone(request) -> dict[str, object]:
    """Context processor: the page's zone, for the note saying which one it is."""
    return {"time_zone": getattr(request, "time_zone", None)}
