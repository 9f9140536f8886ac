from __future__ import annotations

from accounts.services import api_key_revoke
from memories.graph.services import memory_create


def test_memories_are_listed_for_the_keys_account_only(client, alice, charlie):
    memory_create(account_id=charlie.account.pk, name="not-alices")
    response = client.get("/api/v1/memories", **alice.auth_header)
    assert response.status_code == 200
    assert [m["name"] for m in response.json()["memories"]] == ["default"]
    assert response.json()["memories"][0]["default"] is True


def test_missing_key_gets_401_with_bearer_challenge_and_the_fix(client, db):
    response = client.get("/api/v1/memories")
    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith("Bearer")
    error = response.json()["error"]
    assert error["field"] == "Authorization"
    assert "Bearer" in error["fix"]


def test_revoked_key_gets_401(client, alice):
    api_key_revoke(key=alice.key)
    response = client.get("/api/v1/memories", **alice.auth_header)
    assert response.status_code == 401
    assert "revoked" in response.json()["error"]["message"]


def test_healthz_answers_when_the_database_does(client, db):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}
