"""An owner reads the audit log in the browser: filters it by session, downloads the
filtered log as CSV, and verifies the chain."""

from __future__ import annotations

import csv

import pytest

from tests.factories import Engine, fact, person, signed_up


@pytest.mark.django_db(transaction=True)
def test_filter_the_audit_log_export_it_and_verify_the_chain(live_server, page, visits):
    agent = Engine(signed_up("ada@example.com").principal)
    agent.write(session_id="run-7", assume_new=True, entities=[person("Ada"), person("Grace")],
                facts=[fact("Ada", "Grace", "mentors", "Ada mentors Grace")])
    agent.write(session_id="run-8", entities=[person("Ada"), person("Grace")],
                facts=[fact("Ada", "Grace", "mentors", "Ada mentored Grace until 2020")])

    visits.goto(f"{live_server.url}/login/")
    page.get_by_label("Email").fill("ada@example.com")
    page.get_by_label("Password").fill("a long passphrase 42")
    visits.click("button", "Sign in")
    visits.click("link", "Audit log")
    assert page.get_by_text("run-8").first.is_visible()

    page.get_by_label("Session").fill("run-7")
    visits.click("button", "Apply filter")
    assert "session=run-7" in page.url
    assert page.get_by_text("run-8").count() == 0
    events = page.locator("[aria-labelledby=events-heading] tbody")
    assert events.get_by_text("Ada mentors Grace").first.is_visible()
    assert events.get_by_text("laptop (em_").first.is_visible()

    with page.expect_download() as started:
        page.get_by_role("link", name="Export CSV").click()
    download = started.value
    assert download.suggested_filename.startswith("audit-log-")
    assert download.suggested_filename.endswith(".csv")
    with open(download.path(), encoding="utf-8", newline="") as exported:
        rows = list(csv.DictReader(exported))
    assert rows and {row["session_id"] for row in rows} == {"run-7"}
    assert {row["action"] for row in rows} == {"entity.created", "fact.created"}

    page.get_by_label("Session").fill("no-such-run")
    visits.click("button", "Apply filter")
    assert page.get_by_text("No event matches this filter").is_visible()

    visits.click("button", "Verify chain")
    assert "The audit chain verifies" in page.get_by_role("status").inner_text()
