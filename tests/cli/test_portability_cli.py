"""`echo-memory export` and `import` on a real home, as an operator moves a memory."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.conftest import cli_env, run_cli
from tests.cli.test_audit_cli import WRITE, shell

ROOT = str(Path(__file__).resolve().parents[2])
COPY = ("from memories.graph.services import memory_create\n"
        "from accounts.models import Account\n"
        "memory_create(account_id=Account.objects.get().pk, name='copy')\n")
COUNT = ("from memories.models import Fact\n"
         "print('facts', Fact.objects.filter(memory__name='copy').count())\n")


def test_export_then_import_into_another_memory_with_a_dry_run_first(tmp_path):
    # The code under test, whichever checkout runs the suite.
    env = cli_env(tmp_path / "home", ECHO_MEMORY_INDEXING="manual", PYTHONPATH=ROOT)
    assert run_cli("quickstart", "--no-serve", env=env).returncode == 0
    shell(env, WRITE)
    shell(env, COPY)
    out = tmp_path / "default.jsonl"

    exported = run_cli("export", "default", "-o", str(out), "--vectors", env=env)
    assert exported.returncode == 0, exported.stderr
    lines = out.read_text().splitlines()
    assert json.loads(lines[0])["vectors"] is True and json.loads(lines[-1])["records"] == 4

    dry = run_cli("import", str(out), "--into", "copy", "--dry-run", env=env)
    assert dry.returncode == 0, dry.stderr
    assert "fact: 1 created" in dry.stdout and "nothing was written" in dry.stdout
    assert "facts 0" in shell(env, COUNT).stdout

    done = run_cli("import", str(out), "--into", "copy", env=env)
    assert done.returncode == 0 and "fact: 1 created" in done.stdout
    assert "importing" in done.stderr  # the progress bar
    again = run_cli("import", str(out), "--into", "copy", env=env)
    assert "fact: 0 created, 1 already present" in again.stdout
    assert "facts 1" in shell(env, COUNT).stdout

    # Onto a memory the account does not have yet: --create makes it in the same
    # transaction (a dry run makes nothing; a refused file leaves no empty memory).
    missing = run_cli("import", str(out), "--into", "moved", env=env)
    assert missing.returncode == 2 and "moved" in missing.stderr
    dry_new = run_cli("import", str(out), "--into", "moved", "--create", "--dry-run", env=env)
    assert dry_new.returncode == 0, dry_new.stderr
    assert "would make the memory 'moved'" in dry_new.stdout
    made = run_cli("import", str(out), "--into", "moved", "--create", env=env)
    assert made.returncode == 0, made.stderr
    assert "made the memory 'moved'" in made.stdout and "fact: 1 created" in made.stdout
    moved = ("from memories.models import Fact\n"
             "print('moved', Fact.objects.filter(memory__name='moved').count())\n")
    assert "moved 1" in shell(env, moved).stdout

    cut = tmp_path / "cut.jsonl"
    cut.write_text("\n".join(lines[:-1]) + "\n")
    refused = run_cli("import", str(cut), "--into", "copy", env=env)
    assert refused.returncode == 2
    assert f"line {len(lines) - 1}: the file ends without its trailer" in refused.stderr
    assert "Traceback" not in refused.stderr
    refused_new = run_cli("import", str(cut), "--into", "never", "--create", env=env)
    assert refused_new.returncode == 2
    assert "never 0" in shell(env, "from memories.models import Memory\n"
                                   "print('never', Memory.objects.filter(name='never')"
                                   ".count())\n").stdout
