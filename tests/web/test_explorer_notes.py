"""The explorer's notes: alice lists, searches and opens her account's notes with their
history; bob's solo notes stay his; charlie gets 404 for alice's memory and notes."""

from __future__ import annotations

import uuid

from memories.models import Note
from tools.calling import run_validated
from tools.registry import TOOLS


def save(actor, **fields):
    arguments = {"title": "Pool size halved", "what": "Deploy 41 halved the DB pool",
                 "category": "bug", "why": "A config typo", "impact": "502s at checkout",
                 "tags": ["db", "deploy"], "project": "shop", **fields}
    return run_validated(actor.principal, TOOLS["memory_save"], arguments)


def test_notes_list_shows_recent_first_and_searches_every_field(client, alice):
    first = save(alice)
    save(alice, title="Chose Postgres over Mongo", category="decision",
         what="Postgres for the orders", details="Options considered: MongoDB, MySQL")
    client.force_login(alice.user)
    page = client.get("/memories/default/notes/")
    assert page.status_code == 200
    text = page.content.decode()
    assert text.index("Chose Postgres over Mongo") < text.index("Pool size halved")
    assert f"/memories/default/notes/{first['id']}/" in text
    found = client.get("/memories/default/notes/", {"q": "MySQL"}).content.decode()
    assert "Chose Postgres over Mongo" in found and "Pool size halved" not in found
    by_project = client.get("/memories/default/notes/", {"project": "elsewhere"})
    assert "No notes match" in by_project.content.decode()


def test_note_page_shows_the_note_and_every_earlier_version(client, alice):
    saved = save(alice)
    save(alice, what="Deploy 41 set the pool to 5 instead of 50")
    client.force_login(alice.user)
    page = client.get(f"/memories/default/notes/{saved['id']}/")
    assert page.status_code == 200
    text = page.content.decode()
    assert "Deploy 41 set the pool to 5 instead of 50" in text
    assert "Version 1" in text and "Deploy 41 halved the DB pool" in text
    assert "version 2" in text


def test_empty_notes_list_says_how_notes_arrive(client, alice):
    client.force_login(alice.user)
    text = client.get("/memories/default/notes/").content.decode()
    assert "No notes yet" in text and "memory_save" in text


def test_another_holders_solo_notes_are_invisible(client, alice, bob):
    private = save(bob, scope="solo", title="Bob's private note")
    client.force_login(alice.user)
    assert "Bob&#x27;s private note" not in client.get("/memories/default/notes/").content.decode()
    assert client.get(f"/memories/default/notes/{private['id']}/").status_code == 404
    client.force_login(bob.user)
    assert client.get(f"/memories/default/notes/{private['id']}/").status_code == 200
    shared = client.get("/memories/default/notes/").content.decode()
    assert "Bob&#x27;s private note" not in shared and "Solo: support-bot" in shared
    solo = client.get("/memories/default/notes/", {"scope": "solo:support-bot"})
    assert "Bob&#x27;s private note" in solo.content.decode()


def test_another_accounts_notes_and_memory_are_not_found(client, alice, charlie):
    saved = save(alice)
    client.force_login(charlie.user)
    assert client.get(f"/memories/default/notes/{saved['id']}/").status_code == 404
    assert Note.objects.filter(pk=saved["id"]).exists()
    assert client.get(f"/memories/default/notes/{uuid.uuid4()}/").status_code == 404


def test_the_notes_list_costs_the_same_queries_at_30_notes_as_at_3(client, alice):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    client.force_login(alice.user)
    for n in range(3):
        save(alice, title=f"Note {n}")
    with CaptureQueriesContext(connection) as few:
        assert client.get("/memories/default/notes/").status_code == 200
    for n in range(3, 30):
        save(alice, title=f"Note {n}", project=f"p{n % 4}")
    with CaptureQueriesContext(connection) as many:
        assert client.get("/memories/default/notes/").status_code == 200
    assert len(many) == len(few)
