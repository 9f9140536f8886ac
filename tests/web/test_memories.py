"""Memories in the browser: created with their rules explained, listed with counts, deleted
by owners and admins after typing the name."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memories.models import Memory
from tests.factories import Engine, fact, person


def test_a_memory_is_created_with_a_valid_name_and_refused_by_field_otherwise(client, alice):
    client.force_login(alice.user)
    assert client.post("/memories/new/", {"name": "support-bot"}).status_code == 302
    assert Memory.objects.filter(account=alice.account, name="support-bot").exists()
    bad = client.post("/memories/new/", {"name": "Support Bot"})
    assert "lowercase letters" in bad.context["form"].errors["name"][0]
    taken = client.post("/memories/new/", {"name": "support-bot"})
    assert "already exists" in taken.context["form"].errors["name"][0]
    assert Memory.objects.filter(account=alice.account).count() == 2


def test_the_list_counts_what_the_person_may_see_in_a_bounded_number_of_queries(client, alice,
                                                                               bob, settings):
    # The key list's rate limits as a setting: the plan's is one query a process makes at
    # most once in 5 s (billing/rates.py), which the first measure would make and not the
    # second. (The keys' windows are read from the limiter, Redis here: no SQL.)
    settings.RATE_LIMIT_PER_MINUTE = 240
    engine = Engine(alice.principal)
    engine.write(assume_new=True, entities=[person("Ada"), person("Grace")],
                 facts=[fact("Ada", "Grace", "mentors", "Ada mentors Grace")])
    engine.write(entities=[person("Ada"), person("Grace")],
                 facts=[fact("Ada", "Grace", "mentors", "Ada mentored Grace until 2020")])
    Engine(bob.principal).write(scope="solo", assume_new=True,
                                entities=[person("Bob's secret")], facts=[])
    client.force_login(alice.user)

    def dashboard_queries() -> tuple[int, dict]:
        with CaptureQueriesContext(connection) as queries:
            rows = client.get("/dashboard/").context["memories"]
        return len(queries), {row.memory.name: (row.entities, row.live_facts,
                                                row.superseded_facts) for row in rows}

    few, counts = dashboard_queries()
    assert counts == {"default": (2, 1, 1)}  # not bob's solo entity
    Memory.objects.bulk_create(Memory(account=alice.account, name=f"m{n}") for n in range(30))
    many, counts = dashboard_queries()
    assert len(counts) == 25 and counts["default"] == (2, 1, 1)  # a page of 25
    rest = client.get("/dashboard/", {"memories": 2}).context["memories"]
    assert len(rest) == 6 and rest[-1].memory.name == "m9"
    # Counts (3), two pages (count and rows each), recent changes, recall saves, the keys
    # expiring within a week, the first-run checklist, the nav's switcher, email banner and
    # (hosted, as here) usage banner, session and user.
    assert many == few <= 20


def test_deleting_needs_the_name_typed_and_an_owner_or_admin(client, alice, bob, charlie):
    Memory.objects.create(account=alice.account, name="doomed")
    client.force_login(bob.user)
    assert client.get("/memories/doomed/delete/").status_code == 403
    client.force_login(charlie.user)
    assert client.get("/memories/doomed/delete/").status_code == 404
    client.force_login(alice.user)
    wrong = client.post("/memories/doomed/delete/", {"confirm": "doome"})
    assert "to confirm" in wrong.context["form"].errors["confirm"][0]
    assert Memory.objects.filter(name="doomed").exists()
    done = client.post("/memories/doomed/delete/", {"confirm": "doomed"}, follow=True)
    assert "Memory doomed is deleted" in done.content.decode()
    assert not Memory.objects.filter(name="doomed").exists()


@pytest.mark.parametrize("path", ["/memories/nope/delete/", "/keys/999999/revoke/"])
def test_what_does_not_exist_is_404(client, alice, path):
    client.force_login(alice.user)
    assert client.get(path).status_code == 404
