"""The audit log page at scale: server time of each filter, first and deep page, and what
the filter indexes cost a write.

    .venv/bin/python bench/audit_log.py [--events 1000000] [--repeats 20] [--writes 1000]
                                        [--plans FILE]

One account gets `--events` audit events, seeded by one INSERT ... SELECT over
generate_series (a year of events: five people, twenty keys, three connected apps, the
dashboard, five memories, solo and shared partitions, sessions of 200 events; one key
retired after the first 2% of the year, so its events all sit at the old end). Then:
- writes: `record()` appends `--writes` one-event changes (each its own transaction, as a
  write's audit event is) with only the indexes main had, then again once the filter
  indexes of audit migration 0002 are built: events per second each way, and the build time;
  and the real write path, `write_episode` as an agent calls it (`--episodes` episodes of
  two new entities and two facts each, five audit events), each way in the same rounds;
- pages: GET /audit/ with each filter through Django's test client (the whole view:
  choices, the page, the older/newer checks, the template), as the owner and as a member,
  on the first page and on a deep one (the page whose cursor is 90% of the way down the
  matching events): p50 / p95 ms over `--repeats`;
- `--plans FILE`: EXPLAIN (ANALYZE, BUFFERS) of each filter's page query, first and deep.
"""

from __future__ import annotations

import argparse
import logging
import statistics
import sys
import time
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.engine_perf import percentile
from bench.setup import bench_principal, fresh_instance

PEOPLE, KEYS, APPS, MEMORIES, SESSION_EVENTS = 5, 20, 3, 5, 200
GRAPH_ACTIONS = (["fact.created"] * 5 + ["entity.created"] * 2
                 + ["fact.superseded", "note.created", "recall_save.recorded"])
ACCOUNT_ACTIONS = ["key.created", "key.revoked", "member.added", "memory.created"]
RARE_ACTION = "memory.forgotten"  # one graph event in a thousand


def setup_account(principal, account):
    """The people, keys and memories the seeded events name."""
    from django.contrib.auth import get_user_model

    from accounts.models import Membership
    from accounts.services import api_key_create
    from memories.graph.services import memory_create

    owner = get_user_model().objects.get(pk=principal.holder_id)
    people = [owner]
    for n in range(1, PEOPLE):
        user = get_user_model().objects.create_user(username=f"person{n}",
                                                    email=f"person{n}@example.com")
        Membership.objects.create(user=user, account=account, role=Membership.Role.MEMBER)
        people.append(user)
    keys = [api_key_create(account=account, holder=people[n % PEOPLE], name=f"key {n}",
                           tool=["claude-code", "cursor", "codex", "bench"][n % 4])[0]
            for n in range(KEYS)]
    memories = [memory_create(account_id=account.pk, name=f"memory-{n}")
                for n in range(MEMORIES)]
    return people, keys, memories


SEED = """
INSERT INTO memories_auditevent (account_id, seq, memory_id, memory_name, partition, action,
    object_id, session_id, holder_id, tool, key_id, before, after, created_at, prev_hash,
    hash, format, salt, payload_digest)
SELECT %(account)s, %(offset)s + g,
    CASE WHEN account_level THEN NULL ELSE mem END,
    CASE WHEN account_level THEN '' ELSE 'memory-' || mem_n END,
    CASE WHEN account_level THEN '' WHEN r3 < 12 THEN 'solo:' || holder || ':' || tool
         ELSE 'shared' END,
    CASE WHEN account_level THEN (%(account_actions)s::text[])[1 + r4 %% 4]
         WHEN r5 = 0 THEN %(rare)s
         ELSE (%(graph_actions)s::text[])[1 + r4 %% 10] END,
    g::text, session, holder, tool, key, NULL,
    jsonb_build_object('fact', 'fact number ' || g),
    %(start)s::timestamptz + g * %(step)s * interval '1 second',
    md5(g::text) || md5((g + 1)::text), md5((g + 1)::text) || md5(g::text), 3,
    left(md5(g::text), 32), md5(g::text) || md5((g + 2)::text)
FROM (
    SELECT g, account_level, r3, r4, r5, mem_n, (%(memories)s::bigint[])[1 + mem_n] AS mem,
        CASE WHEN door < 80 THEN (%(key_holders)s::bigint[])[1 + key_n]
             ELSE (%(people)s::bigint[])[1 + r6 %% %(people_n)s] END AS holder,
        CASE WHEN door < 80 THEN (%(key_tools)s::text[])[1 + key_n]
             WHEN door < 90 THEN 'web' ELSE 'oauth:app-' || (r6 %% %(apps)s) END AS tool,
        CASE WHEN door < 80 THEN (%(keys)s::bigint[])[1 + key_n] END AS key,
        CASE WHEN door BETWEEN 80 AND 89 THEN ''
             ELSE 'run-' || lpad((g / %(session)s)::text, 5, '0') END AS session
    FROM (
        SELECT g, r1 %% 100 < 3 AS account_level, r2 %% 100 AS door, r3 %% 100 AS r3,
            r4, r5 %% 1000 AS r5, r6,
            (ARRAY[0, 0, 0, 0, 1, 1, 2, 2, 3, 4])[1 + r1 %% 10] AS mem_n,
            -- key 0 retires after the first 2%% of the year; its share goes to the others
            CASE WHEN r6 %% %(keys_n)s = 0 AND g > %(retired_after)s
                 THEN 1 + r6 %% (%(keys_n)s - 1) ELSE r6 %% %(keys_n)s END AS key_n
        FROM (
            SELECT g, abs(hashint8(g)) AS r1, abs(hashint8(g + 11)) AS r2,
                abs(hashint8(g + 23)) AS r3, abs(hashint8(g + 37)) AS r4,
                abs(hashint8(g + 51)) AS r5, abs(hashint8(g + 67)) AS r6
            FROM generate_series(%(first)s::bigint, %(last)s::bigint) AS g) AS raw) AS picked
) AS rows
"""


