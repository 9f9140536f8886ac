"""Every page that takes an id or a name, tried with another account's object, answers 404,
the same as for a missing one. The URLs come from the URLconf, so a page added later is
covered; a new kind of parameter fails here until it says how to make another account's."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.urls import URLPattern, URLResolver, get_resolver
from django.utils import timezone
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from accounts.models import Invitation, Membership
from accounts.team import token_hash
from memories.models import Entity, Episode, Fact, Memory, Note
from tests.factories import signed_in_elsewhere
from tests.web.test_security_headers import _connection


def _web_patterns(patterns=None, prefix: str = "") -> list[tuple[str, URLPattern]]:
    found = []
    for entry in patterns if patterns is not None else get_resolver().url_patterns:
        if isinstance(entry, URLResolver):
            if entry.namespace in (None, "web"):
                found += _web_patterns(entry.url_patterns, prefix + str(entry.pattern))
        elif entry.pattern.converters:
            found.append((prefix + str(entry.pattern), entry))
    return found


def _their_episode(outsider) -> Episode:
    return Episode.objects.create(memory=Memory.objects.get(account=outsider.account,
                                                            name="default"),
                                  partition="shared", tool=outsider.key.tool)


def _their_entity(outsider) -> Entity:
    episode = _their_episode(outsider)
    return Entity.objects.create(memory_id=episode.memory_id, partition="shared",
                                 name="Theirs", normalized_name="theirs", type="thing",
                                 episode=episode)


def _their_fact(outsider) -> Fact:
    entity = _their_entity(outsider)
    return Fact.objects.create(memory_id=entity.memory_id, partition="shared", source=entity,
                               target=entity, relation_type="is", fact="Theirs is theirs",
                               confidence="extracted", episode_id=entity.episode_id,
                               written_by_tool=outsider.key.tool, created_at=timezone.now(),
                               search_text="Theirs is theirs")


def _their_note(outsider) -> Note:
    now = timezone.now()
    return Note.objects.create(memory=Memory.objects.get(account=outsider.account,
                                                         name="default"),
                               partition="shared", title="Theirs", what="Their note",
                               written_by_tool=outsider.key.tool, created_at=now,
                               updated_at=now, search_text="Theirs")


def _their_invitation(outsider, token: str = "their-link-token") -> Invitation:
    return Invitation.objects.create(
        account=outsider.account, email="someone@example.com", token_hash=token_hash(token),
        invited_by=outsider.user, expires_at=timezone.now() + timedelta(days=1))


OTHER_ACCOUNTS = {
    "key_id": lambda outsider: outsider.key.pk,
    "member_id": lambda outsider: Membership.objects.get(account=outsider.account).pk,
    "invitation_id": lambda outsider: _their_invitation(outsider).pk,
    # A link sent to someone else: a signed-in person with another email is told it is not
    # theirs (404), and learns nothing about the account. The password-reset page takes a
    # `token` too: this one, not made for that user, is refused there with 404 as well.
    "token": lambda outsider: _their_invitation(outsider, "their-link-token") and
    "their-link-token",
    "name": lambda outsider: Memory.objects.create(account=outsider.account,
                                                   name="only-theirs").name,
    "entity_id": lambda outsider: _their_entity(outsider).pk,
    "episode_id": lambda outsider: _their_episode(outsider).pk,
    "note_id": lambda outsider: _their_note(outsider).pk,
    "fact_id": lambda outsider: _their_fact(outsider).pk,
    # Links mailed to another person: their user id, with a token this person cannot know.
    "uidb64": lambda outsider: urlsafe_base64_encode(force_bytes(outsider.user.pk)),
    # The user docs belong to no account: a guide that does not exist is the 404 here.
    "page": lambda outsider: "no-such-guide",
    # A session is a person's: another person's is not found, whoever's account it is in.
    "sign_in_id": lambda outsider: signed_in_elsewhere(outsider.user).pk,
    # An app the outsider connected to their own account.
    "connection_id": lambda outsider: _connection(outsider, "their-app").pk,
}


def test_every_page_with_a_parameter_is_covered():
    params = {name for _, pattern in _web_patterns() for name in pattern.pattern.converters}
    assert params, "the web app has pages that take ids or names"
    assert params <= set(OTHER_ACCOUNTS), (
        f"say how to make another account's object for {params - set(OTHER_ACCOUNTS)}")


@pytest.mark.parametrize("route", [route for route, _ in _web_patterns()])
def test_another_accounts_object_is_not_found(client, alice, charlie, route):
    pattern = dict(_web_patterns())[route]
    path = "/" + re.sub(r"<(?:\w+:)?(\w+)>",
                        lambda param: str(OTHER_ACCOUNTS[param[1]](charlie)), route)
    client.force_login(alice.user)
    # A page that only takes POST answers GET with 405 before it looks anything up.
    assert client.get(path).status_code in (404, 405), path
    assert client.post(path).status_code == 404, path
    assert pattern.pattern.converters  # the route really takes a parameter
