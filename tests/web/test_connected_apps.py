"""The Connected apps page: alice owns the account and sees every person's apps, bob is a
member who sees (and revokes) only his own, charlie is an outsider whose connections are a
404 here. Revoking ends the app's tokens: its next call at /mcp is a 401."""

from __future__ import annotations

import html
import json
import re

import pytest
from django.db import connection as db
from django.test import Client
from django.test.utils import CaptureQueriesContext
from oauth2_provider.models import get_application_model

from accounts.connections import connect
from accounts.models import Connection
from memories.graph.services import memory_create
from memories.models import Memory
from tests.mcp.conftest import Mcp, fake_clock  # noqa: F401
from tests.mcp.test_tools import episode
from tests.oauth.conftest import Flow

CALLBACK = "http://127.0.0.1:33418/callback"


def app(name: str, client_id: str):
    return get_application_model().objects.create(
        name=name, client_id=client_id, client_type="public", redirect_uris=CALLBACK,
        authorization_grant_type="authorization-code")


def connected(actor, application, **choices) -> Connection:
    ids = choices.get("memory_ids")
    memories = list(Memory.objects.filter(pk__in=ids)) if ids is not None else None
    default_id = choices.get("default_memory_id") or (ids[0] if ids else None)
    return connect(user=actor.user, account_id=actor.account.pk, application=application,
                   read_only=choices.get("read_only", False), memories=memories,
                   default_memory=Memory.objects.filter(pk=default_id).first())


def page(client, user) -> str:
    client.force_login(user)
    reply = client.get("/apps/")
    assert reply.status_code == 200
    return html.unescape(reply.content.decode())


@pytest.fixture
def apps(alice, bob, charlie):
    notes = memory_create(account_id=alice.account.pk, name="team-notes")
    default = Memory.objects.get(account=alice.account, name="default")
    return {
        "alice": connected(alice, app("Claude", "dyn-claude-1")),
        "bob": connected(bob, app("ChatGPT", "https://chatgpt.example.com/client.json"),
                         read_only=True, memory_ids=[notes.pk, default.pk],
                         default_memory_id=notes.pk),
        "charlie": connected(charlie, app("Cursor", "dyn-cursor-1")),
    }


def test_a_member_sees_only_their_own_apps_with_memories_by_name(client, bob, apps):
    text = page(client, bob.user)
    rows = text.split("<tbody>")[1]
    assert "ChatGPT" in rows and "Claude" not in rows
    assert f'href="/apps/{apps["bob"].pk}/revoke/"' in text
    assert f'href="/apps/{apps["alice"].pk}/revoke/"' not in text
    assert "metadata document on <code>chatgpt.example.com</code>" in text
    assert "<code>default</code>, <code>team-notes</code>" in text  # names, not a count
    assert "read only" in text and "Person</th>" not in text


def test_an_owner_sees_the_whole_team_with_each_person(client, alice, bob, apps):
    text = page(client, alice.user)
    for own in ("alice", "bob"):
        assert f'href="/apps/{apps[own].pk}/revoke/"' in text
    assert f'href="/apps/{apps["charlie"].pk}/revoke/"' not in text
    assert "Person</th>" in text and "bob" in text
    assert "registered itself; client ID <code>dyn-claude-1</code>" in text
    assert "every memory" in text and "read and write" in text


def test_the_list_takes_the_same_queries_for_one_app_or_many(client, alice, bob, apps):
    client.force_login(alice.user)
    client.get("/apps/")
    with CaptureQueriesContext(db) as few:
        client.get("/apps/")
    for n in range(5):
        connected(bob if n % 2 else alice, app(f"App {n}", f"dyn-more-{n}"),
                  memory_ids=[Memory.objects.get(account=alice.account, name="default").pk])
    with CaptureQueriesContext(db) as many:
        client.get("/apps/")
    assert len(many) == len(few)


def test_no_app_yet_says_how_to_connect_one(client, bob):
    text = page(client, bob.user)
    assert "No app is connected for you yet" in text
    assert "claude mcp add --transport http echo-memory http://localhost:8000/mcp" in text
    assert 'href="/docs/connect/"' in text


def test_the_navigation_links_connected_apps(client, bob):
    client.force_login(bob.user)
    text = client.get("/dashboard/").content.decode()
    assert 'href="/apps/">Connected apps</a>' in text


