"""A dashboard with many memories and keys still fits the screen (no sideways scrolling),
and shows them 25 at a time with pages for the rest."""

from __future__ import annotations

import pytest

from accounts.services import api_key_create
from memories.models import Memory
from tests.factories import session_for
from web.services import sign_up


@pytest.mark.django_db(transaction=True)
def test_a_dashboard_with_many_memories_and_keys(live_server, page, visits):
    user, account = sign_up(email="busy@example.com", password="a long passphrase 42")
    Memory.objects.bulk_create(Memory(account=account, name=f"project-{n:02d}",
                                      description=f"Notes of project {n}") for n in range(30))
    for n in range(27):
        api_key_create(account=account, holder=user, name=f"machine {n}",
                       tool=f"agent-with-a-longer-name-{n}")
    page.context.add_cookies([{"name": "sessionid", "value": session_for(user),
                               "url": live_server.url}])
    visits.goto(f"{live_server.url}/dashboard/")
    assert page.locator("[aria-labelledby=keys-heading] tbody tr").count() == 25
    assert page.locator("[aria-labelledby=memories-heading] tbody tr").count() == 25
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0, f"the page scrolls sideways by {overflow}px"
    memories = page.get_by_role("navigation", name="Memories pages")
    assert memories.get_by_text("Memories: page 1 of 2").is_visible()
    memories.get_by_role("link", name="Next").click()
    page.wait_for_url("**/dashboard/?memories=2")
    visits.shoot()
    assert page.get_by_text("project-29", exact=True).is_visible()
    assert page.locator("[aria-labelledby=memories-heading] tbody tr").count() == 6
    page.get_by_role("navigation", name="Keys pages").get_by_role("link", name="Next").click()
    page.wait_for_url("**/dashboard/?memories=2&keys=2")
    visits.shoot()
    assert page.locator("[aria-labelledby=keys-heading] tbody tr").count() == 2
    assert page.get_by_text("project-29", exact=True).is_visible()  # the other list stays
