"""Forgetting notes with the forget tool (what `memory delete` calls), over MCP and REST: the
note and its versions go, their text leaves every table, the chain verifies."""

from __future__ import annotations

from audit.models import AuditEvent
from audit.verify import audit_verify
from memories.models import Note, NoteVersion, NoteWord
from memories.search import indexing
from tests.engine.conftest import database_text
from tests.factories import note
from tests.notes.conftest import rest

SECRET_WORDS = ("Frobnicator", "quasselbrook", "Plinthwave")


def result(reply: dict) -> dict:
    assert reply["result"]["isError"] is False, reply
    return reply["result"]


def refused(reply: dict) -> dict:
    assert reply["result"]["isError"] is True, reply
    return reply["result"]["error"]


def left_over() -> list[str]:
    text = database_text().lower()
    return [word for word in SECRET_WORDS if word.lower()[:8] in text]


def test_a_forgotten_note_takes_its_indexed_words_along_and_leaves_the_others(agent):
    saved = result(agent.call("memory_save", note(title="Frobnicator cache keys",
                                                  what="Keys carry the quasselbrook suffix")))
    result(agent.call("memory_save", note(title="Deploys go out on Tuesdays",
                                          what="Tuesday deploys only, keys rotated")))
    assert indexing.index_pending() == 2
    words = set(NoteWord.objects.values_list("word", flat=True))
    assert {"frobnicator", "quasselbrook", "keys", "tuesdays"} <= words
    assert "the" not in words  # stop words carry no meaning to match

    result(agent.call("forget", {"scope": "shared", "notes": [saved["id"]]}))

    words = set(NoteWord.objects.values_list("word", flat=True))
    assert "keys" in words and "tuesdays" in words  # the other note still holds them
    assert not {"frobnicator", "quasselbrook", "cache", "suffix"} & words
    assert left_over() == []


def test_a_forgotten_note_and_its_versions_leave_no_text_anywhere(agent, alice):
    saved = result(agent.call("memory_save", note(title="Frobnicator cache keys",
                                                  what="Keys carry the quasselbrook suffix")))
    result(agent.call("memory_save", note(title="Frobnicator cache keys",
                                          what="Keys carry the Plinthwave suffix now")))
    kept = result(agent.call("memory_save", note(title="Deploys go out on Tuesdays",
                                                 what="Tuesday deploys only")))
    assert left_over() == list(SECRET_WORDS)

    done = result(agent.call("forget", {"scope": "shared", "notes": [saved["id"][:8]]}))

    assert (done["notes"], done["note_versions"], done["facts"], done["units"]) == (1, 1, 0, 0)
    assert done["audit_events_erased"] == 2  # note.created and note.updated
    assert left_over() == []
    assert not Note.objects.filter(pk=saved["id"]).exists()
    assert not NoteVersion.objects.filter(note_id=saved["id"]).exists()
    gone = refused(agent.call("memory_details", {"id": saved["id"]}))
    assert gone["code"] == "not_found"
    assert result(agent.call("memory_details", {"id": kept["id"]}))["title"] == \
        "Deploys go out on Tuesdays"
    forgotten = AuditEvent.objects.get(action="memory.forgotten")
    assert forgotten.after["notes"] == [saved["id"]]
    assert audit_verify(alice.account.pk) == (True, None)
    # A second forget of the same note finds nothing, and says which id.
    again = refused(agent.call("forget", {"scope": "shared", "notes": [saved["id"]]}))
    assert again["field"] == "notes" and saved["id"] in again["message"]


def test_another_accounts_or_scopes_note_is_not_found_and_stays(agent, mcp_for, alice,
                                                                charlie):
    saved = result(agent.call("memory_save", note()))
    outsider = refused(mcp_for(charlie).call("forget", {"scope": "shared",
                                                        "notes": [saved["id"]]}))
    solo = refused(agent.call("forget", {"scope": "solo", "notes": [saved["id"]]}))
    assert outsider["code"] == solo["code"] == "not_found"
    assert outsider["field"] == solo["field"] == "notes"
    assert Note.objects.filter(pk=saved["id"]).exists()


def test_an_ambiguous_prefix_is_refused_and_nothing_is_forgotten(agent):
    saved = result(agent.call("memory_save", note()))
    twin = Note.objects.get(pk=saved["id"])
    twin.pk = saved["id"][:9] + ("0" if saved["id"][9] != "0" else "1") + saved["id"][10:]
    twin.title = "A different note"
    twin.save(force_insert=True)
    error = refused(agent.call("forget", {"scope": "shared", "notes": [saved["id"][:8]]}))
    assert error["field"] == "notes[0]" and "more than one note" in error["message"]
    assert Note.objects.count() == 2


def test_forget_answers_over_rest_and_the_schema_lists_it(client, alice):
    saved = rest(client, alice, "memory_save", note()).json()
    done = rest(client, alice, "forget", {"scope": "shared", "notes": [saved["id"]]})
    assert done.status_code == 200, done.content
    assert done.json()["notes"] == 1
    missing = rest(client, alice, "forget", {"scope": "shared", "notes": [saved["id"]]})
    assert missing.status_code == 404 and missing.json()["error"]["field"] == "notes"
    empty = rest(client, alice, "forget", {"scope": "shared"})
    assert empty.status_code == 400 and empty.json()["error"]["field"] == "facts"
    schema = client.get("/api/v1/schema", headers={"Accept": "application/json"}).json()
    operation = schema["paths"]["/api/v1/tools/forget"]["post"]
    assert operation["operationId"] == "forget" and "requestBody" in operation
