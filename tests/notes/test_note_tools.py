"""memory_save, memory_search, memory_context and memory_details over MCP and REST."""

from __future__ import annotations

import json

from memories.models import Note, NoteVersion
from memories.search import indexing
from tests.factories import note
from tests.notes.conftest import rest


def result(reply: dict) -> dict:
    assert reply["result"]["isError"] is False, reply
    return reply["result"]


def test_save_then_search_context_and_details_round_trip_over_mcp(agent):
    saved = result(agent.call("memory_save", note()))
    assert saved["created"] is True and saved["version"] == 1 and saved["units"] == 1
    assert saved["warnings"] == [] and saved["redacted"] == 0
    assert indexing.index_pending() == 1  # after commit in production; tests never commit
    found = result(agent.call("memory_search", {"query": "how do we authenticate mobile "
                                                         "clients", "project": "api-server"}))
    top = found["results"][0]
    assert top["id"] == saved["id"] and top["has_details"] is True
    assert top["score"] is not None and top["rank"] == 1
    assert found["units"] == found["count"] == len(found["results"])
    context = result(agent.call("memory_context", {"project": "api-server"}))
    assert (context["total"], context["showing"]) == (1, 1)
    assert context["memories"][0]["title"] == "Switched to JWT auth"
    assert "MUST call memory_save" in context["message"]
    details = result(agent.call("memory_details", {"id": saved["id"]}))
    assert details["details"] == "Options considered: cookies, JWT. Chose JWT."
    assert details["related_files"] == ["src/auth.py"] and details["history"] == []


def test_search_text_block_is_the_spec_list_while_structured_content_is_an_object(agent):
    result(agent.call("memory_save", note()))
    found = result(agent.call("memory_search", {"query": "JWT"}))
    assert isinstance(found["structuredContent"], dict)
    assert found["structuredContent"]["results"] == found["results"]
    listed = json.loads(found["content"][0]["text"])
    assert isinstance(listed, list) and listed == found["results"]
    context = result(agent.call("memory_context", {}))
    assert json.loads(context["content"][0]["text"]) == context["structuredContent"]
    assert set(json.loads(context["content"][0]["text"])) >= {"total", "showing", "memories",
                                                               "message"}


def test_every_note_tool_answers_over_rest_with_the_mcp_shapes(client, alice):
    saved = rest(client, alice, "memory_save", note())
    assert saved.status_code == 200, saved.content
    note_id = saved.json()["id"]
    found = rest(client, alice, "memory_search", {"query": "stateless auth"}).json()
    assert found["results"][0]["id"] == note_id
    context = rest(client, alice, "memory_context", {"limit": 5}).json()
    assert context["memories"][0]["id"] == note_id
    details = rest(client, alice, "memory_details", {"id": note_id[:8]})
    assert details.status_code == 200 and details.json()["id"] == note_id


def test_details_takes_a_unique_prefix_and_refuses_an_ambiguous_or_short_one(agent, alice):
    saved = result(agent.call("memory_save", note()))
    prefix = saved["id"][:8]
    assert result(agent.call("memory_details", {"id": prefix.upper()}))["id"] == saved["id"]
    # A second note whose id shares the first 9 characters (ids are random, so made here).
    twin = Note.objects.get(pk=saved["id"])
    twin.pk = saved["id"][:9] + ("0" if saved["id"][9] != "0" else "1") + saved["id"][10:]
    twin.title = "A different note"
    twin.save(force_insert=True)
    ambiguous = agent.call("memory_details", {"id": prefix})["result"]
    assert ambiguous["isError"] is True
    assert ambiguous["error"]["field"] == "id" and "more than one note" in \
        ambiguous["error"]["message"]
    assert result(agent.call("memory_details", {"id": saved["id"]}))["id"] == saved["id"]
    short = agent.call("memory_details", {"id": prefix[:6]})["result"]
    assert short["isError"] is True and short["error"]["field"] == "id"
    missing = agent.call("memory_details", {"id": "ffffffff"})["result"]
    assert missing["isError"] is True and missing["error"]["code"] == "not_found"


