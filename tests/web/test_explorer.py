"""The memory explorer: alice searches and browses her account's memory, follows an entity's
edges and their history, an episode's provenance and a cause chain; bob's solo facts stay
his; charlie's objects are not found; bad parameters are field errors; list pages cost the
same number of queries at 10,000 facts as at 60."""

from __future__ import annotations

import base64
import re
import uuid
from datetime import timedelta

import pytest
from django.utils import timezone

from echomem import bulk
from memories.models import Entity, Episode, Fact, Memory
from tests.factories import Engine, fact, person
from web.cause_diagram import NODE_HEIGHT, NODE_WIDTH, diagram


def _write_story(principal, **extra):
    """Ada mentors Grace (twice: the first version is superseded), and an outage chain."""
    engine = Engine(principal)
    first = engine.write(assume_new=True, session_id="s-1", entities=[
        person("Ada"), person("Grace"), {"name": "Disk full", "type": "event"},
        {"name": "Outage", "type": "event"}, {"name": "Refunds", "type": "event"}],
        facts=[fact("Ada", "Grace", "mentors", "Ada mentors Grace in compiler design"),
               fact("Disk full", "Outage", "caused", "The full disk caused the outage",
                    causal_hint="led_to"),
               fact("Outage", "Refunds", "caused", "The outage led to customer refunds",
                    causal_hint="led_to")], **extra)
    second = engine.write(session_id="s-2", entities=[person("Ada"), person("Grace")],
                          facts=[fact("Ada", "Grace", "mentors",
                                      "Ada mentored Grace until she led the team")], **extra)
    engine.index()
    return first, second


def _entity(name: str, memory_name: str = "default") -> Entity:
    return Entity.objects.get(name=name, memory__name=memory_name)


def test_search_ranks_facts_as_query_memory_does_and_says_what_found_each(client, alice):
    _write_story(alice.principal)
    expected = Engine(alice.principal).query("who teaches Grace about compilers", top_k=20)
    client.force_login(alice.user)
    page = client.get("/memories/default/", {"q": "who teaches Grace about compilers"})
    assert page.status_code == 200
    shown = page.context["results"]["facts"]
    assert [f["fact_id"] for f in shown] == [f["fact_id"] for f in expected["facts"]]
    assert shown[0]["fact"] == "Ada mentored Grace until she led the team"
    html = page.content.decode()
    found_by = {"vector": "meaning", "text": "words"}
    assert "found by " + " and ".join(
        f'<span class="badge text-bg-light border">{found_by[how]}</span>'
        for how in shown[0]["matched"]) in html
    assert "Ada mentors Grace in compiler design" not in html  # superseded: only on request
    with_old = client.get("/memories/default/", {"q": "Grace compilers", "superseded": "on"})
    assert "Ada mentors Grace in compiler design" in with_old.content.decode()


def test_search_shows_no_score_that_the_order_could_contradict(client, alice):
    """The order is the fused ranking's; the cosine query_memory also returns does not follow
    it (a fact the words found outranks a closer one by meaning), so the page shows none."""
    engine = Engine(alice.principal)
    engine.write(assume_new=True, entities=[
        person("Ada"), person("Grace"), {"name": "Kestrel", "type": "project"},
        {"name": "Disk", "type": "thing"}, {"name": "Outage", "type": "event"}], facts=[
        fact("Ada", "Grace", "mentors", "Ada mentors Grace in compiler design"),
        fact("Grace", "Kestrel", "leads", "Grace leads project Kestrel"),
        fact("Ada", "Kestrel", "funds", "Ada funds Kestrel through the lab"),
        fact("Disk", "Outage", "caused", "The full disk caused the outage on Tuesday"),
        fact("Grace", "Outage", "fixed", "Grace fixed the outage quickly"),
        fact("Ada", "Disk", "bought", "Ada bought a bigger disk for the build server")])
    engine.index()
    question = "disk outage"
    ranked = engine.query(question, top_k=20)["facts"]
    cosines = [f["score"] for f in ranked]
    # What the old page showed beside the ranks: not in their order.
    assert None in cosines or cosines != sorted(cosines, reverse=True)
    client.force_login(alice.user)
    html = client.get("/memories/default/", {"q": question}).content.decode()
    results = html.split('id="results-heading"', 1)[1]
    assert [f["fact"] for f in ranked] == re.findall(r'<div class="fw-medium">([^<]+)</div>',
                                                     results)
    for cosine in filter(None, cosines):
        assert f"{cosine:.4f}" not in results and f"{cosine:.3f}" not in results
    assert "score" not in results.lower()


