"""A box's backup restores into a new box: the audit chain verifies, the key still works and
a query answers the same facts, found by meaning without embedding anything again.

Every step is the command docs/self-hosting.md prints (`echo-memory backup`, `restore`,
`audit verify`, `index`, `serve`), run as separate processes on two homes, each with its own
embedded PostgreSQL.
"""

from __future__ import annotations

import json
import re
import stat
import tempfile
from pathlib import Path

import httpx
import pytest

from tests.cli.conftest import cli_env, run_cli
from tests.harness import free_port

KEY = re.compile(r"API key:\s+(em_[0-9a-f]{12}_[A-Za-z0-9_-]{43})")
QUESTION = "where does the lighthouse keeper live"
NOTE_QUESTION = "why did we pin the tide tables"

# Run inside `echo-memory manage shell`, as the quickstart key's holder: two episodes (the
# second supersedes a fact of the first) and a note, through the tools' handlers.
WRITE = """
from accounts.models import ApiKey
from accounts.principal import Principal
from tools.calling import run_validated
from tools.registry import TOOLS
key = ApiKey.objects.get()
me = Principal(account_id=key.account_id, holder_id=key.holder_id, tool=key.tool, key_id=key.pk)
def fact(source, target, relation, text):
    return {"source": source, "target": target, "relation_type": relation, "fact": text,
            "confidence": "extracted"}
run_validated(me, TOOLS["write_episode"], {"scope": "shared", "assume_new": True,
    "entities": [{"name": "Maren", "type": "person"}, {"name": "Skerry Light", "type": "place"},
                 {"name": "Harbour Town", "type": "place"}],
    "facts": [fact("Maren", "Skerry Light", "keeps", "Maren keeps the Skerry Light"),
              fact("Maren", "Harbour Town", "lives_in", "Maren lives in Harbour Town")]})
run_validated(me, TOOLS["write_episode"], {"scope": "shared",
    "entities": [{"name": "Maren", "type": "person"}, {"name": "Harbour Town", "type": "place"}],
    "facts": [fact("Maren", "Harbour Town", "lives_in",
                   "Maren lives in Harbour Town in winter only, at the light in summer")]})
run_validated(me, TOOLS["memory_save"], {"title": "Pinned tide tables", "category": "decision",
    "what": "Tide tables are pinned to the 2026 almanac.",
    "why": "The harbour master's feed changed format twice."})
"""
# The same reads on either box: a query by meaning, a note search, the audit trail.
READ = f"""
import json
from accounts.models import ApiKey
from accounts.principal import Principal
from audit.models import AuditChainHead, AuditEvent
from tools.calling import run_validated
from tools.registry import TOOLS
key = ApiKey.objects.get()
me = Principal(account_id=key.account_id, holder_id=key.holder_id, tool=key.tool, key_id=key.pk)
facts = run_validated(me, TOOLS["query_memory"], {{"scope": "shared", "query": {QUESTION!r},
                                                  "include_superseded": True}})
notes = run_validated(me, TOOLS["memory_search"], {{"scope": "shared",
                                                    "query": {NOTE_QUESTION!r}}})
print(json.dumps({{
    "facts": [[f["fact_id"], f["fact"], f["score"], f["matched"]] for f in facts["facts"]],
    "facts_pending_vector": facts["facts_pending_vector"],
    "notes": [[n["id"], n["title"], n["score"], n["matched"]] for n in notes["results"]],
    "audit_events": AuditEvent.objects.count(),
    "chain_heads": sorted(AuditChainHead.objects.values_list("account_id", "seq", "hash")),
}}, default=str))
"""


def shell(env: dict[str, str], code: str) -> str:
    result = run_cli("manage", "shell", "-c", code, env=env, timeout=180)
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.fixture(scope="module")
def root():
    """Not under pytest's temporary root: another pytest session on the machine sets that to
    mode 0700, and the embedded server (its own user when run as root) loses its files."""
    with tempfile.TemporaryDirectory(prefix="echo-backup-tests-") as path:
        Path(path).chmod(0o755)
        yield Path(path)


