"""Every page answers with a Content-Security-Policy that allows no inline script; the
API docs page has its own policy, exactly. The pages come from the URLconf (as in
test_other_accounts_objects), so a page added later is checked too."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.contrib.auth.tokens import default_token_generator
from django.core import signing
from django.urls import URLResolver, get_resolver
from django.urls.resolvers import RoutePattern
from django.utils import timezone
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode
from oauth2_provider.models import get_application_model

from accounts.connections import connect
from accounts.models import Invitation, Membership
from accounts.team import token_hash
from memories.models import Entity, Episode, Fact, Note
from tests.factories import signed_in_elsewhere
from web import verification


def _pages(patterns=None, prefix: str = "") -> list[str]:
    """Our HTML pages: the project's own and the web app's (the admin is Django's; the API
    docs are checked on their own below)."""
    found = []
    for entry in patterns if patterns is not None else get_resolver().url_patterns:
        if isinstance(entry, URLResolver):
            if entry.namespace in (None, "web"):
                found += _pages(entry.url_patterns, prefix + str(entry.pattern))
        elif isinstance(entry.pattern, RoutePattern):
            found.append(prefix + str(entry.pattern))
    return found


def _invitation(actor, token: str) -> Invitation:
    return Invitation.objects.create(
        account=actor.account, email="newcomer@example.com", token_hash=token_hash(token),
        invited_by=actor.user, expires_at=timezone.now() + timedelta(days=1))


def _connection(actor, client_id: str = "an-app"):
    """A connected app of the actor's (an OAuth client they allowed), made as consent does."""
    app, _ = get_application_model().objects.get_or_create(
        client_id=client_id, defaults={
            "name": "An app", "client_type": "public",
            "authorization_grant_type": "authorization-code",
            "redirect_uris": "http://127.0.0.1:9/callback"})
    return connect(user=actor.user, account_id=actor.account.pk, application=app,
                   read_only=False, memories=None, default_memory=None)


def _own(route: str, param: str, actor) -> str:
    """A real object of the signed-in person for each kind of parameter."""
    if param == "key_id":
        return str(actor.key.pk)
    if param == "name":
        return "default"
    if param == "uidb64":
        return urlsafe_base64_encode(force_bytes(actor.user.pk))
    if param == "token" and route.startswith("verify-email"):
        return signing.dumps({"user": actor.user.pk, "email": actor.user.email},
                             salt=verification.SALT)
    if param == "token" and route.startswith("invitations"):
        _invitation(actor, "a-real-link-token")
        return "a-real-link-token"
    if param == "token":
        return default_token_generator.make_token(actor.user)
    if param == "invitation_id":
        return str(_invitation(actor, "another-link-token").pk)
    if param == "member_id":
        return str(Membership.objects.get(account=actor.account, user=actor.user).pk)
    if param in ("entity_id", "episode_id", "fact_id"):
        episode = Episode.objects.create(memory=actor.account.default_memory,
                                         partition="shared", tool=actor.key.tool)
        if param == "episode_id":
            return str(episode.pk)
        name = "Ada" if param == "entity_id" else "Grace"  # both pages in one test
        entity = Entity.objects.create(memory_id=episode.memory_id, partition="shared",
                                       name=name, normalized_name=name.lower(), type="person",
                                       episode=episode)
        if param == "entity_id":
            return str(entity.pk)
        return str(Fact.objects.create(
            memory_id=episode.memory_id, partition="shared", source=entity, target=entity,
            relation_type="is", fact="Grace is Grace", confidence="extracted",
            episode=episode, written_by_tool=actor.key.tool, created_at=timezone.now(),
            search_text="Grace is Grace").pk)
    if param == "note_id":
        now = timezone.now()
        return str(Note.objects.create(memory=actor.account.default_memory, partition="shared",
                                       title="A note", what="What it says",
                                       written_by_tool=actor.key.tool, created_at=now,
                                       updated_at=now, search_text="A note").pk)
    if param == "page":  # a guide of the user docs
        return "dashboard"
    if param == "sign_in_id":
        return str(signed_in_elsewhere(actor.user).pk)
    if param == "connection_id":
        return str(_connection(actor).pk)
    raise AssertionError(f"say how to make a real {param} for {route}")


# favicon.ico redirects to a static file, which WhiteNoise serves before any middleware.
PAGES = [route for route in _pages() if route != "favicon.ico"]


def policy(header: str) -> dict[str, list[str]]:
    return {name: sources for name, *sources in
            (part.split() for part in header.split(";") if part.strip())}


def script_sources(header: str) -> list[str]:
    directives = policy(header)
    return directives.get("script-src") or directives["default-src"]


def test_the_pages_include_the_web_app_and_the_home_page():
    assert "" in PAGES and "login/" in PAGES and "keys/<int:key_id>/revoke/" in PAGES


@pytest.mark.parametrize("signed_in", [False, True], ids=["public", "signed-in"])
@pytest.mark.parametrize("route", PAGES)
def test_every_page_has_a_policy_without_inline_scripts(client, alice, route, signed_in):
    if signed_in:
        client.force_login(alice.user)
    path = "/" + re.sub(r"<(?:\w+:)?(\w+)>", lambda param: _own(route, param[1], alice), route)
    for answer in (client.get(path), client.get(path, follow=True)):
        assert answer.status_code < 500, path
        header = answer.headers.get("Content-Security-Policy")
        assert header, f"{path} has no Content-Security-Policy"
        sources = script_sources(header)
        assert "'unsafe-inline'" not in sources and "'unsafe-eval'" not in sources, path
        assert sources == ["'self'"], path
        assert "frame-ancestors 'none'" in header and "object-src 'none'" in header


def test_the_pages_carry_no_inline_script_or_handler(client, alice):
    client.force_login(alice.user)
    for route in PAGES:
        path = "/" + re.sub(r"<(?:\w+:)?(\w+)>", lambda p, r=route: _own(r, p[1], alice), route)
        response = client.get(path, follow=True)
        if response.streaming:  # the audit log's exports: CSV and JSON lines, not pages
            assert not response["Content-Type"].startswith("text/html"), path
            continue
        html = response.content.decode()
        assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", html), f"inline script on {path}"
        assert not re.search(r"\son[a-z]+\s*=", html), f"event-handler attribute on {path}"
        assert not re.search(r"\sstyle\s*=", html), f"style attribute on {path}"


def test_the_api_docs_get_exactly_their_own_policy(client, db):
    response = client.get("/api/v1/docs")
    assert response.status_code == 200
    # Scripts only from our files; its template's <style> block and Swagger UI's style
    # attributes need inline styles, and nothing else is widened.
    assert policy(response.headers["Content-Security-Policy"]) == {
        "default-src": ["'self'"], "script-src": ["'self'"],
        "style-src": ["'self'", "'unsafe-inline'"], "img-src": ["'self'", "data:"],
        "connect-src": ["'self'"], "object-src": ["'none'"], "base-uri": ["'self'"],
        "form-action": ["'self'"], "frame-ancestors": ["'none'"]}
    html = response.content.decode()
    assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", html)
    script = client.get("/api/v1/docs?script=")
    assert script.status_code == 200 and "SwaggerUIBundle" in script.content.decode()


def test_api_answers_carry_the_strict_policy(client, alice):
    response = client.get("/api/v1/memories", **alice.auth_header)
    assert response.status_code == 200
    assert script_sources(response.headers["Content-Security-Policy"]) == ["'self'"]