def seed(account, people, keys, memories, events: int, start, step: float) -> float:
    from django.db import connection, transaction

    params = {
        "account": account.pk, "account_actions": ACCOUNT_ACTIONS, "rare": RARE_ACTION,
        "graph_actions": GRAPH_ACTIONS, "start": start, "step": step,
        "memories": [m.pk for m in memories], "people": [p.pk for p in people],
        "people_n": PEOPLE, "apps": APPS, "session": SESSION_EVENTS, "keys_n": KEYS,
        "keys": [k.pk for k in keys], "key_holders": [k.holder_id for k in keys],
        "key_tools": [k.tool for k in keys], "retired_after": events // 50,
    }
    from audit.models import AuditChainHead

    # After the events the setup recorded (keys and memories created).
    head = AuditChainHead.objects.get(account=account).seq
    params["offset"] = head
    started = time.perf_counter()
    chunk = 250_000
    for first in range(1, events + 1, chunk):
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(SEED, {**params, "first": first,
                                  "last": min(events, first + chunk - 1)})
    with connection.cursor() as cursor:
        cursor.execute("INSERT INTO memories_auditchainhead (account_id, seq, hash) "
                       "VALUES (%s, %s, md5('x') || md5('y')) ON CONFLICT (account_id) DO "
                       "UPDATE SET seq = EXCLUDED.seq, hash = EXCLUDED.hash",
                       [account.pk, head + events])
        cursor.execute("ANALYZE memories_auditevent")
    return time.perf_counter() - started


def filter_indexes() -> list:
    from audit.models import AuditEvent

    return [index for index in AuditEvent._meta.indexes
            if index.name not in ("audit_by_partition", "audit_by_time")]


def drop_filter_indexes() -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        for index in filter_indexes():
            cursor.execute(f'DROP INDEX IF EXISTS "{index.name}"')


def build_filter_indexes() -> float:
    """CREATE INDEX (not CONCURRENTLY: nothing else writes here), then ANALYZE."""
    from django.db import connection

    from audit.models import AuditEvent

    started = time.perf_counter()
    with connection.schema_editor(atomic=False) as editor:
        for index in filter_indexes():
            editor.add_index(AuditEvent, index)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memories_auditevent")
    return time.perf_counter() - started


def write_rate(principal, memory, count: int) -> float:
    """Events per second through record(), one event per transaction."""
    from django.db import transaction

    from audit.chain import Change, record

    started = time.perf_counter()
    for n in range(count):
        with transaction.atomic():
            record(actor=principal, memory=memory, partition="shared",
                   session_id=f"write-{n // 20}",
                   changes=[Change("fact.created", str(n), after={"fact": f"written {n}"})])
    return count / (time.perf_counter() - started)


def episode_rate(principal, memory, count: int, round_: int, indexed: bool) -> float:
    """Facts per second through write_episode, as an agent's call runs it (validation,
    entity resolution, the rows, the audit chain, the ledger), one episode per call."""
    from tools.calling import run_validated
    from tools.registry import TOOLS

    started = time.perf_counter()
    for n in range(count):
        tag = f"{round_}-{int(indexed)}-{n}"
        reply = run_validated(principal, TOOLS["write_episode"], {
            "scope": "shared", "memory": memory.name, "session_id": f"episodes-{tag}",
            "assume_new": True,
            "entities": [{"name": f"Service {tag}", "type": "service"},
                         {"name": f"Team {tag}", "type": "team"}],
            "facts": [{"source": f"Team {tag}", "target": f"Service {tag}",
                       "relation_type": "owns", "fact": f"Team {tag} owns service {tag}",
                       "confidence": "extracted"},
                      {"source": f"Service {tag}", "target": f"Team {tag}",
                       "relation_type": "pages", "fact": f"Service {tag} pages team {tag}",
                       "confidence": "extracted"}]})
        assert reply["stored"], reply
    return 2 * count / (time.perf_counter() - started)


