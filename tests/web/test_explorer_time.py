"""The explorer in time: each fact's two clocks in the viewer's time zone (browser cookie,
overridden by the person's setting), the "as of" list agreeing with query_memory's as_of
and valid_as_of on the same data, an edge's history, and the cause view's
search-as-you-type; each new route walked with hostile input."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest

from memories.models import Entity, Fact, Memory
from tests.factories import Engine, fact, person
from tools import query_memory
from tools.parsing import parse


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def _learned(reply: dict, when: str) -> None:
    """Move what one write recorded to a known moment (the engine stamps `now`)."""
    Fact.objects.filter(episode_id=reply["episode_id"]).update(created_at=at(when))


def _write_history(principal) -> dict[str, str]:
    """Ada's job rewritten once (known learned, replaced and valid times), a fact true
    2010-2020, one without valid time, and a later one."""
    engine = Engine(principal)
    first = engine.write(assume_new=True, entities=[
        person("Ada"), person("Bob"), person("Carol"), {"name": "Acme", "type": "org"},
        {"name": "Oslo", "type": "place"}, {"name": "Tea", "type": "thing"}], facts=[
        fact("Ada", "Acme", "works_at", "Ada works at Acme", valid_at="2024-01-01T00:00:00Z"),
        fact("Bob", "Oslo", "lived_in", "Bob lived in Oslo", valid_at="2010-01-01T00:00:00Z",
             invalid_at="2020-01-01T00:00:00Z"),
        fact("Carol", "Tea", "likes", "Carol likes tea")])
    _learned(first, "2026-01-05T12:00:00")
    second = engine.write(entities=[person("Ada"), {"name": "Acme", "type": "org"}], facts=[
        fact("Ada", "Acme", "works_at", "Ada works at Acme as CTO",
             valid_at="2026-02-01T00:00:00Z")])
    _learned(second, "2026-02-10T09:30:00")
    Fact.objects.filter(fact="Ada works at Acme").update(superseded_at=at("2026-02-10T09:30:00"))
    third = engine.write(entities=[person("Dan"), {"name": "Acme", "type": "org"}], facts=[
        fact("Dan", "Acme", "joined", "Dan joined Acme", valid_at="2025-06-01T00:00:00Z")])
    _learned(third, "2026-03-20T08:00:00")
    return {f.fact: str(f.pk) for f in Fact.objects.filter(memory__name="default")}


def _engine_ids(principal, **clocks) -> set[str]:
    """What query_memory considers at those clocks (digest: the window alone, no ranking)."""
    reply = query_memory.run(principal, parse(query_memory.QueryMemoryArgs, {
        "scope": "shared", "digest": True, "top_k": 100,
        **{name: when.isoformat() for name, when in clocks.items()}}))
    return {f["fact_id"] for f in reply["facts"]}


CLOCKS = [
    {"as_of": "2026-01-01T00:00"},  # before anything was learned
    {"as_of": "2026-01-06T00:00"},  # the first write only
    {"as_of": "2026-02-11T00:00"},  # Ada's job rewritten
    {"as_of": "2026-03-21T00:00"},
    {"valid_as_of": "2015-01-01T00:00"},  # only Bob's Oslo years
    {"valid_as_of": "2024-06-01T00:00"},
    {"valid_as_of": "2026-01-20T00:00"},
    {"valid_as_of": "2026-02-15T00:00"},  # the CTO version is true, the old one ended
    {"valid_as_of": "2026-04-01T00:00"},
    {"as_of": "2026-01-06T00:00", "valid_as_of": "2026-02-15T00:00"},  # what it knew then
    {"as_of": "2026-02-11T00:00", "valid_as_of": "2025-07-01T00:00"},
]


def test_the_as_of_list_is_exactly_what_query_memory_considers_on_both_axes(client, alice):
    ids = _write_history(alice.principal)
    client.force_login(alice.user)
    seen = {}
    for clocks in CLOCKS:
        page = client.get("/memories/default/", clocks)
        assert page.status_code == 200 and not page.context["form"].errors, clocks
        listed = {f["fact_id"] for f in page.context["page"].facts}
        expected = _engine_ids(alice.principal, **{k: at(v) for k, v in clocks.items()})
        assert listed == expected, clocks
        seen[tuple(clocks.items())] = {fact for fact, pk in ids.items() if pk in listed}
    # Not a vacuous agreement: the clocks pick different, known sets.
    assert seen[(("as_of", "2026-01-01T00:00"),)] == set()
    assert seen[(("as_of", "2026-01-06T00:00"),)] == {
        "Ada works at Acme", "Bob lived in Oslo", "Carol likes tea"}
    assert seen[(("as_of", "2026-02-11T00:00"),)] == {
        "Ada works at Acme as CTO", "Bob lived in Oslo", "Carol likes tea"}
    assert seen[(("valid_as_of", "2015-01-01T00:00"),)] == {"Bob lived in Oslo"}
    assert seen[(("valid_as_of", "2026-01-20T00:00"),)] == {
        "Ada works at Acme", "Carol likes tea", "Dan joined Acme"}
    assert seen[(("valid_as_of", "2026-02-15T00:00"),)] == {
        "Ada works at Acme as CTO", "Carol likes tea", "Dan joined Acme"}
    assert seen[(("as_of", "2026-01-06T00:00"), ("valid_as_of", "2026-02-15T00:00"))] == {
        "Ada works at Acme", "Carol likes tea"}
    # A search at a time passes the same clocks to query_memory.
    found = client.get("/memories/default/", {"q": "Ada Acme", "as_of": "2026-01-06T00:00"})
    shown = [f["fact"] for f in found.context["results"]["facts"]]
    assert shown[0] == "Ada works at Acme" and "Ada works at Acme as CTO" not in shown
    assert set(shown) <= seen[(("as_of", "2026-01-06T00:00"),)]
    # The page links keep the clocks.
    html = client.get("/memories/default/", CLOCKS[1]).content.decode()
    assert "as the memory held them on 2026-01-06 00:00 UTC" in html


@pytest.mark.parametrize("params, field, says", [
    ({"as_of": "yesterday"}, "as_of", "YYYY-MM-DD HH:MM"),
    ({"valid_as_of": "2026-13-45"}, "valid_as_of", "YYYY-MM-DD HH:MM"),
    ({"as_of": "2026-01-01\x00"}, "as_of", "YYYY-MM-DD HH:MM"),
    ({"valid_as_of": "10000-01-01T00:00"}, "valid_as_of", "YYYY-MM-DD HH:MM"),
    ({"as_of": "2" * 500}, "as_of", "YYYY-MM-DD HH:MM"),
])
def test_bad_as_of_times_are_field_errors_naming_the_format(client, alice, params, field, says):
    client.force_login(alice.user)
    page = client.get("/memories/default/", params)
    assert page.status_code == 200
    assert says in " ".join(page.context["form"].errors[field])
    assert "page" not in page.context


def test_a_time_outside_the_storable_years_in_utc_is_refused(client, alice):
    client.force_login(alice.user)
    late = client.get("/memories/default/", {"as_of": "9999-12-31T23:59"})
    assert late.status_code == 200 and not late.context["form"].errors  # in UTC it is fine
    client.cookies["tz"] = "America/New_York"  # there it is year 10000 in UTC
    late = client.get("/memories/default/", {"as_of": "9999-12-31T23:59"})
    assert late.status_code == 200
    assert "outside years 1 to 9999" in late.context["form"].errors["as_of"][0]
    client.cookies["tz"] = "Asia/Tokyo"  # and year 1 at midnight is year 0
    early = client.get("/memories/default/", {"valid_as_of": "0001-01-01T00:00"})
    assert early.status_code == 200
    assert "outside years 1 to 9999" in early.context["form"].errors["valid_as_of"][0]


def test_times_show_in_the_browsers_zone_and_the_persons_setting_wins(client, alice):
    _write_history(alice.principal)
    client.force_login(alice.user)
    utc = client.get("/memories/default/", {"superseded": "on"}).content.decode()
    assert "Times in <strong>UTC</strong>" in utc
    assert "learned <time datetime=\"2026-01-05T12:00:00+00:00\">2026-01-05 12:00 UTC" in utc
    assert "superseded <time" in utc and "2026-02-10 09:30 UTC" in utc
    assert "True from <time" in utc and "2024-01-01 00:00 UTC</time> until no end given" in utc
    assert '/facts/' in utc and "the next version" in utc

    client.cookies["tz"] = "Asia/Tokyo"
    tokyo = client.get("/memories/default/", {"superseded": "on"}).content.decode()
    assert "Times in <strong>Asia/Tokyo</strong> (your browser&#x27;s)" in tokyo
    assert "2026-01-05 21:00 JST" in tokyo and "2026-02-10 18:30 JST" in tokyo
    # A time typed on the page is in the page's zone: 09:00 in Tokyo is midnight UTC.
    typed = client.get("/memories/default/", {"as_of": "2026-01-06T09:00"}).context["page"]
    assert {f["fact_id"] for f in typed.facts} == _engine_ids(alice.principal,
                                                             as_of=at("2026-01-06T00:00"))

    settings_page = client.get("/account/preferences/?next=/memories/default/")
    assert "Follow my browser" in settings_page.content.decode()
    saved = client.post("/account/preferences/", {"time_zone": "America/New_York",
                                                  "next": "/memories/default/"})
    assert saved.status_code == 302 and saved["Location"] == "/memories/default/"
    york = client.get("/memories/default/", {"superseded": "on"}).content.decode()
    assert "Times in <strong>America/New_York</strong> (your setting)" in york
    assert "2026-01-05 07:00 EST" in york and "JST" not in york
    # The setting outlives the session: read again at the next sign-in.
    client.logout()
    client.force_login(alice.user)
    client.cookies["tz"] = "Asia/Tokyo"
    assert "America/New_York" in client.get("/memories/default/").content.decode()

    client.post("/account/preferences/", {"time_zone": ""})  # follow the browser again
    assert "Asia/Tokyo" in client.get("/memories/default/").content.decode()
    for hostile in ("../../etc/passwd", "Mars/Olympus", "Europe/Paris\x00", "x" * 300):
        client.cookies["tz"] = hostile
        page = client.get("/memories/default/")
        assert page.status_code == 200 and "Times in <strong>UTC</strong>" in page.content.decode()


@pytest.mark.parametrize("value, says", [
    ("Mars/Olympus", "not a time zone this server knows"),
    ("Europe/Paris\x00", "not a time zone this server knows"),
    ("x" * 300, "not a time zone this server knows"),
])
def test_an_unknown_time_zone_setting_is_a_field_error(client, alice, value, says):
    client.force_login(alice.user)
    page = client.post("/account/preferences/", {"time_zone": value})
    assert page.status_code == 200
    assert says in page.context["form"].errors["time_zone"][0]
    # Elsewhere, or not a path at all (redirect() took a bare word for a URL name): home.
    for elsewhere in ("https://evil.example/", "//evil.example/", "dashboard", "\ufffd"):
        assert client.post("/account/preferences/", {"time_zone": "Europe/Paris",
                                                     "next": elsewhere})["Location"] \
            == "/account/preferences/"


def test_a_facts_history_lists_its_edge_oldest_first_with_both_clocks(client, alice, bob,
                                                                     charlie):
    ids = _write_history(alice.principal)
    client.force_login(alice.user)
    page = client.get(f"/memories/default/facts/{ids['Ada works at Acme']}/")
    assert page.status_code == 200
    versions = page.context["detail"]["versions"]
    assert [v["fact"] for v in versions] == ["Ada works at Acme", "Ada works at Acme as CTO"]
    assert versions[0]["replaced_by_fact"] == "Ada works at Acme as CTO"
    assert versions[0]["superseded_by"] == ids["Ada works at Acme as CTO"]
    html = page.content.decode()
    assert "learned <time datetime=\"2026-01-05T12:00:00+00:00\">" in html
    assert "learned <time datetime=\"2026-02-10T09:30:00+00:00\">" in html
    assert "2026-02-01 00:00 UTC</time> until no end given" in html
    assert f"/memories/default/facts/{ids['Ada works at Acme as CTO']}/" in html
    # The entity page: a timeline by valid time, the old version under the live one.
    ada = client.get(f"/memories/default/entities/"
                     f"{Entity.objects.get(name='Acme').pk}/").context["detail"]
    assert [f["fact"] for f in ada["timeline"]] == ["Ada works at Acme as CTO",
                                                    "Dan joined Acme"]  # Feb 2026, Jun 2025
    assert ada["timeline"][0]["happened_by"] == "valid from"

    Engine(bob.principal).write(scope="solo", assume_new=True, entities=[
        person("Bob's secret"), person("Payroll")], facts=[
        fact("Bob's secret", "Payroll", "plans", "Bob plans a payroll change")])
    Engine(charlie.principal).write(assume_new=True, entities=[person("X"), person("Y")],
                                    facts=[fact("X", "Y", "knows", "X knows Y")])
    hidden = [Fact.objects.get(fact="Bob plans a payroll change").pk,
              Fact.objects.get(fact="X knows Y").pk, uuid.uuid4()]
    for pk in hidden:
        assert client.get(f"/memories/default/facts/{pk}/").status_code == 404
    assert client.post(f"/memories/default/facts/{ids['Carol likes tea']}/").status_code == 405
    assert client.get(f"/memories/default/facts/{ids['Carol likes tea']}x/").status_code == 404
    assert client.get(f"/memories/nowhere/facts/{ids['Carol likes tea']}/").status_code == 404


def test_cause_suggestions_offer_matching_entities_as_links_and_refuse_hostile_input(
        client, alice, bob, charlie):
    _write_history(alice.principal)
    Engine(alice.principal).write(entities=[{"name": "Acme outage", "type": "event"},
                                            {"name": "Acme", "type": "org"}],
                                  facts=[fact("Acme outage", "Acme", "hit", "The outage hit Acme",
                                              causal_hint="led_to")])
    Engine(bob.principal).write(scope="solo", assume_new=True, entities=[
        {"name": "Acme secret", "type": "thing"}, person("Bob")], facts=[
        fact("Acme secret", "Bob", "told", "The Acme secret was told to Bob")])
    Memory.objects.create(account=charlie.account, name="theirs")
    client.force_login(alice.user)
    cause = client.get("/memories/default/cause/").content.decode()
    assert 'hx-get="/memories/default/cause/suggest/"' in cause
    assert 'aria-live="polite"' in cause
    assert 'hx-trigger="input changed delay:300ms, search"' in cause

    found = client.get("/memories/default/cause/suggest/", {"subject": "acme"})
    html = found.content.decode()
    assert found.status_code == 200 and "<html" not in html
    assert [s["name"] for s in found.context["suggestions"]] == ["Acme", "Acme outage"]
    assert "2 entities match “acme”" in html
    assert '/memories/default/cause/?subject=Acme%20outage&amp;scope=shared' in html
    assert "Acme secret" not in html  # bob's solo entity
    none = client.get("/memories/default/cause/suggest/", {"subject": "zz%_"})
    assert none.context["suggestions"] == [] and "No entity matches" in none.content.decode()
    for params, says in [({"subject": "Ac\x00me"}, "Null characters"),
                         ({"subject": "a" * 501}, "at most 500"),
                         ({"subject": "Acme", "scope": "solo:support-bot"}, "not a scope")]:
        refused = client.get("/memories/default/cause/suggest/", params)
        assert refused.status_code == 200 and says in refused.content.decode()
        assert refused.context["suggestions"] == []
    assert client.get("/memories/theirs/cause/suggest/", {"subject": "a"}).status_code == 404
    assert client.post("/memories/default/cause/suggest/", {"subject": "a"}).status_code == 405
    # Picked: the cause view from it, each box focusable with its full name.
    traced = client.get("/memories/default/cause/", {"subject": "Acme outage"}).content.decode()
    assert 'tabindex="0" role="img" aria-label="Acme outage (the subject)"' in traced
    assert "<title>Acme outage</title>" in traced


def test_the_agents_doors_answer_alike_whatever_zone_cookie_comes_along(client, alice):
    """The zone is the pages' business: a request at /api or /mcp reads no session for it,
    so the answer does not vary by cookie (a shared cache may keep it) and its times are
    the stored UTC ones."""
    client.cookies["tz"] = "Asia/Tokyo"
    bearer = {"HTTP_AUTHORIZATION": f"Bearer {alice.plaintext}"}
    listed = client.get("/api/v1/memories", **bearer)
    assert listed.status_code == 200 and "Cookie" not in listed["Vary"]
    assert listed.json()["memories"][0]["created_at"].endswith("Z")
    started = client.post("/mcp", content_type="application/json", **bearer,
                          HTTP_ACCEPT="application/json, text/event-stream", data={
                              "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                                  "protocolVersion": "2025-06-18", "capabilities": {},
                                  "clientInfo": {"name": "probe", "version": "1"}}})
    assert started.status_code == 200 and "Cookie" not in started.get("Vary", "")
