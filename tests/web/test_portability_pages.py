"""The export download, the account export and the import form, as people use them: alice
owns account A, bob is a member of A, charlie owns his own account."""

from __future__ import annotations

import json

from django.core.files.uploadedfile import SimpleUploadedFile

from audit.models import AuditEvent
from memories.graph.services import memory_create
from memories.models import Fact
from tests.portability.conftest import filled  # noqa: F401 (a fixture)
from tests.web.test_wording import _leaks


def _download(client, url: str) -> list[dict]:
    response = client.get(url)
    assert response.status_code == 200, response.status_code
    assert response.streaming and response["Content-Type"] == "application/x-ndjson"
    assert response["Content-Disposition"].startswith("attachment;")
    return [json.loads(line) for line in b"".join(response.streaming_content).splitlines()]


def _upload(client, lines: list[dict], *, dry_run: bool, name: str = "default"):
    body = "".join(json.dumps(line) + "\n" for line in lines).encode()
    data = {"file": SimpleUploadedFile("export.jsonl", body, "application/x-ndjson")}
    if dry_run:
        data["dry_run"] = "on"
    return client.post(f"/memories/{name}/import/", data)


def test_export_download_then_import_with_a_dry_run_first(client, alice, charlie,
                                                          filled):  # noqa: F811
    client.force_login(alice.user)
    explorer = client.get("/memories/default/").content.decode()
    assert "/memories/default/export/" in explorer and "/memories/default/import/" in explorer
    lines = _download(client, "/memories/default/export/")
    assert AuditEvent.objects.filter(account=alice.account, action="memory.exported").exists()

    client.force_login(charlie.user)
    dry = _upload(client, lines, dry_run=True)
    assert dry.status_code == 200
    assert "Dry run: nothing was written" in dry.content.decode()
    assert _leaks(dry.content.decode()) == []  # the product's words, not the code's
    assert not Fact.objects.filter(memory__account=charlie.account).exists()
    done = _upload(client, lines, dry_run=False)
    assert "Imported" in done.content.decode()
    assert Fact.objects.filter(memory__account=charlie.account).count() == 4
    assert AuditEvent.objects.filter(account=charlie.account, action="memory.imported").exists()
    again = _upload(client, lines, dry_run=False)
    assert "Nothing changed" in again.content.decode()


def test_a_bad_file_is_shown_next_to_the_field_with_its_line(client, alice, charlie,
                                                             filled):  # noqa: F811
    client.force_login(alice.user)
    lines = _download(client, "/memories/default/export/")
    client.force_login(charlie.user)

    page = _upload(client, lines[:-1], dry_run=False).content.decode()

    assert "is-invalid" in page and f"line {len(lines) - 1}: the file ends without" in page
    assert not Fact.objects.filter(memory__account=charlie.account).exists()
    empty = client.post("/memories/default/import/", {}).content.decode()
    assert "Choose the export file to import." in empty


def test_the_account_export_holds_every_memory(client, alice, filled):  # noqa: F811
    memory_create(account_id=alice.account.pk, name="notes")
    client.force_login(alice.user)
    assert "/account/export/" in client.get("/account/").content.decode()

    lines = _download(client, "/account/export/")

    headers = [line["memory"]["name"] for line in lines if line["kind"] == "header"]
    assert headers == ["default", "notes"]
    assert [line["kind"] for line in lines].count("trailer") == 2


def test_a_member_exports_but_may_not_import_or_export_the_account(client, alice, bob,
                                                                   filled):  # noqa: F811
    client.force_login(bob.user)
    assert _download(client, "/memories/default/export/")[0]["kind"] == "header"
    assert client.get("/memories/default/import/").status_code == 403
    assert client.get("/account/export/").status_code == 403
    assert "/account/export/" not in client.get("/account/").content.decode()


def test_another_tenants_memory_is_not_found(client, alice, charlie):
    memory_create(account_id=charlie.account.pk, name="private")
    client.force_login(alice.user)
    assert client.get("/memories/private/export/").status_code == 404
    assert client.get("/memories/private/import/").status_code == 404
    assert client.post("/memories/private/import/", {}).status_code == 404


def test_export_needs_sign_in(client, alice):
    response = client.get("/memories/default/export/")
    assert response.status_code == 302 and "/login/" in response["Location"]