@pytest.fixture(scope="module")
def backed_up_box(root):
    """A box with facts, a superseded fact, a note and their audit events, indexed and
    backed up; (its env, its key, what its reads answer, the backup file)."""
    env = cli_env(root / "box-a", ECHO_MEMORY_INDEXING="manual")
    setup = run_cli("quickstart", "--no-serve", env=env, timeout=300)
    assert setup.returncode == 0, setup.stderr
    key = KEY.search(setup.stdout)[1]
    shell(env, WRITE)
    indexed = run_cli("index", env=env, timeout=180)
    # Three facts and the note (the command counts both).
    assert indexed.returncode == 0 and "indexed 4 fact(s)" in indexed.stdout, indexed.stdout
    answers = json.loads(shell(env, READ).splitlines()[-1])
    archive = root / "box-a.dump"
    done = run_cli("backup", str(archive), env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"backed up the embedded database in {root / 'box-a'}")
    return env, key, answers, archive


@pytest.fixture(scope="module")
def restored_box(backed_up_box, root):
    _, _, _, archive = backed_up_box
    env = cli_env(root / "box-b", ECHO_MEMORY_INDEXING="manual")
    done = run_cli("restore", str(archive), env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "(1 account(s), 3 fact(s))" in done.stdout, done.stdout
    return env, done


def test_the_backup_is_readable_by_its_owner_only(backed_up_box):
    _, _, _, archive = backed_up_box
    assert stat.S_IMODE(archive.stat().st_mode) == 0o600


def test_the_box_had_something_to_lose(backed_up_box):
    _, _, answers, _ = backed_up_box
    # Two episodes' entities and facts, the supersession and the note: a dozen events.
    assert answers["audit_events"] >= 8
    texts = [fact[1] for fact in answers["facts"]]
    assert "Maren lives in Harbour Town in winter only, at the light in summer" in texts
    assert "Maren lives in Harbour Town" in texts  # the superseded one, asked for
    assert answers["facts_pending_vector"] == 0
    assert "vector" in answers["facts"][0][3]
    assert answers["notes"][0][1] == "Pinned tide tables"


def test_the_restored_chain_verifies_every_event(backed_up_box, restored_box):
    env, _ = restored_box
    verified = run_cli("audit", "verify", env=env)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "1 of 1 chain(s) intact" in verified.stdout


def test_the_restored_box_needs_no_migration_and_no_embedding(backed_up_box, restored_box):
    env, _ = restored_box
    migrated = run_cli("migrate", env=env, timeout=180)
    assert migrated.returncode == 0, migrated.stderr
    assert "No migrations to apply." in migrated.stdout
    indexed = run_cli("index", env=env)
    assert indexed.returncode == 0 and "indexed 0 fact(s)" in indexed.stdout, indexed.stdout


def test_the_restored_box_answers_the_same_facts_notes_and_chain(backed_up_box, restored_box):
    _, _, before, _ = backed_up_box
    env, _ = restored_box
    after = json.loads(shell(env, READ).splitlines()[-1])
    assert after == before


def test_the_old_key_queries_the_restored_box_over_http(backed_up_box, restored_box, servers,
                                                        tmp_path):
    _, key, before, _ = backed_up_box
    env, _ = restored_box
    port = free_port()
    server = servers(["serve", "--port", str(port)], env, tmp_path / "serve.log")
    server.wait_healthy(port)
    reply = httpx.post(f"http://127.0.0.1:{port}/api/v1/tools/query_memory",
                       headers={"Authorization": f"Bearer {key}"}, timeout=60,
                       json={"scope": "shared", "query": QUESTION, "include_superseded": True})
    assert reply.status_code == 200, reply.text
    assert [fact["fact_id"] for fact in reply.json()["facts"]] == \
        [fact[0] for fact in before["facts"]]


def test_a_restore_into_a_box_that_holds_data_is_refused(backed_up_box, restored_box):
    env, _ = restored_box
    _, _, _, archive = backed_up_box
    again = run_cli("restore", str(archive), env=env)
    assert again.returncode == 2
    assert again.stderr.startswith("echo-memory: the embedded database in ")
    assert "already holds" in again.stderr and "new ECHO_MEMORY_HOME" in again.stderr


def test_a_file_that_is_not_a_backup_is_refused_before_anything_is_written(root):
    junk = root / "notes.txt"
    junk.write_text("not an archive")
    env = cli_env(root / "box-c")
    refused = run_cli("restore", str(junk), env=env)
    assert refused.returncode == 2
    assert refused.stderr.strip() == ("echo-memory: pg_restore failed: input file does not "
                                      "appear to be a valid archive (too short?)")
    assert "Traceback" not in refused.stderr
