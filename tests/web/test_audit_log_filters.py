"""The audit log's filters at scale (issue 41): who acted (a person by any door, a key, a
connected app), the tool, a session id's prefix and a time range read by seq; pages that
stay put while new events arrive; hostile values answered by the field, never a 500."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from audit.chain import GENESIS, seal
from audit.models import AuditChainHead, AuditEvent
from memories.catalog.audit_log import CLOCK_SKEW
from memories.models import Memory

APP = "oauth:client-abc"


def _events(actor, specs: list[dict], *, at=None) -> list[int]:
    """Sealed events appended to the account's chain, one per spec (fields of the event
    over a key's fact.created); their seqs."""
    head = AuditChainHead.objects.filter(account=actor.account).first()
    seq, prev = (head.seq, head.hash) if head else (0, GENESIS)
    memory = Memory.objects.get(account=actor.account, name="default")
    events = []
    for n, spec in enumerate(specs):
        seq += 1
        fields = {"memory_id": memory.pk, "memory_name": memory.name, "partition": "shared",
                  "action": "fact.created", "object_id": str(seq), "session_id": "",
                  "holder_id": actor.user.pk, "tool": actor.key.tool, "key_id": actor.key.pk,
                  "before": None, "after": {"fact": f"event {seq}"},
                  "created_at": (at or timezone.now()) + timedelta(microseconds=n), **spec}
        event = AuditEvent(account=actor.account, seq=seq, **fields)
        prev = seal(event, prev)
        events.append(event)
    AuditEvent.objects.bulk_create(events)
    AuditChainHead.objects.update_or_create(account=actor.account,
                                            defaults={"seq": seq, "hash": prev})
    return [event.seq for event in events]


def _seqs(response) -> list[int]:
    assert response.status_code == 200, response.status_code
    page = response.context["page"]
    assert page is not None, response.context["form"].errors
    return [row.event.seq for row in page.rows]


@pytest.fixture
def doors(alice, bob):
    """Alice through her key, through the dashboard and through a connected app; bob
    through his key; sessions sharing prefixes, one with LIKE's wildcards in it."""
    return {
        "key": _events(alice, [{"session_id": "run-10"}, {"session_id": "run-11"}]),
        "web": _events(alice, [{"tool": "web", "key_id": None}]),
        "app": _events(alice, [{"tool": APP, "key_id": None, "session_id": "app_1%"}]),
        "bob": _events(bob, [{"holder_id": bob.user.pk, "key_id": bob.key.pk,
                              "tool": bob.key.tool, "session_id": "run-2"}]),
        "wild": _events(alice, [{"session_id": "appx1zz"}]),
    }


def test_who_acted_a_person_a_key_or_an_app(client, alice, bob, doors):
    client.force_login(alice.user)
    by_person = set(_seqs(client.get("/audit/", {"actor": f"user:{alice.user.pk}"})))
    assert set(doors["key"] + doors["web"] + doors["app"]) <= by_person  # every door
    assert not set(doors["bob"]) & by_person
    assert set(_seqs(client.get("/audit/", {"actor": f"user:{bob.user.pk}"}))) >= set(
        doors["bob"])
    by_key = _seqs(client.get("/audit/", {"actor": f"key:{alice.key.pk}"}))
    assert set(doors["key"]) <= set(by_key) and not set(doors["web"] + doors["app"]) & set(
        by_key)
    assert _seqs(client.get("/audit/", {"actor": f"app:{APP}"})) == doors["app"]
    assert _seqs(client.get("/audit/", {"tool": "web"})) == doors["web"]
    # The choices name each: people by email, the app by its client id (no connection here).
    html = client.get("/audit/").content.decode()
    assert f'value="user:{bob.user.pk}">Person: bob' in html
    assert f'value="key:{alice.key.pk}">Key: laptop' in html
    assert f'value="app:{APP}">App: client-abc<' in html


def test_a_session_prefix_matches_literally(client, alice, doors):
    client.force_login(alice.user)
    assert _seqs(client.get("/audit/", {"session": "run-1"})) == doors["key"][::-1]
    assert _seqs(client.get("/audit/", {"session": "run-10"})) == doors["key"][:1]
    # % and _ are characters of the id, not wildcards.
    assert _seqs(client.get("/audit/", {"session": "app_"})) == doors["app"]
    assert _seqs(client.get("/audit/", {"session": "app%"})) == []


