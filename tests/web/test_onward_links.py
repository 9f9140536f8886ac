"""No dead ends: after a new memory the page offers to connect a client to it (a new key
with it as the default), after a new key the page shows the connect panel and leads on,
after an erasure or a revocation the confirmation links to its entry in the audit log.
Each onward link is followed and must show what it promises."""

from __future__ import annotations

import re

import pytest

from memories.graph.services import memory_create
from tests.web.test_security_headers import _connection

LINK = re.compile(r'<a href="([^"]+)">([^<]+)</a>')


def _followed(client, response):
    assert response.status_code == 302
    return client.get(response["Location"])


def _link(html: str, text: str) -> str:
    found = [href.replace("&amp;", "&") for href, label in LINK.findall(html) if label == text]
    assert found, f"no link {text!r}"
    return found[0]


def _selected(html: str, field: str) -> list[str]:
    select = re.search(rf'<select[^>]* name="{field}".*?</select>', html, re.S)[0]
    return re.findall(r'<option value="[^"]*" selected>([^<]+)</option>', select)


def test_a_new_memory_leads_to_a_key_for_it_and_the_key_to_connecting_and_exploring(
        client, alice):
    client.force_login(alice.user)
    landed = _followed(client, client.post("/memories/new/", {"name": "ops"})).content.decode()
    assert "Memory ops is ready for your agents." in landed
    onward = _link(landed, "Connect a client to it")
    assert onward == "/keys/new/?memory=ops"
    form = client.get(onward)
    assert form.status_code == 200 and _selected(form.content.decode(), "default_memory") == [
        "ops"]

    created = _followed(client, client.post(onward, {
        "name": "ops laptop", "tool": "cursor", "default_memory": form.context["form"]
        .initial["default_memory"]})).content.decode()
    assert 'id="connect-heading"' in created and 'id="connect-cursor-tab"' in created
    explorer = client.get(re.search(r'href="(/memories/ops/)"', created)[1])
    assert explorer.status_code == 200 and "No facts yet in this scope." in \
        explorer.content.decode()
    assert client.get(re.search(r'href="(/dashboard/)">Done', created)[1]).status_code == 200


@pytest.mark.parametrize("name", ["\x00", "o" * 10_000, "charlies", "default/../x", ""])
def test_a_memory_not_of_this_account_picks_no_default(client, alice, charlie, name):
    memory_create(account_id=charlie.account.pk, name="charlies")
    client.force_login(alice.user)
    form = client.get("/keys/new/", {"memory": name})
    assert form.status_code == 200
    assert _selected(form.content.decode(), "default_memory") == []


def _audit_entry(client, landed: str, action: str) -> None:
    entry = client.get(_link(landed, "See its audit entry"))
    assert entry.status_code == 200
    assert entry.context["page"].rows[0].event.action == action


def test_a_deleted_memory_links_to_its_audit_entry(client, alice):
    memory_create(account_id=alice.account.pk, name="ops")
    client.force_login(alice.user)
    landed = _followed(client, client.post("/memories/ops/delete/", {"confirm": "ops"}))
    assert "Memory ops is deleted" in landed.content.decode()
    _audit_entry(client, landed.content.decode(), "memory.deleted")


def test_a_revoked_key_links_to_its_audit_entry(client, alice):
    client.force_login(alice.user)
    landed = _followed(client, client.post(f"/keys/{alice.key.pk}/revoke/"))
    assert "is revoked" in landed.content.decode()
    _audit_entry(client, landed.content.decode(), "key.revoked")


def test_a_disconnected_app_links_to_its_audit_entry(client, alice):
    connection = _connection(alice)
    client.force_login(alice.user)
    landed = _followed(client, client.post(f"/apps/{connection.pk}/revoke/"))
    assert "is disconnected" in landed.content.decode()
    _audit_entry(client, landed.content.decode(), "connection.revoked")
