"""The audit log in the browser: filtered, paged by seq, exported as CSV and JSONL, its
chain verified by owners and admins; each person sees what DESIGN lets them see."""

from __future__ import annotations

import csv
import html
import io
import json
import re
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from accounts.models import Account, Membership
from accounts.principal import Principal, principal_for_member
from audit.chain import ACCOUNT_PARTITION, GENESIS, Change, record, seal
from audit.models import AuditChainHead, AuditEvent
from memories.models import Memory
from tests.factories import Engine, fact, make_user, person


def _account_event(actor, action: str, object_id: str = "1") -> None:
    principal, _ = principal_for_member(actor.user, actor.account.pk)
    record(actor=principal, memory=None, partition=ACCOUNT_PARTITION, session_id="",
           changes=[Change(action, object_id, after={"name": f"{action} {object_id}"})])


@pytest.fixture
def trail(alice, bob):
    """Alice writes in `default` (session s-1) and `notes` (session s-2); bob writes a shared
    fact and a solo secret; alice creates a key and bob one, account-level."""
    Memory.objects.create(account=alice.account, name="notes")
    ada = Engine(alice.principal)
    ada.write(session_id="s-1", assume_new=True, entities=[person("Ada"), person("Grace")],
              facts=[fact("Ada", "Grace", "mentors", "Ada mentors Grace")])
    ada.write(session_id="s-1", entities=[person("Ada"), person("Grace")],
              facts=[fact("Ada", "Grace", "mentors", "Ada mentored Grace until 2020")])
    ada.write(memory="notes", session_id="s-2", assume_new=True, entities=[person("Linus")],
              facts=[])
    bobs = Engine(bob.principal)
    bobs.write(session_id="b-1", assume_new=True, entities=[person("Hopper")], facts=[])
    bobs.write(scope="solo", session_id="b-secret", assume_new=True,
               entities=[person("Bob's secret")], facts=[])
    _account_event(alice, "key.created", "101")
    _account_event(bob, "key.created", "102")


def _seqs(response) -> list[int]:
    return [row.event.seq for row in response.context["page"].rows]


def _actions(response) -> list[str]:
    return [row.event.action for row in response.context["page"].rows]


def test_each_filter_narrows_the_log(client, alice, bob, trail):
    client.force_login(alice.user)
    everything = client.get("/audit/")
    assert everything.status_code == 200
    all_seqs = _seqs(everything)
    assert all_seqs == sorted(all_seqs, reverse=True)  # newest first
    notes = Memory.objects.get(account=alice.account, name="notes")

    by_memory = client.get("/audit/", {"memory": notes.pk})
    assert {row.event.memory_name for row in by_memory.context["page"].rows} == {"notes"}
    by_account = client.get("/audit/", {"memory": "account"})
    account_rows = by_account.context["page"].rows
    assert all(row.account_level for row in account_rows)
    assert {"101", "102"} <= {row.event.object_id for row in account_rows}
    by_action = client.get("/audit/", {"action": "fact.superseded"})
    assert _actions(by_action) == ["fact.superseded"]
    assert "Ada mentors Grace" in by_action.content.decode()
    by_key = client.get("/audit/", {"actor": f"key:{bob.key.pk}"})
    assert {row.event.key_id for row in by_key.context["page"].rows} == {bob.key.pk}
    assert {row.event.session_id for row in by_key.context["page"].rows} == {"b-1"}
    by_session = client.get("/audit/", {"session": "s-2"})
    assert _actions(by_session) == ["entity.created"]
    assert all(len(_seqs(narrowed)) < len(all_seqs) for narrowed in (
        by_memory, by_account, by_action, by_key, by_session))

    # A time range: the rest now, then three events an hour later (appended after them:
    # an account's events are in time order by seq, as the chain stamps them).
    _bulk_events(alice, 3, action="fact.created", at=timezone.now() + timedelta(hours=1))
    between = timezone.now() + timedelta(minutes=30)
    late = client.get("/audit/", {"since": between.strftime("%Y-%m-%dT%H:%M")})
    assert [row.event.after for row in late.context["page"].rows] == [
        {"fact": f"fact number {n}"} for n in (2, 1, 0)]
    earlier = client.get("/audit/", {"until": between.strftime("%Y-%m-%dT%H:%M")})
    assert _seqs(earlier) == all_seqs