def test_saving_the_same_title_updates_the_note_and_keeps_its_history(agent):
    first = result(agent.call("memory_save", note()))
    again = result(agent.call("memory_save", note()))
    assert again["id"] == first["id"] and again["updated"] is False and again["units"] == 0
    changed = result(agent.call("memory_save", note(what="Moved to PASETO tokens instead",
                                                    tags=["auth", "paseto"])))
    assert changed["id"] == first["id"] and changed["updated"] is True
    assert changed["version"] == 2 and changed["units"] == 1
    details = result(agent.call("memory_details", {"id": first["id"]}))
    assert details["what"] == "Moved to PASETO tokens instead" and details["version"] == 2
    assert [v["version"] for v in details["history"]] == [1]
    assert details["history"][0]["what"] == "Replaced session cookies with JWT for stateless auth"
    assert NoteVersion.objects.count() == 1 and Note.objects.count() == 1
    other_project = result(agent.call("memory_save", note(project="web-app")))
    assert other_project["id"] != first["id"] and other_project["created"] is True


def test_thin_decisions_and_bugs_are_saved_with_warnings(agent):
    decision = result(agent.call("memory_save", {"title": "Use Redis", "what": "Use Redis.",
                                                 "category": "decision"}))
    assert len(decision["warnings"]) == 2
    assert any("why" in w for w in decision["warnings"])
    bug = result(agent.call("memory_save", {"title": "Fix 502", "what": "Fixed the 502s.",
                                            "category": "bug"}))
    assert any("root cause" in w for w in bug["warnings"])
    assert any("fix" in w for w in bug["warnings"])
    learning = result(agent.call("memory_save", {"title": "Tip", "what": "Use -x.",
                                                 "category": "learning"}))
    assert learning["warnings"] == []


def test_project_comes_from_the_header_at_both_doors_unless_the_argument_names_one(
        agent, client, alice):
    headers = {"X-Echo-Project": "from-header"}
    response = agent.request("tools/call", {"name": "memory_save", "arguments": note(
        project=None)}, **headers)
    saved = response.json()["result"]
    assert saved["project"] == "from-header"
    over_rest = rest(client, alice, "memory_save", note(project=None, title="REST note"),
                     **headers).json()
    assert over_rest["project"] == "from-header"
    named = rest(client, alice, "memory_save", note(project="named", title="Named"),
                 **headers).json()
    assert named["project"] == "named"
    context = rest(client, alice, "memory_context", {}, **headers).json()
    assert context["project"] == "from-header" and context["total"] == 2
    everything = rest(client, alice, "memory_context", {}).json()
    assert everything["project"] is None and everything["total"] == 3


def test_file_path_is_accepted_and_dropped(agent):
    saved = result(agent.call("memory_save", note(file_path="/home/u/.memory/vault/x.md")))
    assert "file_path" not in saved
    assert "vault" not in Note.objects.get(pk=saved["id"]).search_text


def test_unknown_category_and_long_title_are_refused_naming_the_field(agent):
    bad = agent.call("memory_save", note(category="idea"))["result"]
    assert bad["isError"] is True and bad["error"]["field"] == "category"
    long = agent.call("memory_save", note(title="x" * 61))["result"]
    assert long["isError"] is True and long["error"]["field"] == "title"


def test_context_pages_through_every_note_with_next_cursor_ties_included(agent, alice):
    ids = [result(agent.call("memory_save", note(title=f"Decision {n}")))["id"]
           for n in range(7)]
    # Notes saved in one instant (an import) tie on updated_at: the id breaks the tie, so
    # no note is listed twice or skipped at a page boundary.
    Note.objects.filter(pk__in=ids[2:6]).update(updated_at=Note.objects.get(pk=ids[2])
                                                .updated_at)
    seen, cursor, pages = [], None, 0
    while True:
        arguments = {"project": "api-server", "limit": 3} | ({"cursor": cursor} if cursor
                                                             else {})
        page = result(agent.call("memory_context", arguments))
        assert page["total"] == 7 and page["cut_by_allowance"] is False
        assert page["units"] == page["showing"] == len(page["memories"])
        seen += [row["id"] for row in page["memories"]]
        pages += 1
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert pages == 3 and sorted(seen) == sorted(ids) and len(set(seen)) == 7
    stamps = [Note.objects.get(pk=i).updated_at for i in seen]
    assert stamps == sorted(stamps, reverse=True)


def test_context_without_cursor_answers_as_the_spec_shows_and_a_bad_cursor_names_the_fix(
        agent):
    result(agent.call("memory_save", note()))
    first = result(agent.call("memory_context", {"project": "api-server", "limit": 10}))
    assert first["next_cursor"] is None and first["showing"] == 1
    for bad in ("not-a-cursor", "bm90fGEtdXVpZA", ""):
        refused = agent.call("memory_context", {"cursor": bad})["result"]
        assert refused["isError"] is True and refused["error"]["field"] == "cursor"
        assert "next_cursor of the previous memory_context reply" in refused["error"]["fix"]
