"""`echo-memory audit verify` and `repair dates` on a real home, as an operator runs them."""

from __future__ import annotations

import re

import pytest

from tests.cli.conftest import cli_env, run_cli

# Run inside `echo-memory manage shell`: the quickstart key's holder writes one episode
# (two entities and a fact: audit seqs 1-3), through the same service the tools call.
WRITE = """
from accounts.models import ApiKey
from accounts.principal import Principal
from tools.calling import run_validated
from tools.registry import TOOLS
from memories.graph.services import write_episode
key = ApiKey.objects.get()
principal = Principal(account_id=key.account_id, holder_id=key.holder_id, tool=key.tool,
                      key_id=key.pk)
out = run_validated(principal, TOOLS["write_episode"], {
    "scope": "shared", "assume_new": True,
    "entities": [{"name": "Ines", "type": "person"}, {"name": "Lisbon", "type": "city"}],
    "facts": [{"source": "Ines", "target": "Lisbon", "relation_type": "lives_in",
               "fact": "Ines lives in Lisbon", "confidence": "extracted"}]})
print("account", key.account_id, "fact", out["edges_created"][0]["fact_id"])
"""
# What the old input check let through: year 10000 once read in UTC.
POISON = """
from django.db import connection
with connection.cursor() as cursor:
    cursor.execute("UPDATE memories_fact SET valid_at = '9999-12-31T23:59:59-14:00'")
"""
# As the database superuser, with the append-only trigger switched off.
TAMPER = """
from django.db import connection, transaction
with transaction.atomic(), connection.cursor() as cursor:
    cursor.execute("SET LOCAL session_replication_role = replica")
    cursor.execute("UPDATE memories_auditevent SET after = '{\\"name\\": \\"Mallory\\"}' "
                   "WHERE seq = 2")
"""
WRITTEN = re.compile(r"account (\d+) fact ([0-9a-f-]{36})")


@pytest.fixture
def home_with_an_episode(tmp_path) -> tuple[dict[str, str], int, str]:
    """A fresh quickstart home holding one written episode; (env, account id, fact id)."""
    env = cli_env(tmp_path / "home", ECHO_MEMORY_INDEXING="manual")
    assert run_cli("quickstart", "--no-serve", env=env).returncode == 0
    written = shell(env, WRITE)
    account_id, fact_id = WRITTEN.search(written.stdout).groups()
    return env, int(account_id), fact_id


def shell(env: dict[str, str], code: str):
    result = run_cli("manage", "shell", "-c", code, env=env)
    assert result.returncode == 0, result.stderr
    return result


def test_audit_verify_passes_an_intact_chain_and_names_a_tampered_one(home_with_an_episode):
    env, account_id, _ = home_with_an_episode
    intact = run_cli("audit", "verify", env=env)
    assert intact.returncode == 0, intact.stderr
    assert f"account {account_id} (" in intact.stdout and "): ok" in intact.stdout
    assert "1 of 1 chain(s) intact" in intact.stdout

    shell(env, TAMPER)
    broken = run_cli("audit", "verify", "--account", str(account_id), env=env)
    assert broken.returncode == 1, broken.stderr
    assert re.search(rf"account {account_id} \(.*\): BROKEN at seq 2", broken.stdout)
    assert "0 of 1 chain(s) intact" in broken.stdout

    unknown = run_cli("audit", "verify", "--account", "999999", env=env)
    assert unknown.returncode == 2
    assert unknown.stderr.startswith("echo-memory: there is no account 999999")
    assert "Traceback" not in unknown.stderr


def test_repair_dates_clears_a_poisoned_date_and_keeps_the_chain_intact(home_with_an_episode):
    env, account_id, fact_id = home_with_an_episode
    shell(env, POISON)

    dry = run_cli("repair", "dates", "--dry-run", env=env)
    assert dry.returncode == 0, dry.stderr
    assert "total: would repair 1 fact(s) in 1 account(s)" in dry.stdout

    repaired = run_cli("repair", "dates", env=env)
    assert repaired.returncode == 0, repaired.stderr
    assert f"account {account_id} (" in repaired.stdout
    assert (f"  fact {fact_id} in default (shared): valid_at 10000-01-01 13:59:59+00 -> null"
            in repaired.stdout)
    assert "total: repaired 1 fact(s) in 1 account(s)" in repaired.stdout
    assert "total: repaired 0 fact(s)" in run_cli("repair", "dates", env=env).stdout

    verified = run_cli("audit", "verify", env=env)
    assert verified.returncode == 0, verified.stdout
    assert "1 of 1 chain(s) intact" in verified.stdout


def test_the_maintenance_commands_have_help(tmp_path):
    env = cli_env(tmp_path / "home")
    for command in (["repair", "dates"], ["audit", "verify"]):
        result = run_cli(*command, "--help", env=env)
        assert result.returncode == 0, result.stderr
        assert "Usage: echo-memory " + " ".join(command) in result.stdout
        assert "--account" in result.stdout
    assert not (tmp_path / "home").exists()