def test_each_row_says_who_and_what(client, alice, trail):
    client.force_login(alice.user)
    page = client.get("/audit/", {"session": "s-1"})
    html = page.content.decode()
    assert "alice" in html and "laptop (em_" in html and "claude-code" in html
    superseded = next(row for row in page.context["page"].rows
                      if row.event.action == "fact.superseded")
    assert {change.field: change.before for change in superseded.changes}["fact"] == (
        "Ada mentors Grace")


@pytest.mark.parametrize("params, field, says", [
    ({"memory": "999999"}, "memory", "not one of the choices"),
    ({"action": "fact.exploded"}, "action", "not one of the choices"),
    ({"actor": "key:abc"}, "actor", "not one of the choices"),
    ({"session": "x" * 201}, "session", "at most 200"),
    ({"since": "yesterday"}, "since", "like 2026-11-30T14:05"),
    ({"since": "9999-12-31T23:59"}, "since", "No event is that recent"),
    ({"until": "0001-01-01T00:00"}, "until", "No event is that old"),
])
def test_bad_filter_values_get_field_errors(client, alice, trail, params, field, says):
    client.force_login(alice.user)
    response = client.get("/audit/", params)
    assert response.status_code == 200
    assert says in response.context["form"].errors[field][0]
    assert response.context["page"] is None
    assert client.get("/audit/export.csv", params).status_code == 400


def test_a_range_ending_before_it_starts_is_refused(client, alice, trail):
    _bulk_events(alice, 1, at=timezone.now() - timedelta(hours=2))
    client.force_login(alice.user)
    late, early = (f"{timezone.now() - timedelta(minutes=m):%Y-%m-%dT%H:%M}" for m in (30, 90))
    response = client.get("/audit/", {"since": late, "until": early})
    assert "before “From”" in response.context["form"].errors["until"][0]


def test_a_bad_page_cursor_is_an_error_not_a_crash(client, alice, trail):
    client.force_login(alice.user)
    for params, field in (({"before": "-3"}, "before"), ({"after": "x"}, "after"),
                          ({"before": "5", "after": "2"}, "__all__")):
        response = client.get("/audit/", params)
        assert response.status_code == 200 and response.context["page"] is None
        assert response.context["form"].errors[field], params
    assert "Start again from the first page" in client.get(
        "/audit/", {"before": "-3"}).content.decode()


def _bulk_events(actor, count: int, *, action: str = "fact.created",
                 memory: Memory | None = None, at=None) -> None:
    """`count` sealed events appended to the account's chain, fast: seal() as `record`
    does, one bulk insert, and the chain head moved to the last one."""
    head = AuditChainHead.objects.filter(account=actor.account).first()
    seq, prev = (head.seq, head.hash) if head else (0, GENESIS)
    memory = memory or Memory.objects.get(account=actor.account, name="default")
    now, events = at or timezone.now(), []
    for n in range(count):
        seq += 1
        event = AuditEvent(account=actor.account, seq=seq, memory_id=memory.pk,
                           memory_name=memory.name, partition="shared", action=action,
                           object_id=str(n), session_id=f"bulk-{n % 7}",
                           holder_id=actor.user.pk, tool=actor.key.tool, key_id=actor.key.pk,
                           before=None, after={"fact": f"fact number {n}"}, created_at=now)
        prev = seal(event, prev)
        events.append(event)
    AuditEvent.objects.bulk_create(events, batch_size=2000)
    AuditChainHead.objects.update_or_create(account=actor.account,
                                            defaults={"seq": seq, "hash": prev})


def test_pagination_is_a_keyset_on_seq_and_keeps_the_filter(client, alice):
    o = AuditEvent.objects.filter(account=alice.account).count()  # the account's own events
    _bulk_events(alice, 120)
    _bulk_events(alice, 30, action="entity.created")
    client.force_login(alice.user)
    first = client.get("/audit/", {"action": "fact.created"})
    assert _seqs(first) == list(range(120 + o, 70 + o, -1))
    page = first.context["page"]
    assert page.newer_than is None and page.older_than == 71 + o
    html = first.content.decode()
    assert f"?action=fact.created&amp;before={71 + o}" in html
    second = client.get("/audit/", {"action": "fact.created", "before": 71 + o})
    assert _seqs(second) == list(range(70 + o, 20 + o, -1))
    last = client.get("/audit/", {"action": "fact.created", "before": 21 + o})
    assert _seqs(last) == list(range(20 + o, o, -1)) and last.context["page"].older_than is None
    back = client.get("/audit/", {"action": "fact.created", "after": 70 + o})
    assert _seqs(back) == list(range(120 + o, 70 + o, -1))
    assert back.context["page"].newer_than is None