def filters(people, keys, memories, start, step, events: int) -> dict[str, dict[str, str]]:
    """Each filter the page offers, with a value of a typical selectivity."""
    def at(fraction: float) -> str:
        return f"{start + timedelta(seconds=events * fraction * step):%Y-%m-%dT%H:%M}"

    session = f"run-{events // 2 // SESSION_EVENTS:05d}"
    return {
        "none": {},
        "person": {"actor": f"user:{people[2].pk}"},
        "key": {"actor": f"key:{keys[3].pk}"},
        "key (retired early)": {"actor": f"key:{keys[0].pk}"},
        "app": {"actor": "app:oauth:app-1"},
        "tool": {"tool": "web"},
        "action (common)": {"action": "fact.created"},
        "action (rare)": {"action": RARE_ACTION},
        "memory": {"memory": str(memories[4].pk)},
        "account-level": {"memory": "account"},
        "a month (old end)": {"since": at(1 / 12), "until": at(2 / 12)},
        "a day": {"since": at(0.5), "until": at(0.5 + 1 / 365)},
        "session (exact)": {"session": session},
        "session (prefix)": {"session": session[:-1]},
        "key + a month": {"actor": f"key:{keys[3].pk}", "since": at(0.4), "until": at(0.5)},
    }


def deep_cursor(form_class, principal, role, params) -> int | None:
    """The seq 90% of the way down the filter's matching events: a deep page's cursor."""
    from memories.catalog.audit_log import filter_choices, filtered_events

    form = form_class(params, choices=filter_choices(principal, role))
    assert form.is_valid(), form.errors
    events = filtered_events(principal, role, form.audit_filter())
    count = events.count()
    if count < 200:
        return None
    return events.order_by("-seq").values_list("seq", flat=True)[int(count * 0.9)]


def page_query(form_class, principal, role, params, before):
    from memories.catalog.audit_log import PAGE_SIZE, filter_choices, filtered_events

    form = form_class(params, choices=filter_choices(principal, role))
    assert form.is_valid(), form.errors
    events = filtered_events(principal, role, form.audit_filter())
    if before is not None:
        events = events.filter(seq__lt=before)
    return events.order_by("-seq")[:PAGE_SIZE]


def prepare(agent, account, people, keys, memories, options, start, step) -> None:
    """Seed the events, then measure writes without and with the filter indexes."""
    from accounts.principal import principal_for_member

    drop_filter_indexes()  # the box as main left it: what the writes are compared with
    seeded = seed(account, people, keys, memories, options.events, start, step)
    print(f"seeded {options.events:,} events in {seeded:.1f}s")
    owner, _ = principal_for_member(people[0], account.pk)
    # Alternating rounds without and with the indexes (dropped and built again between
    # them): a shared machine's load drifts, and each way sees the same drift.
    rates: dict[bool, list[float]] = {False: [], True: []}
    episodes: dict[bool, list[float]] = {False: [], True: []}
    builds = []
    episode_rate(agent, memories[0], 3, -1, False)  # the first calls load what writes need
    for round_ in range(options.write_rounds):
        if round_:
            drop_filter_indexes()
        rates[False].append(write_rate(owner, memories[0], options.writes))
        episodes[False].append(episode_rate(agent, memories[0], options.episodes, round_, False))
        builds.append(build_filter_indexes())
        rates[True].append(write_rate(owner, memories[0], options.writes))
        episodes[True].append(episode_rate(agent, memories[0], options.episodes, round_, True))
    print(f"filter indexes built in {statistics.median(builds):.1f}s (median of "
          f"{len(builds)} builds)")
    report(f"record(), one event per transaction, median of {options.write_rounds} rounds of "
           f"{options.writes}", "events/s", rates)
    report(f"write_episode, two facts per call, median of {options.write_rounds} rounds of "
           f"{options.episodes}", "facts/s", episodes)


