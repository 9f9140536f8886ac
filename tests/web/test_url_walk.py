"""Every route of the URLconf, walked in process with values no route can use.

The routes come from Django's resolver (includes followed, the admin's too), not from a
list kept by hand, so a route added tomorrow is walked as well. For each route, as an
anonymous visitor, the owner (alice), a member (bob) and an operator (a superuser: the
admin's pages), with GET and with POST:

- a plain request first, which records every query and form field the view reads
  (`tests.routes.FieldsRead`);
- then each path parameter in turn, and all those fields at once, set to a NUL byte,
  10,000 characters, and bytes that are not UTF-8.

Every answer must be below 500 with no traceback logged, and a refusal (4xx) must come
in its door's shape: JSON from /mcp, /api and Stripe's webhook, a page from the site.
Each request runs in a savepoint that is rolled back, so one route's POST (a key
revoked, a member removed, a sign-out) does not change what the next route sees.
"""

from __future__ import annotations

import copy
import logging
import uuid

import pytest
from django.contrib.auth import get_user_model
from django.db import transaction
from django.test import Client

from accounts.models import Membership
from accounts.team import invite
from memories.graph.services import memory_create
from memories.models import Entity
from tests.factories import Engine, fact, person, signed_in_elsewhere
from tests.routes import (
    HOSTILE,
    FieldsRead,
    Route,
    declared_fields,
    encode_fields,
    every_route,
    json_door,
    page_door,
)
from tests.web.test_security_headers import _connection
from tools.calling import run_validated
from tools.registry import TOOLS

METHODS = ("GET", "POST")


@pytest.fixture
def world(alice, bob, settings):
    """An object for every kind of path parameter, so that plain requests reach deep."""
    settings.RATE_LIMIT_PER_MINUTE = 10**9  # thousands of requests from two keys
    settings.UNAUTHENTICATED_RATE_LIMIT_PER_MINUTE = 10**9
    # ... and from one address, counted in Redis, which outlives the test: counted apart,
    # so that the next tests' keyless requests are not refused for this one's.
    settings.RATE_LIMIT_REDIS_PREFIX += f"url-walk:{uuid.uuid4().hex}:"
    settings.STRIPE_WEBHOOK_SECRET = "whsec_url_walk"  # configured: bad bodies are refused
    memory_create(account_id=alice.account.pk, name="notes")
    written = Engine(alice.principal).write(
        assume_new=True, entities=[person("Ada"), person("Grace")],
        facts=[fact("Ada", "Grace", "mentors", "Ada mentors Grace")])
    note = run_validated(alice.principal, TOOLS["memory_save"], {
        "title": "Pool size halved", "what": "Deploy 41 halved the pool", "category": "bug"})
    tokens: list[str] = []
    invitation = invite(principal=alice.principal, actor_role=Membership.Role.OWNER,
                        email="dora@example.com", role=Membership.Role.MEMBER,
                        link_for=lambda token: tokens.append(token) or token)
    operator = get_user_model().objects.create_superuser("operator", "op@example.com", "pw")
    known = {
        "name": "default",
        "entity_id": str(Entity.objects.get(name="Ada").pk),
        "episode_id": str(written["episode_id"]),
        "note_id": str(note["id"]),
        "key_id": str(alice.key.pk),
        "member_id": str(Membership.objects.get(user=bob.user).pk),
        "invitation_id": str(invitation.pk),
        "token": tokens[0],
        "sign_in_id": str(signed_in_elsewhere(alice.user).pk),
        "connection_id": str(_connection(bob).pk),
    }
    return known, {"anonymous": _client(None), "owner": _client(alice.user, alice.plaintext),
                   "member": _client(bob.user, bob.plaintext), "operator": _client(operator)}


def _client(user, key: str | None = None) -> Client:
    """A browser (and, with its key, an agent): answers come back, faults too."""
    client = Client(raise_request_exception=False)
    if user is not None:
        client.force_login(user)
    if key:
        client.defaults["HTTP_AUTHORIZATION"] = f"Bearer {key}"
    return client


class _Tracebacks(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.ERROR)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info:
            self.count += 1


def _send(client: Client, method: str, path: str, fields: dict[str, str | bytes]):
    """One request, its database changes undone afterwards and its cookies kept."""
    query = encode_fields(fields)
    url = f"{path}?{query}" if query else path
    cookies = copy.deepcopy(client.cookies)  # Client updates its cookie jar in place
    try:
        with transaction.atomic():
            if method == "GET":
                response = client.get(url)
            else:  # the fields in the body too: forms read POST, some views GET
                response = client.post(url, data=query.encode(),
                                       content_type="application/x-www-form-urlencoded")
            transaction.set_rollback(True)
    finally:
        client.cookies = cookies
    return response


def _fault(path: str, response, tracebacks: int) -> str | None:
    status, kind = response.status_code, response.get("Content-Type", "")
    if status >= 500 or tracebacks:
        return f"{status}, {tracebacks} traceback(s) logged"
    if 400 <= status < 500 and json_door(path) and "json" not in kind:
        return f"{status} as {kind}, not JSON"
    if 400 <= status < 500 and page_door(path) and "html" not in kind:
        return f"{status} as {kind}, not a page"
    return None


def _cases(route: Route, known: dict[str, str], fields: set[str]):
    """(what, path, fields): each parameter hostile in turn, then each field read alone (one
    refused early must not hide another, as a bad page number hid the admin's search),
    then all of them at once (a view may read one only once another is given)."""
    for param in route.params:
        for kind, spellings in HOSTILE.items():
            yield f"{param}={kind}", route.path(known, param, spellings), {}
    groups = [[name] for name in sorted(fields)] + ([sorted(fields)] if len(fields) > 1 else [])
    for group in groups:
        for kind, spellings in HOSTILE.items():
            yield (f"fields {', '.join(group)}={kind}", route.path(known),
                   dict.fromkeys(group, spellings[0]))


def test_every_route_answers_bad_path_query_and_form_values_without_a_fault(world):
    known, clients = world
    catcher = _Tracebacks()
    logging.getLogger().addHandler(catcher)
    faults: list[str] = []
    routes, sent = 0, 0
    try:
        for route in every_route():
            routes += 1
            for who, client in clients.items():
                for method in METHODS:
                    plain = route.path(known)
                    before = catcher.count
                    with FieldsRead() as read:
                        response = _send(client, method, plain, {})
                    cases = [("plain values", plain, {}, response, catcher.count - before)]
                    # A view that read no field at all refused before looking at the query
                    # (the admin's pages for anyone but staff): nor will it read those.
                    names = read.fields | (declared_fields(route) if read.fields else set())
                    for what, path, fields in _cases(route, known, names):
                        before = catcher.count
                        response = _send(client, method, path, fields)
                        cases.append((what, path, fields, response, catcher.count - before))
                    sent += len(cases)
                    faults += [f"{method} {route} as {who}, {what}: {fault}"
                               for what, path, _, response, tracebacks in cases
                               if (fault := _fault(path, response, tracebacks))]
    finally:
        logging.getLogger().removeHandler(catcher)
    assert routes > 100 and sent > 1000
    assert not faults, f"{len(faults)} of {sent} requests faulted:\n" + "\n".join(faults)
