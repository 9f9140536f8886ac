"""GET .../export streams a memory; POST .../import reads one back: the engine's rules at the
REST door (another tenant's memory is 404, bad input is 400 with the line and field)."""

from __future__ import annotations

import json

import pytest

from memories.models import Fact
from tests.portability.conftest import filled  # noqa: F401 (a fixture)

NDJSON = "application/x-ndjson"


def _export(client, actor, name: str = "default", query: str = "") -> bytes:
    response = client.get(f"/api/v1/memories/{name}/export{query}", **actor.auth_header)
    assert response.status_code == 200, response.content
    assert response.streaming and response["Content-Type"] == NDJSON
    assert "attachment" in response["Content-Disposition"]
    return b"".join(response.streaming_content)


def _import(client, actor, body: bytes, query: str = "", name: str = "default",
            content_type: str = NDJSON):
    return client.post(f"/api/v1/memories/{name}/import{query}", data=body,
                       content_type=content_type, **actor.auth_header)


def test_export_then_import_into_another_account(client, alice, charlie, filled):  # noqa: F811
    body = _export(client, alice, query="?vectors=true")
    assert json.loads(body.splitlines()[0])["vectors"] is True

    dry = _import(client, charlie, body, "?dry_run=true")
    assert dry.status_code == 200, dry.content
    assert dry.json()["dry_run"] and dry.json()["counts"]["fact"]["created"] == 4
    assert not Fact.objects.filter(memory__account=charlie.account).exists()

    done = _import(client, charlie, body)
    assert done.json()["counts"]["fact"]["created"] == 4 and done.json()["changed"]
    again = _import(client, charlie, body)
    assert not again.json()["changed"]
    assert again.json()["counts"]["fact"]["already_present"] == 4


def test_another_tenants_memory_is_not_found_either_way(client, alice, charlie, filled):  # noqa: F811
    from memories.graph.services import memory_create

    memory_create(account_id=charlie.account.pk, name="private")
    body = _export(client, alice)
    assert client.get("/api/v1/memories/private/export",
                      **alice.auth_header).status_code == 404
    refused = _import(client, alice, body, name="private")
    assert refused.status_code == 404 and refused.json()["error"]["field"] == "memory"


@pytest.mark.parametrize("path", ["/api/v1/memories/a%00b/export",
                                  f"/api/v1/memories/{'x' * 5000}/export",
                                  "/api/v1/memories/Default/export"])
def test_hostile_memory_names_are_not_found(client, alice, path):
    response = client.get(path, **alice.auth_header)
    assert response.status_code == 404
    assert response.json()["error"]["field"] == "memory"


def test_bad_flags_and_bodies_name_the_field(client, alice, charlie, filled):  # noqa: F811
    bad_flag = client.get("/api/v1/memories/default/export?vectors=maybe", **alice.auth_header)
    assert bad_flag.status_code == 400 and bad_flag.json()["error"]["field"] == "vectors"
    body = _export(client, alice)
    assert _import(client, charlie, body, "?dry_run=%00").json()["error"]["field"] == "dry_run"
    wrong_type = _import(client, charlie, body, content_type="application/json")
    assert wrong_type.status_code == 400
    assert wrong_type.json()["error"]["field"] == "Content-Type"
    cut = _import(client, charlie, b"".join(body.splitlines(keepends=True)[:-1]))
    assert cut.status_code == 400
    error = cut.json()["error"]
    assert error["code"] == "invalid_import" and error["field"] == "trailer"
    assert error["line"] == len(body.splitlines()) - 1
    not_json = _import(client, charlie, b"\x00\xff garbage")
    assert not_json.status_code == 400 and not_json.json()["error"]["line"] == 1


def test_a_member_may_export_but_not_import(client, alice, bob, filled):  # noqa: F811
    body = _export(client, bob)
    refused = _import(client, bob, body)
    assert refused.status_code == 403
    assert "owner or an admin" in refused.json()["error"]["message"]


def test_a_chunked_body_over_the_body_limit_says_so(client, alice, settings):
    settings.MAX_BODY_BYTES = 100
    response = client.post("/api/v1/memories/default/import", data=b"x" * 101,
                           content_type=NDJSON, HTTP_TRANSFER_ENCODING="chunked",
                           **alice.auth_header)
    assert response.status_code == 413
    assert response.json()["error"]["field"] == "body"
    assert "Content-Length" in response.json()["error"]["fix"]
