"""`memory import` and `memory export` against a live server: a vault written the way
EchoVault writes it (fixtures/vault), with odd front matter, duplicates and an OpenAI key."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import yaml

from agent_cli.vault import read_vault, short_title
from memories.models import Note, NoteVersion

VAULT = Path(__file__).parent / "fixtures" / "vault"
SECRET = "sk-proj-Q7vX2mN9pL4kR8tY1wZ5aB3cD6eF0gH2jK4lM7nP9qR"
LONG_TITLE = ("Fixed the checkout total being off by one cent when a coupon and a gift card "
              "are combined")


def _import(box, *extra: str) -> dict:
    done = box.run("import", "--vault", str(VAULT), "--json", *extra)
    assert done.exit_code == 0, done.output
    return json.loads(done.output[done.output.index("{"):])


def test_the_vault_reads_as_echovault_wrote_it_and_odd_files_only_warn():
    vault = read_vault(VAULT)
    by_title = {note.title: note for note in vault.notes}
    assert vault.files == 4 and len(vault.notes) == 7
    jwt = by_title["Switched to JWT auth"]
    assert (jwt.project, jwt.category, jwt.impact) == (
        "shop-api", "decision", "All endpoints now require Bearer token")
    assert jwt.details.startswith("Context:\nThe mobile client") and SECRET in jwt.details
    short = short_title(LONG_TITLE)
    assert len(short) <= 60 and short.endswith("…") and by_title[short].category == "bug"
    assert by_title[short].details == f"Full title: {LONG_TITLE}"
    assert by_title["Stale Celery beat lock after deploy"].category == "bug"  # Known Fixes
    # tags as a string, a bad date, an extra field, no front matter: warnings, not crashes
    hermes = by_title["Hermes needs a clean build after upgrading"]
    assert hermes.project == "mobile-app" and hermes.tags == ["react-native", "hermes"]
    assert any("last tuesday" in w and "editor" in w for w in vault.warnings)
    assert any("2026-02-28" in w and "no front matter" in w for w in vault.warnings)
    assert by_title["Pinned React Native version"].what.endswith("0.74 since the Hermes "
                                                                  "fix landed.")
    reasons = sorted(s.reason.split(" (")[0].split(" of ")[0] for s in vault.skipped)
    assert reasons == ["archived in the vault", "duplicate", "no **What:** line",
                       "replaced by mobile-app/2026-02-28-session.md#1"]
    # the same note on two days keeps both days' tags
    assert set(by_title["Added Redis caching"].tags) == {"auth", "checkout", "jwt", "redis",
                                                         "cache", "celery", "webhooks"}


def test_import_re_import_export_round_trip(box, server, alice, tmp_path):
    dry = _import(box, "--dry-run")
    assert dry["notes"] == 7 and dry["created"] == 0 and not Note.objects.exists()

    first = _import(box)
    assert (first["created"], first["updated"], first["unchanged"]) == (7, 0, 0)
    assert len(first["skipped"]) == 4 and first["redacted"] == 1
    rows = list(Note.objects.values())
    assert len(rows) == 7
    assert all(SECRET not in str(row) and "sk-proj-Q7vX" not in str(row) for row in rows)

    human = box.run("import", "--vault", str(VAULT))
    assert human.exit_code == 0, human.output
    assert "0 created, 0 updated, 7 unchanged" in human.output
    assert "duplicate of shop-api/2026-03-01-session.md#3" in human.output
    assert Note.objects.count() == 7 and not NoteVersion.objects.exists()

    target = tmp_path / "exported"
    done = box.run("export", "--to", str(target))
    assert done.exit_code == 0, done.output
    assert "exported 7 note(s) of 2 project(s)" in done.output
    files = sorted(target.glob("*/*.md"))
    assert {f.parent.name for f in files} == {"shop-api", "mobile-app"}
    for path in files:  # EchoVault's layout: one file per project and day, its front matter
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}-session\.md", path.name)
        text = path.read_text()
        front = yaml.safe_load(text.split("---\n")[1])
        assert set(front) == {"project", "sources", "created", "tags"}
        assert front["project"] == path.parent.name
        assert f"# {path.name[:10]} Session" in text

    before = {note.key(): note for note in read_vault(VAULT).notes}
    after = {note.key(): note for note in read_vault(target).notes}
    assert set(after) == set(before)
    for key, note in before.items():
        expected = note.arguments()
        if expected.get("details"):
            expected["details"] = expected["details"].replace(SECRET, "[REDACTED:openai-key]")
        assert after[key].arguments() == expected, key

    again = tmp_path / "vault-copy"  # the exported vault imports as the same notes
    shutil.copytree(target, again)
    done = box.run("import", "--vault", str(again), "--json")
    assert json.loads(done.output[done.output.index("{"):])["unchanged"] == 7
    assert Note.objects.count() == 7 and not NoteVersion.objects.exists()


def test_export_of_one_project_and_a_missing_vault(box, server, tmp_path):
    _import(box, "--project", "mobile-app")
    done = box.run("export", "--to", str(tmp_path / "out"), "--project", "mobile-app")
    assert done.exit_code == 0, done.output
    assert [p.parent.name for p in (tmp_path / "out").glob("*/*.md")] == ["mobile-app"]
    assert Note.objects.filter(project="shop-api").count() == 0

    missing = box.run("import", "--vault", str(tmp_path / "nowhere"))
    assert missing.exit_code == 1 and "no vault at" in missing.output


class _PagedServer:
    """memory_context as the server answers it: newest `limit` notes, `total` of them all."""

    def __init__(self, projects: dict[str, int]):
        self.notes = [{"id": f"{name}-{i}", "project": name}
                      for name, count in projects.items() for i in range(count)]
        self.calls: list[dict] = []

    def call(self, tool: str, arguments: dict) -> dict:
        self.calls.append(arguments)
        chosen = [n for n in self.notes if arguments.get("project") in (None, n["project"])]
        return {"total": len(chosen), "memories": chosen[:arguments["limit"]]}


def test_listing_pages_per_project_and_counts_what_the_tools_cannot_list():
    from agent_cli.vault_sync import list_notes

    server = _PagedServer({"web": 60, "api": 130, "ops": 5})
    listing = list_notes(server, None, None)
    assert [call.get("project") for call in server.calls] == [None, "api", "web"]
    assert len(listing.ids) == 160 and len(set(listing.ids)) == 160
    assert listing.missed == {"api": 30, "(projects not listed)": 5}

    small = _PagedServer({"web": 3})
    assert list_notes(small, "web", "team").ids == ["web-0", "web-1", "web-2"]
    assert small.calls == [{"limit": 100, "project": "web", "memory": "team"}]


def test_broken_front_matter_and_windows_files_are_read_with_a_warning(tmp_path):
    folder = tmp_path / "infra"
    folder.mkdir()
    (folder / "2026-01-05-session.md").write_bytes(
        "\ufeff---\r\nproject: infra\r\ncreated: 2026-13-45\r\ntags: [a, b\r\n---\r\n\r\n"
        "## Decisions\r\n\r\n### Terraform state in S3\r\n**What:** State moved to S3.\r\n"
        .encode())
    (folder / "2026-01-06-session.md").write_text(
        "---\n- just\n- a list\n---\n## Mystery\n\n### Odd heading\n**What:** Kept.\n"
        "**Tags:** x, y\n")
    vault = read_vault(tmp_path)
    first, second = vault.notes
    assert (first.project, first.title, first.what, first.category) == (
        "infra", "Terraform state in S3", "State moved to S3.", "decision")
    assert (second.category, second.tags) == ("context", ["x", "y"])
    assert "not valid YAML" in vault.warnings[0] and "not a mapping" in vault.warnings[1]