def test_an_owner_revokes_a_members_app(client, alice, apps):
    client.force_login(alice.user)
    confirm = client.get(f"/apps/{apps['bob'].pk}/revoke/")
    assert confirm.status_code == 200 and b"bob" in confirm.content
    done = client.post(f"/apps/{apps['bob'].pk}/revoke/", follow=True)
    assert "ChatGPT is disconnected" in done.content.decode()
    assert Connection.objects.get(pk=apps["bob"].pk).revoked_at is not None


@pytest.mark.parametrize("whose", ["alice", "charlie"])
def test_a_member_cannot_revoke_another_persons_or_another_accounts_app(client, bob, apps,
                                                                        whose):
    client.force_login(bob.user)
    assert client.get(f"/apps/{apps[whose].pk}/revoke/").status_code == 404
    assert client.post(f"/apps/{apps[whose].pk}/revoke/").status_code == 404
    assert Connection.objects.get(pk=apps[whose].pk).revoked_at is None


def test_an_owner_cannot_revoke_another_accounts_app(client, alice, apps):
    client.force_login(alice.user)
    assert client.post(f"/apps/{apps['charlie'].pk}/revoke/").status_code == 404
    assert client.get("/apps/999999/revoke/").status_code == 404


def test_revoking_ends_the_apps_token_at_mcp(client, alice):
    client.force_login(alice.user)
    registered = Flow(client, client_id="").register(client_name="Claude")
    flow = Flow(client, client_id=registered.json()["client_id"])
    token = flow.tokens()["access_token"]
    mcp = Mcp(Client(), token)
    mcp.initialize()
    [made] = Connection.objects.filter(user=alice.user, revoked_at__isnull=True)
    client.post(f"/apps/{made.pk}/revoke/")
    refused = Client().post("/mcp", data="{}", content_type="application/json",
                            HTTP_AUTHORIZATION=f"Bearer {token}")
    assert refused.status_code == 401
    assert 'error="invalid_token"' in refused["WWW-Authenticate"]


RATE = re.compile(r"<span class=\"fw-semibold\">(\d+) of (\d+)</span><div class=\"[^\"]*\">"
                  r"([^<]*)</div>")


def test_the_list_shows_each_apps_current_rate_without_counting_a_request(
        client, alice, settings, fake_clock):  # noqa: F811
    settings.RATE_LIMIT_PER_MINUTE = 5
    client.force_login(alice.user)
    registered = Flow(client, client_id="").register(client_name="Claude")
    flow = Flow(client, client_id=registered.json()["client_id"])
    mcp = Mcp(Client(), flow.tokens()["access_token"])
    mcp.initialize()  # initialize and its notification: two requests of the app's window

    def rate() -> tuple[str, str, str]:
        [row] = client.get("/apps/").content.decode().split("<tbody>")[1].split("</tr>")[:-1]
        return RATE.search(row).groups()

    assert rate() == rate() == ("2", "5", "in the last 60 s")  # reading counted nothing
    fake_clock.advance(10)
    for _ in range(3):
        mcp.call("list_memories", {})
    assert rate() == ("5", "5", "at the limit: refused for 50 s")
    fake_clock.advance(50)  # the first two left the window
    assert rate() == ("3", "5", "in the last 60 s")


def test_the_audit_log_names_the_app_and_the_person_it_acted_for(client, alice):
    client.force_login(alice.user)
    registered = Flow(client, client_id="").register(client_name="Claude")
    flow = Flow(client, client_id=registered.json()["client_id"])
    mcp = Mcp(Client(), flow.tokens()["access_token"])
    mcp.initialize()
    stored = mcp.call("write_episode", episode())
    assert not stored["result"].get("isError"), stored
    log = html.unescape(client.get("/audit/", {"action": "fact.created"}).content.decode())
    assert "Claude (connected app) for alice" in log
    assert f"oauth:{flow.client_id}" in log  # the tool label stays beside it
    dashboard = html.unescape(client.get("/dashboard/").content.decode())
    assert "by Claude (connected app) for alice" in dashboard
    exported = client.get("/audit/export.jsonl", {"action": "fact.created"})
    first = json.loads(b"".join(exported.streaming_content).decode().splitlines()[0])
    assert (first["holder"], first["app"], first["key"]) == ("alice", "Claude", "")
