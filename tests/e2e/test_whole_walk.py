"""The whole product in one walk, as issue 10 names it: a person signs up, creates a memory
and a key by following the first-run checklist (issue 41), which ticks live on the open
dashboard when an agent writes through /mcp with that key (the official `mcp` client); the
explorer finds the fact and draws its cause chain; the audit log shows the write with its key
and session; a second person, invited, sees the memory as a member but cannot revoke the
owner's key; the memory is deleted, its facts are gone, and the chain verifies."""

from __future__ import annotations

import re
import threading
from typing import Any

import anyio
import httpx2
import pytest
from django.core import mail
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from playwright.sync_api import expect

from accounts.models import ApiKey
from memories.models import Entity, Fact

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
OWNER, MEMBER = "ada@example.com", "grace@example.com"
EPISODE = {
    "memory": "ops", "scope": "shared", "session_id": "walk-42", "assume_new": True,
    "entities": [{"name": n, "type": "event"}
                 for n in ("Full disk on db-2", "Checkout outage", "Refund wave")],
    "facts": [
        {"source": "Full disk on db-2", "target": "Checkout outage", "relation_type": "caused",
         "fact": "The full disk on db-2 caused the checkout outage.",
         "confidence": "extracted", "causal_hint": "led_to"},
        {"source": "Checkout outage", "target": "Refund wave", "relation_type": "caused",
         "fact": "The checkout outage led to a wave of refunds.",
         "confidence": "extracted", "causal_hint": "led_to"}],
}


def agent_writes(endpoint: str, key: str) -> Any:
    """The official client, in its own thread: Playwright's sync API holds this one's loop."""
    outcome: dict[str, Any] = {}

    async def main() -> None:
        headers = {"Authorization": f"Bearer {key}"}
        async with httpx2.AsyncClient(headers=headers, timeout=60) as http, \
                Client(streamable_http_client(endpoint, http_client=http)) as client:
            outcome["reply"] = await client.call_tool("write_episode", EPISODE)

    def run() -> None:
        try:
            anyio.run(main)
        except BaseException as failure:  # re-raised in the test's own thread
            outcome["error"] = failure

    worker = threading.Thread(target=run)
    worker.start()
    worker.join(120)
    if "error" in outcome:
        raise outcome["error"]
    return outcome["reply"]


def marks(page) -> list[str]:
    """The first-run checklist's marks, as a screen reader reads them."""
    return [mark.text_content() for mark in page.locator("#first-run li .visually-hidden").all()]


def sign_in(page, visits, url: str, email: str, password: str) -> None:
    visits.goto(f"{url}/login/")
    page.get_by_label("Email").fill(email)
    page.get_by_label("Password").fill(password)
    visits.click("button", "Sign in")


