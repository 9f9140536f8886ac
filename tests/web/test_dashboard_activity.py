"""The dashboard's home shows recent changes and this month's recall saves: which agent's
facts spared which other agent a re-explanation, only from what the person may see."""

from __future__ import annotations

from tests.factories import Engine, fact, person


def test_recall_saves_name_the_writing_and_the_reading_agent(client, alice, bob):
    written = Engine(alice.principal).write(
        assume_new=True, session_id="s-1", entities=[person("Ada"), person("Grace")],
        facts=[fact("Ada", "Grace", "mentors", "Ada mentors Grace")])
    fact_id = written["edges_created"][0]["fact_id"]
    Engine(bob.principal).save(fact_id=fact_id, note="did not have to ask who mentors Grace")
    Engine(bob.principal).save(fact_id=fact_id, note="again, in the next ticket")
    client.force_login(alice.user)
    page = client.get("/dashboard/")
    saves = page.context["saves"]
    assert [(s.writer_tool, s.reader_tool, s.saves) for s in saves] == [
        ("claude-code", "support-bot", 2)]
    html = page.content.decode()
    assert "<strong>claude-code</strong>'s facts saved <strong>support-bot</strong>" in html
    recent = [row.event.action for row in page.context["recent"]]
    assert len(recent) == 5 and "fact.created" in recent  # newest five, the write among them


def test_recent_changes_leave_out_another_holders_solo_writes(client, alice, bob):
    Engine(bob.principal).write(scope="solo", assume_new=True, session_id="secret",
                                entities=[person("Bob's secret")], facts=[])
    client.force_login(alice.user)
    recent = client.get("/dashboard/").context["recent"]
    assert all(row.event.session_id != "secret" for row in recent)
    client.force_login(bob.user)
    assert any(row.event.session_id == "secret" for row in client.get("/dashboard/")
               .context["recent"])


def test_an_empty_account_says_what_will_show_up(client, charlie):
    client.force_login(charlie.user)
    html = client.get("/dashboard/").content.decode()
    assert "None yet this month" in html and "record_recall_save" in html
