"""Notes in a browser: an agent's note (updated once) is found from the memory's Notes tab,
and its page shows the details and the version the update replaced."""

from __future__ import annotations

import pytest

from tests.factories import session_for, signed_up
from tools.calling import run_validated
from tools.registry import TOOLS


@pytest.mark.django_db(transaction=True)
def test_notes_tab_search_and_note_page_with_history(live_server, page, visits):
    dev = signed_up("dev@example.com")
    principal = dev.principal
    first = {"title": "Chose Postgres over Mongo", "category": "decision",
             "what": "Orders live in Postgres", "why": "We need transactions across tables",
             "tags": ["db", "orders"], "related_files": ["orders/models.py"],
             "details": "Options considered: MongoDB, MySQL.\nDecision: Postgres.",
             "project": "shop"}
    run_validated(principal, TOOLS["memory_save"], first)
    run_validated(principal, TOOLS["memory_save"], first | {
        "what": "Orders and payments live in Postgres"})
    page.context.add_cookies([{"name": "sessionid", "value": session_for(dev.user),
                               "url": live_server.url}])

    visits.goto(f"{live_server.url}/memories/default/")
    visits.click("link", "Notes")
    page.get_by_label("Search notes").fill("MySQL")
    visits.click("button", "Search")
    visits.click("link", "Chose Postgres over Mongo")
    body = page.content()
    assert "Orders and payments live in Postgres" in body
    assert "Version 1" in body and "Orders live in Postgres" in body
    assert "orders/models.py" in body