def test_live_and_superseded_lists_toggle_and_link_entities_and_episodes(client, alice):
    _, second = _write_story(alice.principal)
    client.force_login(alice.user)
    live = client.get("/memories/default/").content.decode()
    assert "Ada mentored Grace until she led the team" in live
    assert "Ada mentors Grace in compiler design" not in live
    assert f"/memories/default/entities/{_entity('Ada').pk}/" in live
    assert f"/memories/default/episodes/{second['episode_id']}/" in live
    old = client.get("/memories/default/", {"superseded": "on"}).content.decode()
    assert "Ada mentors Grace in compiler design" in old
    assert "The full disk caused the outage" not in old


def test_another_holders_solo_facts_are_invisible_and_ones_own_are_a_partition(client, alice,
                                                                               bob):
    Engine(bob.principal).write(scope="solo", assume_new=True,
                                entities=[person("Bob's secret"), person("Payroll")],
                                facts=[fact("Bob's secret", "Payroll", "plans",
                                            "Bob plans a payroll change")])
    Engine(alice.principal).write(scope="solo", assume_new=True,
                                  entities=[person("Alice draft"), person("Roadmap")],
                                  facts=[fact("Alice draft", "Roadmap", "shapes",
                                              "The draft by Alice shapes the roadmap")])
    secret = _entity("Bob's secret")
    client.force_login(alice.user)
    page = client.get("/memories/default/")
    assert [c.value for c in page.context["form"].scopes.values()] == ["shared",
                                                                       "solo:claude-code"]
    assert "Bob plans" not in page.content.decode()
    mine = client.get("/memories/default/", {"scope": "solo:claude-code"}).content.decode()
    assert "The draft by Alice shapes the roadmap" in mine and "Bob plans" not in mine
    found = client.get("/memories/default/", {"q": "roadmap", "scope": "solo:claude-code"})
    assert [f["fact"] for f in found.context["results"]["facts"]] == [
        "The draft by Alice shapes the roadmap"]
    shared = client.get("/memories/default/", {"q": "payroll change"})
    assert shared.context["results"]["facts"] == []
    refused = client.get("/memories/default/", {"scope": f"solo:{bob.key.tool}"})
    assert "not a scope you can read" in refused.context["form"].errors["scope"][0]
    assert "Bob plans" not in refused.content.decode()
    assert client.get(f"/memories/default/entities/{secret.pk}/").status_code == 404
    assert client.get(f"/memories/default/episodes/{secret.episode_id}/").status_code == 404
    traced = client.get("/memories/default/cause/", {"subject": "Bob's secret"})
    assert traced.context["reply"]["empty_reason"] == "no_anchor"
    client.force_login(bob.user)
    assert client.get(f"/memories/default/entities/{secret.pk}/").status_code == 200


def test_entity_page_shows_its_facts_as_a_timeline_with_each_edges_history(client, alice):
    _write_story(alice.principal)
    client.force_login(alice.user)
    ada = client.get(f"/memories/default/entities/{_entity('Ada').pk}/")
    timeline = ada.context["detail"]["timeline"]
    assert [f["fact"] for f in timeline] == ["Ada mentored Grace until she led the team"]
    assert timeline[0]["outgoing"] and timeline[0]["happened_by"] == "learned"
    history = timeline[0]["history"]
    assert history["versions"] == 1
    old = history["earlier"][0]
    assert old["fact"] == "Ada mentors Grace in compiler design"
    assert old["superseded_at"] is not None and old["session_id"] == "s-1"
    assert old["replaced_by_fact"] == "Ada mentored Grace until she led the team"
    html = ada.content.decode()
    assert "1 earlier version" in html and 'class="timeline' in html
    grace = client.get(f"/memories/default/entities/{_entity('Grace').pk}/").context["detail"]
    assert [(f["fact"], f["outgoing"]) for f in grace["timeline"]] == [
        ("Ada mentored Grace until she led the team", False)]