def test_csv_and_jsonl_export_the_filtered_log_streamed(client, alice, bob, trail):
    _bulk_events(alice, 2500)  # more than one export chunk
    client.force_login(alice.user)
    response = client.get("/audit/export.csv", {"session": "s-1"})
    assert response.status_code == 200 and response.streaming
    assert response["Content-Type"].startswith("text/csv")
    assert 'filename="audit-log-' in response["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert rows and {row["session_id"] for row in rows} == {"s-1"}
    assert [int(row["seq"]) for row in rows] == sorted(int(row["seq"]) for row in rows)
    superseded = next(row for row in rows if row["action"] == "fact.superseded")
    assert json.loads(superseded["before"])["fact"] == "Ada mentors Grace"
    assert superseded["holder"] == "alice" and "laptop (em_" in superseded["key"]

    jsonl = client.get("/audit/export.jsonl", {"action": "fact.created"})
    assert jsonl.streaming and 'filename="audit-log-' in jsonl["Content-Disposition"]
    with CaptureQueriesContext(connection) as reads:
        body = b"".join(jsonl.streaming_content).decode()
    assert len(reads) <= 3 * 3 + 1  # three chunks of 1,000 (events, holders, keys) and the end
    records = [json.loads(line) for line in body.splitlines()]
    assert {record["action"] for record in records} == {"fact.created"}
    assert len(records) == 2500 + 2  # the bulk ones and alice's two facts
    assert len({record["seq"] for record in records}) == len(records)
    assert records[-1]["after"] == {"fact": "fact number 2499"}


def test_an_empty_log_says_what_will_appear(client, db):
    # Built without the services, which may audit an account's creation and its keys.
    newcomer = make_user("newcomer")
    Membership.objects.create(user=newcomer, account=Account.objects.create(name="New"),
                              role=Membership.Role.OWNER)
    client.force_login(newcomer)
    response = client.get("/audit/")
    assert response.context["page"].rows == []
    assert "Nothing recorded yet" in response.content.decode()


def test_a_member_does_not_see_another_holders_solo_events(client, alice, bob, trail):
    client.force_login(alice.user)
    html = client.get("/audit/").content.decode()
    assert "b-secret" not in html and "Bob&#x27;s secret" not in html
    exported = b"".join(client.get("/audit/export.jsonl").streaming_content).decode()
    assert "b-secret" not in exported and "Bob's secret" not in exported
    client.force_login(bob.user)
    assert "b-secret" in client.get("/audit/").content.decode()
    # A member sees only the account-level events they caused; the owner sees all of them.
    bobs = client.get("/audit/", {"memory": "account"}).context["page"].rows
    assert "102" in {row.event.object_id for row in bobs}
    assert {row.event.holder_id for row in bobs} == {bob.user.pk}
    client.force_login(alice.user)
    alices = client.get("/audit/", {"memory": "account"}).context["page"].rows
    assert {"101", "102"} <= {row.event.object_id for row in alices}


def test_another_accounts_events_never_appear(client, alice, charlie, trail):
    Engine(charlie.principal).write(session_id="charlies-run", assume_new=True,
                                    entities=[person("Charlie's client")], facts=[])
    _account_event(charlie, "key.created", "999")
    client.force_login(alice.user)
    html = client.get("/audit/").content.decode()
    assert "charlies-run" not in html and "Charlie" not in html
    exported = b"".join(client.get("/audit/export.csv").streaming_content).decode()
    rows = list(csv.DictReader(io.StringIO(exported)))
    assert rows and all(row["session_id"] != "charlies-run" for row in rows)
    assert all(row["object_id"] != "999" for row in rows)  # Charlie's account event
    # Charlie's key is not even a filter choice in alice's account.
    assert "not one of the choices" in client.get(
        "/audit/", {"actor": f"key:{charlie.key.pk}"}).context["form"].errors["actor"][0]


@pytest.mark.django_db(transaction=True)
def test_verify_shows_success_and_after_tampering_the_break(client, alice, bob, trail):
    client.force_login(bob.user)
    assert client.post("/audit/verify/").status_code == 403  # a member may not
    assert "Verify chain" not in client.get("/audit/").content.decode()
    assert client.get("/audit/verify/").status_code == 405
    client.force_login(alice.user)
    total = AuditChainHead.objects.get(account=alice.account).seq
    done = client.post("/audit/verify/", follow=True)
    assert f"all {total} events are intact" in done.content.decode()
    tampered = AuditEvent.objects.get(account=alice.account, action="fact.superseded")
    with connection.cursor() as cursor:
        cursor.execute("ALTER TABLE memories_auditevent DISABLE TRIGGER USER")
        try:
            cursor.execute("UPDATE memories_auditevent SET before = jsonb_set(before, '{fact}', "
                           "'\"Ada never met Grace\"') WHERE id = %s", [tampered.pk])
        finally:
            cursor.execute("ALTER TABLE memories_auditevent ENABLE TRIGGER USER")
    broken = client.post("/audit/verify/", follow=True).content.decode()
    assert f"breaks at event #{tampered.seq}" in broken


def test_verify_needs_csrf(alice, trail):
    from django.test import Client
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(alice.user)
    assert strict.post("/audit/verify/").status_code == 403


def test_an_erased_event_says_its_text_went_with_its_memory(client, alice, trail):
    client.force_login(alice.user)
    assert client.post("/memories/notes/delete/", {"confirm": "notes"}).status_code == 302
    # Its session id went with the text (chain format 3), so it is found by its action.
    assert not _seqs(client.get("/audit/", {"session": "s-2"}))
    html = client.get("/audit/", {"action": "entity.created"}).content.decode()
    assert "text was erased with its memory" in html and "Linus" not in html
    deleted = client.get("/audit/", {"action": "memory.deleted"})
    assert _actions(deleted) == ["memory.deleted"] and deleted.context["page"].rows[0].account_level


def test_the_page_takes_a_bounded_number_of_queries_however_long_the_log(client, alice, bob):
    client.force_login(alice.user)
    _account_event(bob, "key.created")
    _bulk_events(alice, 10)

    def queries(params: dict) -> int:
        with CaptureQueriesContext(connection) as captured:
            assert client.get("/audit/", params).status_code == 200
        return len(captured)

    filters = {"action": "fact.created", "session": "bulk-3"}
    few, few_filtered = queries({}), queries(filters)
    _bulk_events(alice, 10_000)
    assert AuditEvent.objects.filter(account=alice.account).count() > 10_000
    many, many_filtered = queries({}), queries(filters)
    # 12 for the log (the filter's choices: memories, people, keys, tools, actions, time
    # span; the page and a probe for the other direction), 3 for the nav (the account
    # switcher, the email-confirmation banner, and on the hosted service the usage
    # banner's plan and month's units).
    assert many == few <= 15
    assert many_filtered == few_filtered <= 15
    second_page = client.get("/audit/", {"before": 9000})
    assert len(second_page.context["page"].rows) == 50


def test_owner_sees_every_account_level_event_but_no_solo_event_of_others(alice, bob, trail):
    from memories.catalog.audit_log import visible_events
    owner = Principal(account_id=alice.account.pk, holder_id=alice.user.pk, tool="web")
    seen = visible_events(owner, Membership.Role.OWNER)
    assert not seen.filter(partition__startswith=f"solo:{bob.user.pk}:").exists()
    assert seen.filter(holder_id=bob.user.pk, memory_id__isnull=True).exists()


def test_the_time_filters_read_and_show_times_in_the_viewers_zone(client, alice):
    """The page's zone (web/time_zones.py) is the one typed times are read in: the labels
    and the span of the log say it, where they once said UTC whatever the zone."""
    client.force_login(alice.user)
    client.cookies["tz"] = "Asia/Tokyo"
    page = html.unescape(client.get("/audit/").content.decode())
    assert "From (Asia/Tokyo)" in page and "To (Asia/Tokyo)" in page
    assert re.search(r"The log you can see runs from \d{4}-\d\d-\d\d \d\d:\d\d JST", page)
    assert "UTC" not in page.split("<main")[1].split("</form>")[0]