def report(what: str, unit: str, rates: dict[bool, list[float]]) -> None:
    """Medians without and with the filter indexes, their ratio, and every round."""
    without, with_ = (statistics.median(rates[way]) for way in (False, True))
    print(f"{what}: without the filter indexes {without:,.0f} {unit}   with them "
          f"{with_:,.0f} {unit}   ({with_ / without:.2f}x)")
    print("  rounds without: " + ", ".join(f"{r:,.0f}" for r in rates[False])
          + "   with: " + ", ".join(f"{r:,.0f}" for r in rates[True]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--writes", type=int, default=1000, help="events per write round")
    parser.add_argument("--write-rounds", type=int, default=3)
    parser.add_argument("--episodes", type=int, default=300,
                        help="write_episode calls per write round")
    parser.add_argument("--plans", help="write each page query's EXPLAIN here")
    parser.add_argument("--keep", help="a home dir to keep the box in (seeded once, then "
                                       "reused: the pages measured again)")
    parser.add_argument("--slowest", action="store_true",
                        help="also print each request's slowest SQL statement")
    options = parser.parse_args()

    fresh_instance(indexing="manual", keep=options.keep)
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext, setup_test_environment
    from django.utils import timezone

    from accounts.models import Account, ApiKey, Membership
    from accounts.principal import principal_for_member
    from audit.models import AuditEvent
    from memories.catalog.audit_log import filter_choices, filtered_events
    from memories.models import Memory
    from web.audit_filter import AuditFilterForm

    # The test client's host allowed, mail kept in memory, and each response's context
    # captured (whether the page held rows); the request log line per GET left out.
    setup_test_environment()
    logging.getLogger("echomem.requests").setLevel(logging.WARNING)
    step = 365 * 86400 / options.events
    if Account.objects.exists():  # a kept box, seeded by an earlier run: pages only
        account = Account.objects.get()
        people = list(get_user_model().objects.filter(memberships__account=account)
                      .order_by("pk"))
        keys = list(ApiKey.objects.filter(account=account).exclude(name="bench")
                    .order_by("pk"))
        memories = list(Memory.objects.filter(account=account, name__startswith="memory-")
                        .order_by("name"))
        start = (AuditEvent.objects.filter(account=account).order_by("seq")
                 .values_list("created_at", flat=True)[len(keys) + MEMORIES + 5])
        print(f"kept box: {AuditEvent.objects.filter(account=account).count():,} events")
    else:
        principal, account = bench_principal()
        people, keys, memories = setup_account(principal, account)
        start = timezone.now() - timedelta(days=366)
        prepare(principal, account, people, keys, memories, options, start, step)

    views = [("owner", people[0], Membership.Role.OWNER),
             ("member", people[1], Membership.Role.MEMBER)]
    plans = []
    print("\n| who | filter | matching | first page p50 / p95 ms | deep page p50 / p95 ms |")
    print("|---|---|---:|---:|---:|")
    for who, user, role in views:
        client = Client()
        client.force_login(user)
        me, _ = principal_for_member(user, account.pk)
        wanted = filters(people, keys, memories, start, step, options.events)
        if who == "member":
            wanted = {name: wanted[name] for name in ("none", "account-level", "person")}
        for name, params in wanted.items():
            form = AuditFilterForm(params, choices=filter_choices(me, role))
            assert form.is_valid(), (name, form.errors)
            matching = filtered_events(me, role, form.audit_filter()).count()
            cursor = deep_cursor(AuditFilterForm, me, role, params)
            cells = []
            for before in (None, cursor):
                if before is None and cells:
                    cells.append("(fewer than 4 pages)")
                    continue
                query = {**params, **({"before": before} if before else {})}
                timings = []
                for _ in range(options.repeats + 1):
                    started = time.perf_counter()
                    response = client.get("/audit/", query)
                    timings.append((time.perf_counter() - started) * 1000)
                    assert response.status_code == 200 and response.context["page"] is not None
                timings = timings[1:]  # the first warms the caches
                if options.slowest:
                    with CaptureQueriesContext(connection) as captured:
                        client.get("/audit/", query)
                    slow = max(captured.captured_queries, key=lambda q: float(q["time"]))
                    total = sum(float(q["time"]) for q in captured.captured_queries)
                    print(f"  {name} {'deep' if before else 'first'}: {len(captured)} queries "
                          f"{total * 1000:.0f} ms, slowest {float(slow['time']) * 1000:.0f} ms: "
                          f"{slow['sql'][:300]}")
                cells.append(f"{statistics.median(timings):.0f} / "
                             f"**{percentile(timings, 95):.0f}**")
                if options.plans:
                    plan = page_query(AuditFilterForm, me, role, params, before).explain(
                        analyze=True, buffers=True)
                    page = "deep page" if before else "first page"
                    plans.append(f"### {who}, {name}, {page}\n\n{query}\n\n```\n{plan}\n```\n")
            print(f"| {who} | {name} | {matching:,} | {cells[0]} | {cells[1]} |")
    if options.plans:
        Path(options.plans).write_text("\n".join(plans))
        print(f"\nplans written to {options.plans}")


if __name__ == "__main__":
    main()
