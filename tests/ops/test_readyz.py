"""/healthz says the process answers; /readyz says whether it can serve, and if not, why."""

from __future__ import annotations

import socket

from django.db import connection

from tests.harness import free_port


def test_healthz_answers_without_asking_the_database(client):
    # No `db` fixture: any query would raise here instead of answering.
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


def test_readyz_is_200_with_every_check_when_all_pass(client, db, settings):
    response = client.get("/readyz")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["status"] == "ready"
    # The test settings use Redis, so it is checked.
    assert settings.REDIS_URL
    assert list(body["checks"]) == ["database", "redis", "migrations", "embedder"]
    assert all(check["ok"] for check in body["checks"].values())
    assert "failing" not in body
    assert "dimensions" in body["checks"]["embedder"]["detail"]


def test_redis_is_not_checked_where_it_is_not_configured(client, db, settings):
    settings.REDIS_URL = ""
    body = client.get("/readyz").json()
    assert body["status"] == "ready"
    assert "redis" not in body["checks"]


def test_an_unreachable_redis_is_503_naming_redis(client, db, settings):
    # A port nothing listens on: bound and closed again, so the connection is refused.
    settings.REDIS_URL = f"redis://127.0.0.1:{_closed_port()}/0"
    response = client.get("/readyz")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "unavailable"
    assert body["failing"] == ["redis"]
    assert body["checks"]["redis"]["ok"] is False
    assert "ConnectionError" in body["checks"]["redis"]["detail"]
    # The reply names the part, not the address it tried.
    assert "127.0.0.1" not in response.content.decode()
    assert body["checks"]["database"]["ok"] is True


def test_an_unapplied_migration_is_503_naming_migrations(client, transactional_db):
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM django_migrations WHERE app = 'memories' AND name = ("
                       "SELECT max(name) FROM django_migrations WHERE app = 'memories') "
                       "RETURNING name")
        (removed,) = cursor.fetchone()
    try:
        response = client.get("/readyz")
        assert response.status_code == 503
        body = response.json()
        assert body["failing"] == ["migrations"]
        assert "echo-memory migrate" in body["checks"]["migrations"]["detail"]
    finally:
        with connection.cursor() as cursor:
            cursor.execute("INSERT INTO django_migrations (app, name, applied) "
                           "VALUES ('memories', %s, now())", [removed])
    assert client.get("/readyz").status_code == 200


def _closed_port() -> int:
    port = free_port()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", port))
    return port
