"""Notes in a browser: an agent's note (updated once) is found from the memory's Notes tab,
and its page shows the details and the version the update replaced."""

from __future__ import annotations

import pytest

from accounts.principal import principal_from_key
from accounts.services import api_key_create
from tests.e2e.test_long_lists import _session_for
from tools.calling import run_validated
from tools.registry import TOOLS


@pytest.mark.django_db(transaction=True)
def test_notes_tab_search_and_note_page_with_history(live_server, page, visits):
    from web.services import sign_up

    user, account = sign_up(email="dev@example.com", password="a long passphrase 42")
    _, plaintext = api_key_create(account=account, holder=user, name="laptop",
                                  tool="claude-code")
    principal = principal_from_key(plaintext)
    first = {"title": "Chose Postgres over Mongo", "category": "decision",
             "what": "Orders live in Postgres", "why": "We need transactions across tables",
             "tags": ["db", "orders"], "related_files": ["orders/models.py"],
             "details": "Options considered: MongoDB, MySQL.\nDecision: Postgres.",
             "project": "shop"}
    run_validated(principal, TOOLS["memory_save"], first)
    run_validated(principal, TOOLS["memory_save"], first | {
        "what": "Orders and payments live in Postgres"})
    page.context.add_cookies([{"name": "sessionid", "value": _session_for(user),
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
