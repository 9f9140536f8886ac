"""GET /api/v1/usage: the billing page's figures for the key's account, never another's;
metered: false with nulls on a self-hosted box; described in the OpenAPI schema."""

from __future__ import annotations

from datetime import UTC, datetime

from accounts.services import api_key_revoke
from billing.plans import month_of
from billing.usage import standing
from memories.graph.services import memory_create
from tests.billing.usage_rows import charge, record


def test_usage_reports_the_keys_account_in_the_pages_figures(client, alice, bob, charlie):
    memory_create(account_id=alice.account.pk, name="notes")
    charge(alice, 30)
    charge(bob, 12, memory="notes", tool="query_memory")
    charge(charlie, 77)
    api_key_revoke(key=bob.key)
    this_month = month_of()
    previous = datetime(this_month.year - (this_month.month == 1),
                        (this_month.month - 2) % 12 + 1, 10, tzinfo=UTC)
    record(alice, 5, previous)

    response = client.get("/api/v1/usage", **alice.auth_header)
    assert response.status_code == 200
    body = response.json()
    current = standing(alice.account.pk)
    assert body["metered"] is True
    assert body["summary"] == {
        "metered": True, "plan": "free", "plan_name": "Free",
        "month": month_of().isoformat(), "used": 42, "allowed": 10_000, "remaining": 9_958,
        "percent": 0, "resets_at": current.resets_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "requests_per_minute": 240}
    assert body["daily"][-1] == {"day": datetime.now(UTC).date().isoformat(), "units": 42}
    assert sum(d["units"] for d in body["daily"]) == 42
    assert len(body["monthly"]) == 12 and body["monthly"][-1]["units"] == 42
    assert {m["month"]: m["units"] for m in body["monthly"]}[
        previous.date().replace(day=1).isoformat()] == 5
    assert body["by_memory"] == [
        {"name": "default", "units": 30, "percent": 71, "state": "active"},
        {"name": "notes", "units": 12, "percent": 29, "state": "active"}]
    assert body["by_key"] == [
        {"name": "laptop", "prefix": f"em_{alice.key.prefix}_…", "units": 30, "percent": 71,
         "state": "active", "agent": "claude-code"},
        {"name": "bot", "prefix": f"em_{bob.key.prefix}_…", "units": 12, "percent": 29,
         "state": "revoked", "agent": "support-bot"}]
    assert body["by_tool"] == [{"tool": "write_episode", "units": 30, "percent": 71},
                               {"tool": "query_memory", "units": 12, "percent": 29}]
    assert charlie.key.prefix not in response.content.decode()


def test_asking_for_usage_costs_no_units(client, alice):
    charge(alice, 3)
    for _ in range(3):
        assert client.get("/api/v1/usage", **alice.auth_header).json()["summary"]["used"] == 3


def test_a_self_hosted_box_says_nothing_is_metered(client, alice, settings):
    charge(alice, 3)
    settings.SELF_HOSTED = True
    body = client.get("/api/v1/usage", **alice.auth_header).json()
    assert body["metered"] is False and body["summary"]["metered"] is False
    assert {k for k, v in body["summary"].items() if v is not None} == {"metered"}
    assert body["daily"] == body["monthly"] == body["by_memory"] == body["by_key"] == []


def test_usage_needs_a_key_and_only_answers_get(client, alice):
    missing = client.get("/api/v1/usage")
    assert missing.status_code == 401 and missing["WWW-Authenticate"].startswith("Bearer")
    posted = client.post("/api/v1/usage", "{}", content_type="application/json",
                         **alice.auth_header)
    assert posted.status_code == 405
    assert posted.json()["error"]["code"] == "method_not_allowed"


def test_the_schema_describes_usage_under_its_own_tag(client, db):
    schema = client.get("/api/v1/schema", headers={"Accept": "application/json"}).json()
    operation = schema["paths"]["/api/v1/usage"]["get"]
    assert operation["operationId"] == "usage_report" and operation["tags"] == ["usage"]
    reply = operation["responses"]["200"]["content"]["application/json"]
    assert reply["schema"]["$ref"] == "#/components/schemas/UsageOut"
    assert set(schema["components"]["schemas"]["UsageOut"]["properties"]) == {
        "metered", "summary", "daily", "monthly", "by_memory", "by_key", "by_tool"}
    assert "402" in operation["responses"] and "429" in operation["responses"]
