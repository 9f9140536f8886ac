"""Saving a title that exists merges into the note, at both doors: fields given replace the
stored ones (an empty value clears one), fields left out (or null) keep theirs, the earlier
text goes into history, and the reply says what changed and what was kept."""

from __future__ import annotations

import pytest

from memories.models import Note, NoteVersion
from tests.factories import note
from tests.notes.conftest import rest

FULL = note()
OTHERS = ["why", "impact", "tags", "category", "related_files", "details"]


@pytest.fixture(params=["mcp", "rest"])
def save(request, agent, client, alice):
    def call(arguments: dict) -> dict:
        if request.param == "mcp":
            reply = agent.call("memory_save", arguments)["result"]
            assert reply["isError"] is False, reply
            return reply
        response = rest(client, alice, "memory_save", arguments)
        assert response.status_code == 200, response.content
        return response.json()
    return call


def stored() -> dict:
    row = Note.objects.get()
    return {name: getattr(row, name) for name in ["what", *OTHERS]}


def test_a_save_with_title_and_what_only_keeps_every_other_field(save):
    first = save(FULL)
    assert first["created"] is True and first["kept"] == []
    assert set(first["changed"]) == {"what", *OTHERS}
    update = save({"title": FULL["title"], "project": FULL["project"],
                   "what": "Moved to PASETO tokens"})
    assert (update["id"], update["updated"], update["version"]) == (first["id"], True, 2)
    assert update["changed"] == ["what"] and update["kept"] == OTHERS
    assert "changed what; kept why, impact, tags, category, related_files, details" in (
        update["message"])
    now = stored()
    assert now["what"] == "Moved to PASETO tokens"
    assert {k: now[k] for k in OTHERS} == {k: FULL[k] for k in OTHERS}
    [version] = NoteVersion.objects.all()
    assert (version.version, version.what, version.why) == (1, FULL["what"], FULL["why"])


def test_an_empty_value_clears_a_field_and_null_keeps_it(save):
    save(FULL)
    update = save({"title": FULL["title"], "project": FULL["project"], "what": FULL["what"],
                   "why": "", "tags": [], "impact": None, "details": None})
    assert update["changed"] == ["why", "tags"]
    assert update["kept"] == ["impact", "category", "related_files", "details"]
    now = stored()
    assert (now["why"], now["tags"]) == ("", [])
    assert (now["impact"], now["details"]) == (FULL["impact"], FULL["details"])


def test_a_partial_save_that_changes_nothing_is_free_and_makes_no_version(save):
    save(FULL)
    same = save({"title": FULL["title"], "project": FULL["project"], "what": FULL["what"],
                 "category": "decision"})
    assert (same["updated"], same["units"], same["version"], same["changed"]) == (
        False, 0, 1, [])
    assert "kept why" in same["message"]
    assert not NoteVersion.objects.exists() and stored()["why"] == FULL["why"]


def test_every_field_given_replaces_the_note_whole(save):
    save(FULL)
    other = {**FULL, "what": "w2", "why": "y2", "impact": "i2", "tags": ["t2"],
             "category": "bug", "related_files": ["b.py"], "details": "d2"}
    update = save(other)
    assert set(update["changed"]) == {"what", *OTHERS} and update["kept"] == []
    assert stored() == {k: other[k] for k in ["what", *OTHERS]}


def test_a_partial_save_carrying_a_secret_keeps_the_fields_it_left_out(save):
    """Redaction (at the tool-call entry) validates the arguments again: the fields a save
    left out must stay left out, or the merge would clear them."""
    save(FULL)
    secret = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    update = save({"title": FULL["title"], "project": FULL["project"],
                   "what": f"Rotated the deploy token {secret}"})
    assert update["redacted"] == 1 and update["changed"] == ["what"]
    assert update["kept"] == OTHERS
    now = stored()
    assert secret not in now["what"] and "[REDACTED:" in now["what"]
    assert {k: now[k] for k in OTHERS} == {k: FULL[k] for k in OTHERS}