def test_episode_page_shows_provenance_and_everything_the_episode_wrote(client, alice):
    first, second = _write_story(alice.principal)
    client.force_login(alice.user)
    page = client.get(f"/memories/default/episodes/{first['episode_id']}/")
    detail = page.context["detail"]
    assert detail["session_id"] == "s-1" and detail["scope"] == "shared"
    assert detail["written_by"] == {"tool": "claude-code", "holder": "alice",
                                    "key": f"laptop (em_{alice.key.prefix}_…)"}
    assert [f["fact"] for f in detail["facts"]] == [
        "Ada mentors Grace in compiler design", "The full disk caused the outage",
        "The outage led to customer refunds"]
    assert [f["live"] for f in detail["facts"]] == [False, True, True]
    assert {e["name"] for e in detail["entities_created"]} == {
        "Ada", "Grace", "Disk full", "Outage", "Refunds"}
    later = client.get(f"/memories/default/episodes/{second['episode_id']}/").context["detail"]
    assert later["entities_created"] == []
    assert [f["fact"] for f in later["replaced"]] == ["Ada mentors Grace in compiler design"]
    assert "laptop (em_" in page.content.decode()


def test_cause_view_draws_the_chain_as_svg_beside_a_list(client, alice):
    _write_story(alice.principal)
    client.force_login(alice.user)
    page = client.get("/memories/default/cause/", {"subject": "Outage", "direction": "both"})
    html = page.content.decode()
    svg = html[html.index("<svg"):html.index("</svg>")]
    for name in ("Disk full", "Outage", "Refunds"):
        assert f">{name}</text>" in svg
    assert svg.count("<line ") == 2 and svg.count('marker-end="url(#cause-arrow)"') == 2
    nodes = {n.name: n for n in page.context["diagram"].nodes}
    assert nodes["Disk full"].x < nodes["Outage"].x < nodes["Refunds"].x  # cause left of effect
    assert nodes["Outage"].anchor
    assert "Disk full → Outage: The full disk caused the outage" in html
    # Drawn on the server: scripts only from our static files (no inline one), the focus
    # script among them (full labels on focus).
    scripts = re.findall(r"<script[^>]*>", html)
    inline = [tag for tag in scripts
              if not re.fullmatch(r'<script src="/static/[\w./-]+\.js"( defer)?>', tag)]
    assert inline == []
    assert '<script src="/static/web/cause_view.js" defer>' in scripts


@pytest.mark.parametrize("params, field, says", [
    ({"subject": ""}, "subject", "required"),
    ({"subject": "Outage", "max_hops": "9"}, "max_hops", "less than or equal to 6"),
    ({"subject": "Outage", "max_hops": "three"}, "max_hops", "whole number"),
    ({"subject": "Outage", "direction": "sideways"}, "direction", "valid choice"),
    ({"subject": "Outage", "scope": "solo:nobody"}, "scope", "not a scope"),
    ({"subject": "x" * 501}, "subject", "at most 500"),
    ({"subject": "Out\x00age"}, "subject", "Null characters"),
])
def test_bad_cause_parameters_are_field_errors(client, alice, params, field, says):
    client.force_login(alice.user)
    page = client.get("/memories/default/cause/", params)
    assert page.status_code == 200
    assert says in " ".join(page.context["form"].errors[field])
    assert "reply" not in page.context


@pytest.mark.parametrize("params, field, says", [
    ({"after": "not-a-cursor"}, "after", "not one the server made"),
    ({"q": "x" * 2001}, "q", "at most 2000"),
    ({"scope": "nonsense"}, "scope", "not a scope"),
])
def test_bad_list_and_search_parameters_are_field_errors(client, alice, params, field, says):
    client.force_login(alice.user)
    page = client.get("/memories/default/", params)
    assert page.status_code == 200
    assert says in " ".join(page.context["form"].errors[field])


def test_bad_page_links_on_entity_and_episode_pages_say_so_and_show_the_first_page(client,
                                                                                   alice):
    first, _ = _write_story(alice.principal)
    client.force_login(alice.user)
    entity = client.get(f"/memories/default/entities/{_entity('Ada').pk}/", {"after": "zz"})
    assert "not one the server made" in entity.context["error"]
    assert entity.context["detail"]["timeline"]
    episode = client.get(f"/memories/default/episodes/{first['episode_id']}/", {"after": "-1"})
    assert "after must be a fact position" in episode.context["error"]
    assert len(episode.context["detail"]["facts"]) == 3