@pytest.mark.django_db(transaction=True)
def test_sign_up_to_agent_write_to_explorer_audit_team_and_erasure(live_server, page, visits):
    url = live_server.url
    visits.goto(f"{url}/signup/")
    page.get_by_label("Email").fill(OWNER)
    page.get_by_label("Password").fill("a long passphrase 42")
    visits.click("button", "Sign up")
    assert page.url.endswith("/signup/sent/")
    visits.goto(f"{url}/login/")
    page.get_by_label("Email").fill(OWNER)
    page.get_by_label("Password").fill("a long passphrase 42")
    visits.click("button", "Sign in")
    assert page.url.endswith("/dashboard/")

    # The first-run checklist, followed: each step's link, each page's onward link.
    assert marks(page) == ["To do:"] * 3
    visits.click("link", "Create a memory")
    page.get_by_label("Name").fill("ops")
    visits.click("button", "Create memory")
    visits.click("link", "Connect a client to it")
    assert page.locator("#id_default_memory option:checked").inner_text() == "ops"
    page.get_by_label("Name").fill("laptop")
    page.get_by_label("Tool").fill("claude-code")
    visits.click("button", "Create key")
    plaintext = page.get_by_label("API key", exact=True).input_value()
    assert re.fullmatch(r"em_[0-9a-f]{12}_[\w-]{43}", plaintext)
    prefix = plaintext.split("_")[1]
    visits.click("link", "Done")
    assert marks(page) == ["Done:", "Done:", "To do:"]

    # The dashboard stays open (no load: the marker survives) and ticks when the write lands.
    page.evaluate("window.__marker = 42")
    reply = agent_writes(f"{url}/mcp", plaintext)
    assert reply.is_error is False and reply.structured_content["stored"] is True
    expect(page.locator("#first-run [data-step=write]")).to_contain_text("Done:", timeout=8000)
    assert marks(page) == ["Done:"] * 3 and page.evaluate("window.__marker") == 42
    assert page.locator("#first-run[hx-trigger]").count() == 0  # it polls no more
    visits.shoot()

    visits.click("link", "Explore memory ops")
    page.get_by_label("Search").fill("full disk on the database")
    visits.click("button", "Search")
    results = page.locator("[aria-labelledby=results-heading] li")
    assert "The full disk on db-2 caused the checkout outage." in results.first.inner_text()
    assert "found by" in results.first.inner_text()
    visits.goto(f"{url}/memories/ops/cause/?subject=Checkout+outage&direction=both")
    diagram = page.locator("svg.cause-diagram")
    assert diagram.is_visible() and diagram.locator("line").count() == 2
    for name in ("Full disk on db-2", "Checkout outage", "Refund wave"):
        assert diagram.locator("text").get_by_text(name, exact=True).is_visible()

    visits.click("link", "Audit log")
    page.get_by_label("Session").fill("walk-42")
    visits.click("button", "Apply filter")
    events = page.locator("[aria-labelledby=events-heading] tbody")
    assert events.get_by_text("The full disk on db-2 caused the checkout outage.").first \
        .is_visible()
    assert events.get_by_text(f"laptop (em_{prefix}").first.is_visible()
    assert events.get_by_text("walk-42").first.is_visible()

    visits.click("link", "Team")
    page.get_by_label("Email").fill(MEMBER)
    page.get_by_label("Role").select_option("member")
    visits.click("button", "Send invitation")
    link = re.search(r"http://\S+/invitations/[\w-]+/", mail.outbox[-1].body)[0]
    visits.click("button", "Sign out")
    visits.goto(link)
    page.get_by_label("Password").fill("another long passphrase 7")
    visits.click("button", "Create user and join")
    assert page.get_by_text("You are member of this account.").is_visible()
    assert page.get_by_role("link", name="Explore memory ops").is_visible()
    assert page.get_by_role("link", name=f"Revoke em_{prefix}").count() == 0
    owners_key = ApiKey.objects.get(prefix=prefix)
    csrf = next(c["value"] for c in page.context.cookies() if c["name"] == "csrftoken")
    refused = page.request.post(f"{url}/keys/{owners_key.pk}/revoke/",
                                headers={"X-CSRFToken": csrf}, max_redirects=0)
    assert refused.status == 403
    assert ApiKey.objects.get(pk=owners_key.pk).revoked_at is None
    visits.click("button", "Sign out")

    sign_in(page, visits, url, OWNER, "a long passphrase 42")
    visits.click("link", "Delete memory ops")
    page.get_by_label("Type the memory's name to confirm").fill("ops")
    # The laptop key writes to ops by default: the page asks what becomes of it.
    assert f"em_{prefix}_" in page.content()
    visits.click("button", "Delete memory")
    assert "Choose what happens to this key" in page.content()
    page.get_by_label("What happens to this key").select_option(label="Move it to default")
    page.get_by_label("Type the memory's name to confirm").fill("ops")
    visits.click("button", "Delete memory")
    status = page.get_by_role("status").inner_text()
    assert "Memory ops is deleted" in status and "now use default" in status
    assert not Fact.objects.filter(memory__name="ops").exists()
    assert not Entity.objects.filter(name="Checkout outage").exists()
    visits.click("link", "Audit log")
    visits.click("button", "Verify chain")
    assert "The audit chain verifies" in page.get_by_role("status").inner_text()
    assert "The full disk on db-2" not in page.content()  # the text is erased from the log
