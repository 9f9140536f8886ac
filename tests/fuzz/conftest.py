"""One real server for the whole fuzz session, its database, and the Hypothesis budget.

Budget: ECHO_FUZZ_EXAMPLES examples per tool, per transport and per envelope class
(default 120, derandomized: the same cases on every CI run; with twelve tools on two doors
this keeps the suite inside its CI budget). Setting it switches to random seeds, for the
long run described in docs/security-fuzzing.md.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from pathlib import Path

import httpx
import psycopg
import pytest
from hypothesis import HealthCheck, Phase, settings

from tests.cli.conftest import Server, cli_env, run_cli, server_tracebacks
from tests.fuzz.client import Mcp, Rest
from tests.fuzz.invariants import ids_in
from tests.fuzz.ledger import Ledger
from tests.fuzz.server import KEY, Account, FuzzServer, LogWatch
from tests.harness import free_port

logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per request drowns the report
EXAMPLES = int(os.environ.get("ECHO_FUZZ_EXAMPLES", "120"))
LONG_RUN = "ECHO_FUZZ_EXAMPLES" in os.environ
settings.register_profile(
    "echo-fuzz", max_examples=EXAMPLES, derandomize=not LONG_RUN, database=None,
    deadline=None, print_blob=True, phases=[Phase.explicit, Phase.generate, Phase.shrink],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                           HealthCheck.filter_too_much, HealthCheck.large_base_example],
)
FUZZ = settings.get_profile("echo-fuzz")
# The server under fuzz: limits raised so that 429 stays rare (it is a correct answer,
# never a failure), and indexing manual so that no background thread races the checks.
SERVER_ENV = {
    "ECHO_MEMORY_INDEXING": "manual",
    "ECHO_MEMORY_RATE_LIMIT_PER_MINUTE": "1000000",
    "ECHO_MEMORY_UNAUTHENTICATED_RATE_LIMIT_PER_MINUTE": "1000000",
}
SEED_EPISODE = {
    "scope": "shared", "assume_new": True,
    "entities": [{"name": "Seed service", "type": "service"},
                 {"name": "Seed team", "type": "team"}],
    "facts": [{"source": "Seed team", "target": "Seed service", "relation_type": "owns",
               "fact": "Seed team owns the seed service", "confidence": "extracted",
               "causal_hint": "led_to"}],
}


def _socket_dir(home) -> str:
    return (home / "pgdata" / "postmaster.pid").read_text().splitlines()[4]


@pytest.fixture(scope="session")
def fuzz():
    # Not under pytest's basetemp: pytest runs elsewhere on the machine prune old basetemps,
    # and a long run must keep its home (and its log, kept when the server logged a fault).
    root = Path(tempfile.mkdtemp(prefix="echo-fuzz-"))
    home = root / "home"
    env = cli_env(home, **SERVER_ENV)
    accounts = []
    for user in ("fuzz-owner", "fuzz-outsider"):
        made = run_cli("quickstart", "--no-serve", "--user", user, env=env, timeout=300)
        assert made.returncode == 0, made.stdout + made.stderr
        accounts.append(Account(user, KEY.search(made.stdout)[1]))
    port = free_port()
    server = Server(["serve", "--port", str(port), "--threads", "4"], env, root / "serve.log")
    db = None
    try:
        server.wait_healthy(port)
        db = psycopg.connect(f"postgresql://postgres@/echomem?host={_socket_dir(home)}",
                             autocommit=True, options="-c TimeZone=UTC")
        for account in accounts:
            account.id = db.execute("SELECT account_id FROM accounts_apikey WHERE prefix = %s",
                                    [account.key[3:15]]).fetchone()[0]
        state = FuzzServer(f"http://127.0.0.1:{port}", *accounts, db=db,
                           log=LogWatch(server.log))
        # Each account starts with one stored episode: ids to look up, and to leak.
        for account in accounts:
            written = httpx.post(f"{state.base_url}/api/v1/tools/write_episode", json=SEED_EPISODE,
                                 headers={"Authorization": f"Bearer {account.key}"}, timeout=60)
            assert written.status_code == 200 and written.json()["stored"], written.text
            ids = ids_in(written.json())
            if account is state.outsider:
                state.foreign |= ids
            else:
                state.remember(ids)
        state.pool.extend(sorted(state.foreign))  # the owner also asks for the outsider's rows
        state.ledger = Ledger(db, [account.id for account in accounts])
        yield state
    finally:
        if db is not None:
            db.close()
        server.stop()
        found = server_tracebacks(server.output())
        if not found:
            shutil.rmtree(root, ignore_errors=True)
    raised = sorted({traceback.splitlines()[-1] for traceback in found})
    assert not found, (f"the fuzz server logged {len(found)} traceback(s), read them in "
                       f"{server.log}; the exceptions:\n" + "\n".join(raised))


@pytest.fixture
def mcp(fuzz):
    """One MCP session of the owner's key for the test."""
    client = Mcp(fuzz.base_url, fuzz.owner.key)
    yield client
    client.close()


@pytest.fixture
def rest(fuzz):
    client = Rest(fuzz.base_url, fuzz.owner.key)
    yield client
    client.close()