def test_a_time_range_is_exact_though_read_by_seq(client, alice):
    """Read by seq, yet exact when two servers' clocks disagree by less than CLOCK_SKEW:
    an event stamped before the one ahead of it, at either end of the range."""
    start = timezone.now() - timedelta(days=10)
    since, until = start + timedelta(days=1), start + timedelta(days=3)
    skew = timedelta(seconds=20)
    assert skew < CLOCK_SKEW
    early = _events(alice, [{}], at=start)
    in_first = _events(alice, [{}], at=since + skew)
    out_behind = _events(alice, [{}], at=since - timedelta(seconds=5))  # a clock behind
    middle = _events(alice, [{}, {}], at=start + timedelta(days=2))
    in_last = _events(alice, [{}], at=until - timedelta(seconds=5))
    in_behind = _events(alice, [{}], at=until - skew)  # stamped before the one ahead of it
    out_ahead = _events(alice, [{}], at=until + timedelta(seconds=5))
    late = _events(alice, [{}], at=start + timedelta(days=5))
    client.force_login(alice.user)
    minute = "%Y-%m-%dT%H:%M:%S"
    inside = _seqs(client.get("/audit/", {"since": f"{since:{minute}}",
                                          "until": f"{until:{minute}}"}))
    assert sorted(inside) == in_first + middle + in_last + in_behind
    assert not set(inside) & set(early + out_behind + out_ahead + late)
    # One end only, and a range holding nothing.
    assert set(_seqs(client.get("/audit/", {"until": f"{until:{minute}}"}))) >= set(
        early + out_behind + in_behind)
    assert set(_seqs(client.get("/audit/", {"since": f"{since:{minute}}"}))) >= set(
        late + out_ahead + in_first)
    nothing = start + timedelta(days=4)
    then = nothing + timedelta(hours=1)
    assert _seqs(client.get("/audit/", {"since": f"{nothing:{minute}}",
                                        "until": f"{then:{minute}}"})) == []


def test_pages_stay_put_while_events_arrive(client, alice):
    seqs = _events(alice, [{"action": "note.created"}] * 130)
    client.force_login(alice.user)
    wanted = {"action": "note.created"}
    first = client.get("/audit/", wanted)
    assert _seqs(first) == seqs[::-1][:50]
    older = first.context["page"].older_than
    _events(alice, [{"action": "note.created"}] * 7)  # new events land before the next click
    middle = client.get("/audit/", {**wanted, "before": older})
    assert _seqs(middle) == seqs[::-1][50:100]
    page = middle.context["page"]
    assert page.newer_than == seqs[::-1][50] and page.older_than == seqs[::-1][99]
    last = client.get("/audit/", {**wanted, "before": page.older_than})
    assert _seqs(last) == seqs[::-1][100:] and last.context["page"].older_than is None
    # "Newer" from the middle page comes back to where the first page was, not to the new ones.
    assert _seqs(client.get("/audit/", {**wanted, "after": page.newer_than})) == (
        seqs[::-1][:50])
    html = middle.content.decode()
    assert f"action=note.created&amp;before={seqs[::-1][99]}" in html


def test_another_accounts_people_keys_and_apps_are_not_choices(client, alice, charlie):
    _events(charlie, [{"tool": "oauth:charlies-app", "key_id": None, "session_id": "c-1"}])
    client.force_login(alice.user)
    for actor in (f"user:{charlie.user.pk}", f"key:{charlie.key.pk}", "app:oauth:charlies-app"):
        response = client.get("/audit/", {"actor": actor})
        assert response.context["page"] is None
        assert "not one of the choices" in response.context["form"].errors["actor"][0]
    assert "not one of the choices" in client.get(
        "/audit/", {"tool": "oauth:charlies-app"}).context["form"].errors["tool"][0]
    assert _seqs(client.get("/audit/", {"session": "c-"})) == []


@pytest.mark.parametrize("params, field", [
    ({"actor": "user:"}, "actor"),
    ({"actor": "user:1 OR 1=1"}, "actor"),
    ({"actor": "key:-1"}, "actor"),
    ({"actor": "app:"}, "actor"),
    ({"actor": "robot:3"}, "actor"),
    ({"tool": "' OR ''='"}, "tool"),
    ({"session": "s" * 201}, "session"),
    ({"since": "2026-02-30T10:00"}, "since"),
    ({"until": "99999-01-01"}, "until"),
    ({"before": "99999999999999999999999"}, "before"),
])
def test_hostile_values_are_field_errors(client, alice, doors, params, field):
    client.force_login(alice.user)
    response = client.get("/audit/", params)
    assert response.status_code == 200
    assert response.context["page"] is None and response.context["form"].errors[field]
    assert client.get("/audit/export.jsonl", params).status_code == 400


@pytest.mark.parametrize("session", ["\\", "%_%", "'; DROP TABLE x; --", "ünï-☃", "a\tb"])
def test_odd_session_prefixes_are_just_text(client, alice, doors, session):
    client.force_login(alice.user)
    assert _seqs(client.get("/audit/", {"session": session})) == []
