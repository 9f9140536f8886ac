"""A scoped key's limits on every tool of the contract, over /mcp and over the REST API.

Table-driven over tools.registry.TOOLS, so a new tool is held to the limits the day it is
listed: a read-only key is refused exactly the tools whose annotations say they write,
erase or record; a key limited to some memories is refused any other memory by name, works
in its own, and lands in its default when the call names none.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from accounts.services import api_key_create
from memories.graph.services import memory_create
from tests.billing.usage_rows import charge
from tests.tool_arguments import base_arguments, renamed
from tools.calling import run_validated
from tools.registry import TOOLS

# What the annotations say today; pinned, so a tool that changes sides is a visible change.
WRITING = {"write_episode", "record_recall_save", "memory_save", "forget"}
TAKES_MEMORY = sorted(name for name, tool in TOOLS.items() if "memory" in tool.args.model_fields)


def _seed(principal, memory: str | None, suffix: str) -> dict:
    """An episode, a fact and a note in `memory`, and arguments for every tool naming them."""
    placeholder = {"episode_id": "", "fact_id": "", "note_id": ""}
    where = {"memory": memory} if memory else {}
    written = run_validated(principal, TOOLS["write_episode"], {
        **renamed(base_arguments(placeholder)["write_episode"], suffix), **where})
    note = run_validated(principal, TOOLS["memory_save"], {
        **base_arguments(placeholder)["memory_save"], "title": f"Vault {suffix}", **where})
    return base_arguments({"episode_id": str(written["episode_id"]),
                           "fact_id": str(written["edges_created"][0]["fact_id"]),
                           "note_id": str(note["id"])})


def _rest(client, plaintext: str, name: str, body: dict):
    return client.post(f"/api/v1/tools/{name}", data=body, content_type="application/json",
                       headers={"Authorization": f"Bearer {plaintext}"})


def _mcp(mcp_for, plaintext: str, name: str, body: dict) -> dict:
    return mcp_for(SimpleNamespace(plaintext=plaintext)).call(name, body)["result"]


def test_the_writing_tools_are_those_the_annotations_say_and_each_memoryless_tool_reads():
    assert {name for name, tool in TOOLS.items() if tool.writes} == WRITING
    # A tool that takes no memory escapes the memory limit: only account-level reads may.
    for name, tool in TOOLS.items():
        if "memory" not in tool.args.model_fields:
            assert not tool.writes and not tool.meters, name


@pytest.mark.parametrize("name", sorted(TOOLS))
def test_a_read_only_key_is_refused_exactly_the_tools_that_write(name, alice, client, mcp_for):
    arguments = _seed(alice.principal, None, "ro")[name]
    _, plaintext = api_key_create(account=alice.account, holder=alice.user, name="ci",
                                  tool="ci", read_only=True)
    over_mcp = _mcp(mcp_for, plaintext, name, arguments)
    over_rest = _rest(client, plaintext, name, arguments)
    if name in WRITING:
        assert over_mcp["isError"] is True
        assert over_mcp["error"]["code"] == "forbidden"
        assert over_mcp["error"]["message"].startswith("this key is read-only")
        assert over_rest.status_code == 403
        error = over_rest.json()["error"]
        assert error["field"] == "key" and "read-only" in error["message"] and error["fix"]
    else:
        assert over_mcp["isError"] is False, over_mcp
        assert over_rest.status_code == 200, over_rest.content


@pytest.mark.parametrize("name", TAKES_MEMORY)
def test_a_key_limited_to_memories_uses_only_those_and_its_default(name, alice, client,
                                                                    mcp_for):
    notes = memory_create(account_id=alice.account.pk, name="notes")
    memory_create(account_id=alice.account.pk, name="zeta")
    here, again = _seed(alice.principal, "notes", "one"), _seed(alice.principal, "notes", "two")
    _, plaintext = api_key_create(account=alice.account, holder=alice.user, name="bot",
                                  tool="bot", default_memory=notes, memories=[notes])

    elsewhere = {**here[name], "memory": "default"}
    refused_mcp = _mcp(mcp_for, plaintext, name, elsewhere)
    assert refused_mcp["isError"] is True
    assert refused_mcp["error"]["message"] == "this key may use only the memories notes"
    refused_rest = _rest(client, plaintext, name, elsewhere)
    assert refused_rest.status_code == 403
    assert refused_rest.json()["error"]["field"] == "memory"
    assert refused_rest.json()["error"]["message"] == "this key may use only the memories notes"

    named = _mcp(mcp_for, plaintext, name, {**here[name], "memory": "notes"})
    assert named["isError"] is False, named
    # Naming none: the key's default, where the seeded rows are (found, so not elsewhere).
    unnamed = _rest(client, plaintext, name, {k: v for k, v in again[name].items()
                                              if k != "memory"})
    assert unnamed.status_code == 200, unnamed.content
    if "memory" in unnamed.json():
        assert unnamed.json()["memory"] == "notes"


def test_the_memories_endpoint_lists_only_the_memories_a_key_may_use(alice, client):
    notes = memory_create(account_id=alice.account.pk, name="notes")
    memory_create(account_id=alice.account.pk, name="zeta")
    _, plaintext = api_key_create(account=alice.account, holder=alice.user, name="bot",
                                  tool="bot", default_memory=notes, memories=[notes])
    listed = client.get("/api/v1/memories", headers={"Authorization": f"Bearer {plaintext}"})
    assert listed.status_code == 200
    assert listed.json()["memories"] == [
        {**listed.json()["memories"][0], "name": "notes", "default": True}]
    unknown = _rest(client, plaintext, "query_memory",
                    {"scope": "shared", "query": "x", "memory": "nowhere"}).json()["error"]
    assert unknown["code"] == "not_found" and "zeta" not in unknown["message"]


def test_a_read_only_key_still_reads_usage_and_memories(alice, client):
    _, plaintext = api_key_create(account=alice.account, holder=alice.user, name="ci",
                                  tool="ci", read_only=True)
    headers = {"Authorization": f"Bearer {plaintext}"}
    assert client.get("/api/v1/memories", headers=headers).status_code == 200
    assert client.get("/api/v1/usage", headers=headers).status_code == 200


def test_the_usage_endpoint_shows_a_limited_key_only_its_memories(alice, client):
    notes = memory_create(account_id=alice.account.pk, name="notes")
    charge(alice, 30)
    charge(alice, 12, memory="notes")
    _, plaintext = api_key_create(account=alice.account, holder=alice.user, name="bot",
                                  tool="bot", default_memory=notes, memories=[notes])
    body = client.get("/api/v1/usage", headers={"Authorization": f"Bearer {plaintext}"}).json()
    assert [share["name"] for share in body["by_memory"]] == ["notes"]
    everything = client.get("/api/v1/usage", **alice.auth_header).json()
    assert [share["name"] for share in everything["by_memory"]] == ["default", "notes"]
