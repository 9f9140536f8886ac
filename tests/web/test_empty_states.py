"""Every list, empty, says what goes there and links to the action that fills it: one
account with nothing in it (built without the services, which would record its creation
and make its `default` memory), each page rendered once in process."""

from __future__ import annotations

import pytest

from accounts.models import Account, Membership
from memories.graph.services import memory_create
from tests.factories import make_user

# (page, whether it needs a memory, the empty list's text, the link beside it)
EMPTY_LISTS = [
    ("/dashboard/", False, "No memories yet", "/memories/new/"),
    ("/dashboard/", False, "No API keys yet", "/keys/new/"),
    ("/dashboard/", False, "Nothing has changed yet", "#connect-heading"),
    ("/dashboard/", False, "None yet this month", "/docs/agents/"),
    ("/audit/", False, "Nothing recorded yet", "/dashboard/#connect-heading"),
    ("/team/", False, "No pending invitations", "#invite-heading"),
    ("/apps/", False, "No app is connected", "/docs/connect/"),
    ("/memories/default/", True, "No facts yet in this scope", "/dashboard/#connect-heading"),
    ("/memories/default/notes/", True, "No notes yet in this scope", "/docs/coding-agents/"),
]


@pytest.mark.parametrize(("path", "needs_memory", "text", "link"), EMPTY_LISTS,
                         ids=[f"{path}:{text}" for path, _, text, _ in EMPTY_LISTS])
def test_an_empty_list_says_what_goes_there_and_links_to_the_action(
        client, db, path, needs_memory, text, link):
    owner = make_user("newcomer")
    account = Account.objects.create(name="New")
    Membership.objects.create(user=owner, account=account, role=Membership.Role.OWNER)
    if needs_memory:
        memory_create(account_id=account.pk, name="default", actor_id=owner.pk)
    client.force_login(owner)
    response = client.get(path)
    assert response.status_code == 200
    html = response.content.decode()
    assert text in html
    # The link is in the same empty state: before the block that holds the text ends.
    start = html.index(text)
    block = html[start:min(end for end in (html.find("</div>", start),
                                           html.find("</section>", start)) if end > 0)]
    assert f'href="{link}"' in block, block
