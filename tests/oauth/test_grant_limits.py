"""What a connection may reach: the memories ticked on the consent page, its own account,
its own tool label (never a key's solo facts), and nothing once its person left."""

from __future__ import annotations

from django.test import Client

from accounts.models import Connection, Membership
from memories.graph.services import memory_create
from memories.models import Fact
from tests.factories import Engine, fact, person
from tests.mcp.test_tools import episode
from tests.oauth.conftest import register, written
from tests.oauth.test_refused_tokens import refused_at_mcp


def _facts(result: dict) -> list[str]:
    assert not result["result"].get("isError"), result
    return [found["fact"] for found in result["result"]["structuredContent"]["facts"]]


def test_a_grant_limited_to_one_memory_is_refused_another_and_writes_to_its_default(
        flow, alice):
    notes = memory_create(account_id=alice.account.pk, name="notes")
    tokens = flow.tokens(choices={"memories": [str(notes.pk)], "default_memory": str(notes.pk)})
    mcp = flow.mcp(tokens["access_token"])
    before = written()
    refused = mcp.call("write_episode", episode(memory="default"))
    assert refused["result"]["isError"], refused
    text = refused["result"]["content"][0]["text"]
    assert "this connection may use only the memories notes" in text, text
    assert written() == before
    stored = mcp.call("write_episode", episode())  # no memory named: the grant's default
    assert not stored["result"].get("isError"), stored
    assert set(Fact.objects.values_list("memory__name", flat=True)) == {"notes"}
    assert mcp.call("query_memory", {"query": "x", "scope": "shared",
                                     "memory": "default"})["result"]["isError"]


def test_a_default_memory_outside_the_ticked_ones_is_refused_on_the_page(flow, alice):
    notes = memory_create(account_id=alice.account.pk, name="notes")
    default = alice.account.memories.get(name="default")
    before = written()
    page = flow.consent("x" * 43, choices={"memories": [str(notes.pk)],
                                           "default_memory": str(default.pk)})
    assert page.status_code == 200
    # Next to the field, in the words a key's page uses (one rule: accounts.limits).
    assert ("the app&#x27;s default memory must be one of the memories it may use: pick the "
            "default among the ticked memories") in page.content.decode()
    assert written() == before


def test_a_grant_never_sees_another_accounts_facts(flow, alice, charlie):
    Engine(charlie.principal).write(
        assume_new=True, entities=[person("Ada"), person("Grace")],
        facts=[fact("Ada", "Grace", "mentors", "Ada mentors Grace in charlie's shop")])
    mcp = flow.mcp(flow.tokens()["access_token"])
    found = _facts(mcp.call("query_memory", {"query": "who mentors Grace", "scope": "shared"}))
    assert not any("charlie" in text for text in found), found
    mcp.call("write_episode", episode())
    assert Fact.objects.filter(memory__account=charlie.account).count() == 1


def test_a_connection_whose_person_left_the_account_is_refused(alice, bob):
    browser = Client()
    browser.force_login(bob.user)
    bobs = register(browser)
    tokens = bobs.tokens()
    assert bobs.mcp(tokens["access_token"]).request("ping").status_code == 200
    Membership.objects.filter(user=bob.user, account=alice.account).delete()
    refused_at_mcp(tokens["access_token"], says="no longer a member")


def test_an_app_named_claude_code_writes_under_its_client_id_and_reads_no_keys_solo_facts(
        signed_in, alice):
    """alice's key is tool "claude-code"; an app may call itself that, but its label is
    oauth:<client_id>, so the key's solo partition stays the key's."""
    Engine(alice.principal).write(
        assume_new=True, scope="solo", entities=[person("Ada"), person("Grace")],
        facts=[fact("Ada", "Grace", "mentors", "Ada mentors Grace, a solo note of the key")])
    impostor = register(signed_in, client_name="claude-code")
    mcp = impostor.mcp(impostor.tokens()["access_token"])
    connection = Connection.objects.get(application__client_id=impostor.client_id)
    assert connection.tool == f"oauth:{impostor.client_id}"
    found = _facts(mcp.call("query_memory", {"query": "who mentors Grace", "scope": "solo"}))
    assert not any("solo note of the key" in text for text in found), found
    mcp.call("write_episode", episode(scope="solo"))
    labels = set(Fact.objects.values_list("written_by_tool", flat=True))
    assert labels == {"claude-code", f"oauth:{impostor.client_id}"}
