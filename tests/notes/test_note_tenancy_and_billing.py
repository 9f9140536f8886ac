"""Notes are paid for like facts, audited, and never seen across partitions or accounts."""

from __future__ import annotations

import pytest

from audit.models import AuditEvent
from billing.models import Plan, UsagePeriod
from memories.models import Note
from memories.search import indexing
from tests.factories import note
from tests.notes.conftest import rest


def free_units(units: int) -> None:
    Plan.objects.filter(is_default=True).update(monthly_units=units)


def ok(reply: dict) -> dict:
    assert reply["result"]["isError"] is False, reply
    return reply["result"]


def used(actor) -> int:
    period = UsagePeriod.objects.filter(account_id=actor.account.pk).first()
    return period.units if period else 0


def test_one_unit_per_note_saved_and_per_note_returned(agent, alice):
    for n in range(3):
        ok(agent.call("memory_save", note(title=f"Decision {n}")))
    assert used(alice) == 3
    indexing.index_pending()
    found = ok(agent.call("memory_search", {"query": "JWT auth", "limit": 2}))
    assert found["units"] == 2 and used(alice) == 5
    context = ok(agent.call("memory_context", {"limit": 10}))
    assert context["units"] == 3 and used(alice) == 8
    details = ok(agent.call("memory_details", {"id": context["memories"][0]["id"]}))
    assert details["units"] == 1 and used(alice) == 9


def test_a_save_past_the_allowance_is_refused_and_stores_nothing(agent, alice):
    free_units(1)
    ok(agent.call("memory_save", note(title="First")))
    events = AuditEvent.objects.count()
    refused = agent.call("memory_save", note(title="Second"))["result"]
    assert refused["isError"] is True and refused["error"]["code"] == "allowance_exhausted"
    assert list(Note.objects.values_list("title", flat=True)) == ["First"]
    assert AuditEvent.objects.count() == events and used(alice) == 1


def test_reads_are_cut_to_the_units_left_then_refused(agent, alice):
    free_units(5)
    for n in range(3):
        ok(agent.call("memory_save", note(title=f"Note {n}")))
    context = ok(agent.call("memory_context", {}))
    assert context["showing"] == 2 and context["total"] == 3
    assert context["cut_by_allowance"] is True and "2 of 3 notes" in context["message"]
    assert "MUST call memory_save" in context["message"]
    refused = agent.call("memory_search", {"query": "JWT"})["result"]
    assert refused["isError"] is True and refused["error"]["code"] == "allowance_exhausted"
    assert used(alice) == 5


def test_saves_are_audited_as_created_then_updated_with_before_and_after(agent, alice):
    saved = ok(agent.call("memory_save", note()))
    ok(agent.call("memory_save", note(what="Now PASETO instead of JWT")))
    events = list(AuditEvent.objects.filter(account=alice.account, object_id=saved["id"])
                  .order_by("seq"))
    assert [e.action for e in events] == ["note.created", "note.updated"]
    assert events[0].before is None and events[0].after["title"] == "Switched to JWT auth"
    assert events[1].before["what"].startswith("Replaced session cookies")
    assert events[1].after["what"] == "Now PASETO instead of JWT"
    assert (events[1].before["version"], events[1].after["version"]) == (1, 2)
    assert events[1].tool == "claude-code"


def test_solo_notes_are_invisible_to_another_holder_and_to_the_shared_scope(
        mcp_for, alice, bob):
    mine = ok(mcp_for(alice).call("memory_save", note(scope="solo", title="Private")))
    indexing.index_pending()
    theirs = mcp_for(bob)
    assert ok(theirs.call("memory_context", {"scope": "solo"}))["total"] == 0
    assert ok(theirs.call("memory_context", {}))["total"] == 0
    assert ok(theirs.call("memory_search", {"query": "JWT", "scope": "solo"}))["count"] == 0
    hidden = theirs.call("memory_details", {"id": mine["id"], "scope": "solo"})["result"]
    assert hidden["isError"] is True and hidden["error"]["code"] == "not_found"
    own = mcp_for(alice)
    assert ok(own.call("memory_details", {"id": mine["id"], "scope": "solo"}))["title"] == \
        "Private"
    assert own.call("memory_details", {"id": mine["id"]})["result"]["isError"] is True


@pytest.mark.parametrize("tool", ["memory_details", "memory_search", "memory_context"])
def test_another_accounts_notes_are_never_visible(client, alice, charlie, tool):
    saved = rest(client, alice, "memory_save", note()).json()
    indexing.index_pending()
    body = {"memory_details": {"id": saved["id"]}, "memory_search": {"query": "JWT auth"},
            "memory_context": {}}[tool]
    response = rest(client, charlie, tool, body)
    if tool == "memory_details":
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "not_found"
    else:
        reply = response.json()
        assert reply.get("results", reply.get("memories")) == []
    named = rest(client, charlie, tool, body | {"memory": "default"})
    assert "JWT" not in named.content.decode().replace(body.get("query", ""), "")


def test_note_events_in_the_agents_audit_log_are_charged_like_the_notes(agent, alice):
    saved = ok(agent.call("memory_save", note()))
    ok(agent.call("memory_save", note(what="Now PASETO")))
    before = used(alice)
    log = ok(agent.call("get_audit_log", {"scope": "shared"}))
    events = [e for e in log["events"] if e["object_id"] == saved["id"]]
    assert [(e["action"], e["units"]) for e in events] == [("note.created", 1),
                                                           ("note.updated", 1)]
    assert log["units"] == 2 and used(alice) == before + 2


def test_deleting_a_memory_erases_its_notes_their_history_and_their_audit_text(agent, alice):
    from memories.erasure.services import memory_delete
    from memories.graph.services import memory_create
    from memories.models import NoteVersion

    memory_create(account_id=alice.account.pk, name="doomed", actor_id=alice.user.pk)
    ok(agent.call("memory_save", note(memory="doomed", what="Distinctive words xyzzy")))
    ok(agent.call("memory_save", note(memory="doomed", what="Distinctive words plugh")))
    assert NoteVersion.objects.count() == 1
    memory_delete(alice.principal, "doomed", confirm="doomed")
    assert not Note.objects.exists() and not NoteVersion.objects.exists()
    texts = [str(e.before) + str(e.after) for e in AuditEvent.objects.filter(
        account=alice.account, action__startswith="note.")]
    assert texts and not any("xyzzy" in t or "plugh" in t for t in texts)