def test_another_accounts_entity_or_episode_in_ones_own_memory_is_not_found(client, alice,
                                                                          charlie):
    _write_story(charlie.principal)
    theirs = Entity.objects.filter(memory__account=charlie.account).first()
    client.force_login(alice.user)
    assert client.get(f"/memories/default/entities/{theirs.pk}/").status_code == 404
    assert client.get(f"/memories/default/episodes/{theirs.episode_id}/").status_code == 404
    assert client.get(f"/memories/default/entities/{uuid.uuid4()}/").status_code == 404


def test_empty_memory_says_how_to_fill_it_and_dashboard_links_the_explorer(client, alice):
    client.force_login(alice.user)
    empty = client.get("/memories/default/").content.decode()
    assert "No facts yet" in empty and "/dashboard/#connect-heading" in empty
    assert 'href="/memories/default/"' in client.get("/dashboard/").content.decode()
    cause = client.get("/memories/default/cause/", {"subject": "Nothing"})
    assert "nothing to trace from" in cause.content.decode()


# ---- Query counts: 10,000 facts cost what 60 do -------------------------------------------

def _bulk_memory(account, name: str, facts: int, superseded: int) -> dict[str, object]:
    """`facts` live facts from 100 entities into one hub (so the hub has `facts` edges in),
    in episodes of 500, plus `superseded` earlier versions of the first edges; no vectors."""
    memory = Memory.objects.create(account=account, name=name)
    now = timezone.now()
    sources = [uuid.uuid4() for _ in range(100)]
    hub = uuid.uuid4()
    episodes = [uuid.uuid4() for _ in range(0, facts, 500)]
    Episode.objects.bulk_create(Episode(id=e, memory=memory, partition="shared", tool="bulk")
                                for e in episodes)
    bulk.execute(*bulk.insert_statement(Entity, [
        {"id": pk, "memory_id": memory.pk, "partition": "shared", "name": label,
         "normalized_name": label, "initials": "", "type": "thing", "episode_id": episodes[0],
         "created_at": now}
        for pk, label in [(hub, "hub"), *((s, f"source {i}") for i, s in enumerate(sources))]
    ]))

    def rows(count, at, offset=0):
        return [{"id": uuid.uuid4(), "memory_id": memory.pk, "partition": "shared",
                 "source_id": sources[n % 100], "target_id": hub, "relation_type": f"rel{n}",
                 "fact": f"fact number {n}", "confidence": "extracted", "session_id": "",
                 "project": "",
                 "episode_id": episodes[n // 500], "position": n % 500,
                 "written_by_tool": "bulk", "created_at": at, "search_text": f"fact number {n}"}
                for n in range(offset, offset + count)]

    old = rows(superseded, now - timedelta(days=1))
    live = rows(facts, now)
    # The old versions go first and are superseded before their successors take the key
    # (the successor ids are known; the foreign key is checked at commit).
    if old:
        bulk.execute(*bulk.insert_statement(Fact, old))
        bulk.execute("UPDATE memories_fact f SET superseded_at = %s, superseded_by_id = v.new "
                     "FROM unnest(%s::uuid[], %s::uuid[]) AS v(old, new) WHERE f.id = v.old",
                     [now, [r["id"] for r in old], [r["id"] for r in live[:superseded]]])
    bulk.execute(*bulk.insert_statement(Fact, live))
    second_page = Fact.objects.filter(memory=memory, superseded_at__isnull=True).count() > 50
    return {"name": name, "hub": hub, "episode": episodes[-1], "paginated": second_page}


def _list_pages(client, built) -> list[str]:
    base = f"/memories/{built['name']}/"
    first = client.get(base)
    cursor = first.context["page"].next_cursor
    return [base, f"{base}?after={cursor}", f"{base}?superseded=on",
            f"{base}entities/{built['hub']}/", f"{base}episodes/{built['episode']}/",
            f"{base}entities/{built['hub']}/?after="
            + client.get(f"{base}entities/{built['hub']}/").context["detail"]["timeline_next"]]


def test_every_list_page_costs_the_same_queries_at_10000_facts_as_at_60(
        client, alice, django_assert_num_queries):
    small = _bulk_memory(alice.account, "small", facts=60, superseded=10)
    big = _bulk_memory(alice.account, "big", facts=10_000, superseded=2_000)
    client.force_login(alice.user)
    for small_path, big_path in zip(_list_pages(client, small), _list_pages(client, big),
                                    strict=True):
        # Session, user, membership, memory; then a list reads the partitions and one page;
        # an entity page the entity, its timeline's page (the ids, then those facts) and
        # their histories; an episode page the episode, its facts, what they replaced and
        # its entities. Three more for the nav: the account switcher, the
        # email-confirmation banner and (hosted, as here) the usage banner's plan and
        # month's units.
        expected = 9 if "/entities/" not in small_path and "/episodes/" not in small_path else 12
        with django_assert_num_queries(expected):
            small_page = client.get(small_path)
        with django_assert_num_queries(expected):
            big_page = client.get(big_path)
        assert small_page.status_code == big_page.status_code == 200, big_path
    first = client.get("/memories/small/").context["page"]
    rest = client.get("/memories/small/", {"after": first.next_cursor}).context["page"]
    seen = [f["fact_id"] for f in first.facts + rest.facts]
    assert len(seen) == len(set(seen)) == 60 and rest.next_cursor is None
    hub = client.get(f"/memories/big/entities/{big['hub']}/").context["detail"]
    assert len(hub["timeline"]) == 50
    assert sum(f["history"]["versions"] for f in hub["timeline"]) >= 8  # n < 2000 were rewritten
    listed = client.get("/memories/big/").content.decode()
    assert len(re.findall(r'<li class="list-group-item">', listed)) == 50
    assert "Next page" in listed


def test_cause_diagram_puts_each_entity_once_in_its_nearest_column_without_overlaps():
    def link(cause, effect, n):
        return {"fact_id": str(n), "cause": cause, "effect": effect, "relation_type": "caused",
                "fact": f"{cause} caused {effect}"}

    reply = {"subject": "Outage", "anchors": [{"name": "Outage"}],
             "causes": [[link("Disk full", "Outage", 1), link("Log flood", "Disk full", 2)],
                        [link("Bad deploy", "Outage", 3)],
                        [link("Disk full", "Outage", 1), link("Cron job", "Disk full", 4)]],
             "effects": [[link("Outage", "Refunds", 5)]]}
    drawn = diagram(reply)
    columns = {n.name: n.column for n in drawn.nodes}
    assert columns == {"Outage": 0, "Disk full": -1, "Bad deploy": -1, "Log flood": -2,
                       "Cron job": -2, "Refunds": 1}
    assert len(drawn.arrows) == 5  # "Disk full -> Outage" is one fact, drawn once
    boxes = [(n.x, n.y) for n in drawn.nodes]
    assert len(set(boxes)) == len(boxes)
    assert all(n.x >= 0 and n.x + NODE_WIDTH <= drawn.width and n.y + NODE_HEIGHT <= drawn.height
               for n in drawn.nodes)
    assert all(a.x1 < a.x2 for a in drawn.arrows)  # every arrow runs from cause to effect


def test_an_episodes_facts_are_paged_in_the_order_written(client, alice):
    built = _bulk_memory(alice.account, "one-episode", facts=500, superseded=0)
    client.force_login(alice.user)
    path, positions, after = f"/memories/one-episode/episodes/{built['episode']}/", [], ""
    while True:
        detail = client.get(path, {"after": after} if after != "" else {}).context["detail"]
        positions += [int(f["fact"].removeprefix("fact number ")) for f in detail["facts"]]
        if detail["facts_next"] is None:
            break
        after = detail["facts_next"]
    assert positions == list(range(500))


@pytest.mark.parametrize("raw", [
    "9999-12-31T23:59:59+00:00|99999999999999999999999|00000000-0000-0000-0000-000000000000",
    "2026-01-01T00:00:00|-5|00000000-0000-0000-0000-000000000000",
    "0001-01-01T00:00:00+14:00|0|00000000-0000-0000-0000-000000000000",
    "yesterday|1|2", "a|b", "\x00|\x00|\x00",
])
def test_crafted_page_links_never_fail_the_server(client, alice, raw):
    _write_story(alice.principal)
    cursor = base64.urlsafe_b64encode(raw.encode()).decode()
    client.force_login(alice.user)
    for path, params in [("/memories/default/", {"after": cursor}),
                         ("/memories/default/", {"after": cursor, "superseded": "on"}),
                         (f"/memories/default/entities/{_entity('Ada').pk}/",
                          {"after": cursor})]:
        assert client.get(path, params).status_code == 200
