"""SIGKILL in the middle of concurrent writes: after a restart every episode is whole or absent.

What is killed, and why. `echo-memory serve` is a gunicorn master and its workers (one
process group: the test starts the command in a session of its own), plus the embedded
PostgreSQL, which is not in that group: pg_ctl starts the postmaster in a session of its
own and each of its children calls setsid too. Killing the server's group alone would
leave the database running and the restart would merely join it, so the test kills every
process of the database too, with SIGKILL: no transaction gets to roll back or write an
abort record, and the restart has to run PostgreSQL's crash recovery. It is a power cut
as far as processes can tell; the kernel's page cache survives, so this proves commit
ordering, synchronous commit and WAL recovery, not the disk's fsync.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psutil
import psycopg
import pytest

from tests.cli.conftest import ECHO_MEMORY, McpClient, Server, cli_env, run_cli
from tests.cli.test_quickstart import KEY
from tests.harness import free_port

CLIENTS = 4                 # two speak MCP, two the REST mirror
ACKNOWLEDGED_BEFORE_KILL = 20
MAX_FACTS = 30


class SessionServer(Server):
    """`echo-memory serve` in a session (and process group) of its own, so that killpg
    reaches its gunicorn master and workers and nothing of the test."""

    def __init__(self, args: list[str], env: dict[str, str], log: Path):
        self.log = log
        self.handle = log.open("w")
        self.process = subprocess.Popen([ECHO_MEMORY, *args], env=env, stdout=self.handle,
                                        stderr=subprocess.STDOUT, text=True,
                                        start_new_session=True)


@pytest.fixture
def home():
    """A home outside pytest's temporary root: run as root, the embedded PostgreSQL runs as
    a system user of its own that must traverse every parent directory, and each pytest
    session that starts meanwhile (another checkout's, say) makes /tmp/pytest-of-root 0700."""
    parent = Path(tempfile.mkdtemp(prefix="echo-memory-crash-"))
    yield parent / "home"
    shutil.rmtree(parent, ignore_errors=True)


@pytest.fixture
def session_servers(home):
    started: list[SessionServer] = []

    def start(args: list[str], env: dict[str, str], log: Path) -> SessionServer:
        server = SessionServer(args, env, log)
        started.append(server)
        return server

    yield start
    for server in started:
        if server.process.poll() is None:  # its group id is still ours: wake what a failed
            os.killpg(server.process.pid, signal.SIGCONT)  # run may have left frozen
        server.stop()
    # Whatever a failed run left behind: the database of this test's home, if still up.
    pidfile = home / "pgdata" / "postmaster.pid"
    if pidfile.exists():
        with contextlib.suppress(psutil.NoSuchProcess):
            postmaster = psutil.Process(int(pidfile.read_text().split()[0]))
            if str(pidfile.parent.resolve()) in " ".join(postmaster.cmdline()):
                _kill([*postmaster.children(recursive=True), postmaster])


@dataclass
class Episode:
    """One write_episode call whose rows can be found without its reply: every entity
    name and fact text carries the run, the client and the episode number."""

    run: str
    client: int
    number: int
    size: int
    outcome: str = "unsent"  # acknowledged | refused | cut off | unreached
    reply: dict[str, Any] = field(default_factory=dict)

    @property
    def hub(self) -> str:
        return f"svc-{self.run}-c{self.client}-n{self.number}-hub"

    def leaf(self, i: int) -> str:
        return f"svc-{self.run}-c{self.client}-n{self.number}-leaf{i}"

    @property
    def entity_names(self) -> set[str]:
        return {self.hub, *(self.leaf(i) for i in range(self.size))}

    @property
    def facts(self) -> dict[tuple[str, str, str], str]:
        """(source, target, relation_type) -> fact text; the marker is one search word."""
        return {
            (self.hub, self.leaf(i), "depends_on"):
                f"{self.hub} depends on {self.leaf(i)} "
                f"(marker k{self.run}c{self.client}n{self.number}f{i})"
            for i in range(self.size)
        }

    def arguments(self) -> dict[str, Any]:
        return {
            "scope": "shared", "assume_new": True,
            "session_id": f"crash-{self.run}-c{self.client}",
            "entities": [{"name": name, "type": "service"} for name in sorted(self.entity_names)],
            "facts": [{"source": s, "target": t, "relation_type": r, "fact": text,
                       "confidence": "extracted"} for (s, t, r), text in self.facts.items()],
        }


class Ledger:
    """What the clients sent and what they were told, shared by the client threads."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.episodes: list[Episode] = []
        self.in_flight = 0
        self.acknowledged = 0
        self.stop = threading.Event()

    def begin(self, episode: Episode) -> None:
        with self.lock:
            self.episodes.append(episode)
            self.in_flight += 1

    def end(self, episode: Episode, outcome: str, reply: dict[str, Any] | None = None) -> None:
        with self.lock:
            self.in_flight -= 1
            episode.outcome = outcome
            episode.reply = reply or {}
            self.acknowledged += outcome == "acknowledged"


def _transport_outcome(error: httpx.TransportError) -> str:
    # Refused before anything was sent, or cut off after the request went out.
    return "unreached" if isinstance(error, httpx.ConnectError) else "cut off"


class RestClient:
    def __init__(self, base: str, key: str):
        self.http = httpx.Client(base_url=base, timeout=30,
                                 headers={"Authorization": f"Bearer {key}"})

    def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any] | None:
        reply = self.http.post(f"/api/v1/tools/{tool}", json=arguments)
        return reply.json() if reply.status_code == 200 else None


def _stream_writes(client: McpClient | RestClient, number: int, run: str,
                   ledger: Ledger) -> None:
    sizes = random.Random(f"{run}-{number}")
    for n in range(1_000_000):
        if ledger.stop.is_set():
            return
        episode = Episode(run, number, n, size=sizes.randint(1, MAX_FACTS))
        ledger.begin(episode)
        try:
            result = client.call("write_episode", episode.arguments())
        except httpx.TransportError as error:
            ledger.end(episode, _transport_outcome(error))
            return
        if result is not None and result.get("stored") is True:
            ledger.end(episode, "acknowledged", result)
        else:
            ledger.end(episode, "refused", result)


def _client_thread(kind: type, base: str, key: str, number: int, run: str,
                   ledger: Ledger, ready: threading.Barrier) -> threading.Thread:
    def work() -> None:
        client = kind(base, key)
        ready.wait(30)
        _stream_writes(client, number, run, ledger)

    return threading.Thread(target=work, name=f"writer-{number}", daemon=True)


def _kill(processes: list[psutil.Process]) -> None:
    for process in processes:
        with contextlib.suppress(psutil.NoSuchProcess):
            process.kill()  # psutil checks it is still the same process (no pid reuse)


def _alive(process: psutil.Process) -> bool:
    """A zombie holds nothing (memory, sockets, shared memory, files): it counts as dead."""
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _crash(server: SessionServer, pgdata: Path) -> dict[str, Any]:
    """SIGKILL the server's process group and every process of its embedded PostgreSQL.

    Two sessions cannot be killed in one system call, so both are frozen first (SIGSTOP):
    the web group at once, so that no reply leaves after this instant; then the
    postmaster, so that it forks no backend while its children are listed. Then SIGKILL
    to all: in-flight transactions die where they stand, without an abort record.
    """
    postmaster = psutil.Process(int((pgdata / "postmaster.pid").read_text().split()[0]))
    group = os.getpgid(server.process.pid)
    layout = {"web": len(psutil.Process(server.process.pid).children()) + 1,
              "database in web group": os.getpgid(postmaster.pid) == group}
    os.killpg(group, signal.SIGSTOP)
    postmaster.send_signal(signal.SIGSTOP)
    database = [*postmaster.children(recursive=True), postmaster]
    web = [p for p in psutil.process_iter() if _same_group(p, group)]
    _kill(database)
    os.killpg(group, signal.SIGKILL)
    server.process.wait(10)
    layout["database"] = len(database)
    deadline = time.monotonic() + 15
    while any(_alive(p) for p in database + web):
        assert time.monotonic() < deadline, [p for p in database + web if _alive(p)]
        time.sleep(0.05)
    assert not [p for p in psutil.process_iter() if _same_group(p, group) and _alive(p)]
    return layout


def _same_group(process: psutil.Process, group: int) -> bool:
    try:
        return os.getpgid(process.pid) == group
    except ProcessLookupError:
        return False


def _stored(pgdata: Path) -> dict[str, Any]:
    """Every graph row of the box, read straight from PostgreSQL over its Unix socket."""
    socket_dir = (pgdata / "postmaster.pid").read_text().splitlines()[4]
    with psycopg.connect(f"postgresql://postgres@/echomem?host={socket_dir}") as conn:
        entities = {name: str(episode) for name, episode in conn.execute(
            "SELECT name, episode_id FROM memories_entity")}
        facts = {str(fid): (text, str(episode)) for fid, text, episode in conn.execute(
            "SELECT id, fact, episode_id FROM memories_fact")}
        episodes = {str(row[0]) for row in conn.execute("SELECT id FROM memories_episode")}
        accounts = [row[0] for row in conn.execute("SELECT id FROM accounts_account")]
    return {"entities": entities, "facts": facts, "episodes": episodes, "accounts": accounts}


AUDIT_CHECK = """
import json
from django.db.models import Count
from audit.chain import ACCOUNT_PARTITION
from audit.models import AuditEvent
from audit.verify import audit_verify
# The graph's events: the account's own (its key, its memory) are not what the writers sent.
events = AuditEvent.objects.filter(account_id={account}).exclude(partition=ACCOUNT_PARTITION)
print(json.dumps({{"verified": audit_verify({account}),
                  "actions": dict(events.values_list("action").annotate(n=Count("id")))}}))
"""


def test_a_killed_server_keeps_every_episode_whole_or_absent_and_every_acknowledged_one(
        home, tmp_path, session_servers):
    run = uuid.uuid4().hex[:6]
    pgdata = home / "pgdata"
    env = cli_env(home, ECHO_MEMORY_RATE_LIMIT_PER_MINUTE="100000")
    setup = run_cli("quickstart", "--no-serve", env=env)
    assert setup.returncode == 0, setup.stderr
    key = KEY.search(setup.stdout)[1]
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    serve = ["serve", "--port", str(port), "--workers", "2", "--threads", "4"]
    first = session_servers(serve, env, tmp_path / "first.log")
    first.wait_healthy(port)

    ledger = Ledger()
    ready = threading.Barrier(CLIENTS + 1)
    threads = [_client_thread(McpClient if n % 2 == 0 else RestClient, base, key, n, run,
                              ledger, ready) for n in range(CLIENTS)]
    for thread in threads:
        thread.start()
    ready.wait(30)
    started = time.monotonic()
    # Kill once enough replies came back, at a moment when writes are in flight.
    while not (ledger.acknowledged >= ACKNOWLEDGED_BEFORE_KILL and ledger.in_flight >= 2):
        assert time.monotonic() - started < 40, (ledger.acknowledged, first.output()[-3000:])
        assert all(thread.is_alive() for thread in threads), first.output()[-3000:]
        time.sleep(0.002)
    with ledger.lock:
        ledger.stop.set()
        acknowledged_before_kill = ledger.acknowledged
        in_flight_at_kill = ledger.in_flight
        layout = _crash(first, pgdata)
    for thread in threads:
        thread.join(30)
        assert not thread.is_alive()
    outcomes = Counter(e.outcome for e in ledger.episodes)
    assert acknowledged_before_kill >= ACKNOWLEDGED_BEFORE_KILL
    assert outcomes["cut off"] >= 1, outcomes
    assert outcomes["refused"] == 0, [e.reply for e in ledger.episodes if e.outcome == "refused"]

    # The same command on the same home comes back healthy, after crash recovery.
    second = session_servers(serve, env, tmp_path / "second.log")
    second.wait_healthy(port)
    assert "database system was not properly shut down" in (pgdata / "log").read_text()
    restarted = psutil.Process(int((pgdata / "postmaster.pid").read_text().split()[0]))

    # It answers a query for an acknowledged fact, and takes a new write.
    some = next(e for e in ledger.episodes if e.outcome == "acknowledged")
    marker = f"k{run}c{some.client}n{some.number}f0"
    found = McpClient(base, key).call("query_memory", {"scope": "shared", "query": marker})
    assert found is not None
    assert some.reply["edges_created"][0]["fact_id"] in [f["fact_id"] for f in found["facts"]]
    after = Episode(run, CLIENTS, 0, size=3)
    after.reply = RestClient(base, key).call("write_episode", after.arguments())
    assert after.reply["stored"] is True
    after.outcome = "acknowledged"
    episodes = [*ledger.episodes, after]

    stored = _stored(pgdata)
    whole = absent = 0
    texts = dict(stored["facts"].values())
    for episode in episodes:
        entities = [stored["entities"].get(name) for name in episode.entity_names]
        facts = [texts.get(text) for text in episode.facts.values()]
        found_rows = [row for row in entities + facts if row is not None]
        if not found_rows:
            absent += 1
            assert episode.outcome != "acknowledged", episode.reply
            continue
        # Never partial: every entity and fact is there, all from one stored episode.
        assert len(found_rows) == len(entities) + len(facts), (
            f"partial episode {episode.hub} ({episode.outcome}): {len(found_rows)} of "
            f"{len(entities) + len(facts)} rows")
        assert len(set(found_rows)) == 1 and found_rows[0] in stored["episodes"]
        whole += 1
        if episode.outcome == "acknowledged":
            assert episode.reply["episode_id"] == found_rows[0]
            sent = episode.facts
            for edge in episode.reply["edges_created"]:
                key_ = (edge["source"], edge["target"], edge["relation_type"])
                assert stored["facts"][edge["fact_id"]] == (sent[key_], found_rows[0])
            assert len(episode.reply["edges_created"]) == episode.size
    # Nothing appeared that nobody sent.
    assert len(stored["entities"]) == sum(len(e.entity_names) for e in episodes
                                          if stored["entities"].get(e.hub))
    assert len(stored["facts"]) == sum(e.size for e in episodes if stored["entities"].get(e.hub))
    assert len(stored["episodes"]) == whole

    # The audit chain verifies and holds one event per stored entity and fact.
    [account] = stored["accounts"]
    check = run_cli("manage", "shell", "-c", AUDIT_CHECK.format(account=account), env=env)
    assert check.returncode == 0, check.stderr
    audit = json.loads(check.stdout.strip().splitlines()[-1])
    assert audit["verified"] == [True, None]
    actions = audit["actions"]
    assert actions.get("entity.created", 0) == len(stored["entities"])
    assert actions.get("fact.created", 0) == len(stored["facts"])
    # Every graph event of the account is one of those (no supersession).
    assert sum(actions.values()) == len(stored["entities"]) + len(stored["facts"]), actions

    # A clean stop of the restarted server stops its database too: nothing is left running.
    assert second.stop() == 0
    assert not (pgdata / "postmaster.pid").exists()
    assert not _alive(restarted)
    assert not [p for p in psutil.process_iter() if _same_group(p, second.process.pid)
                and _alive(p)]
    print(f"\ncrash safety: killed {layout['web']} web processes (gunicorn master + workers) "
          f"and {layout['database']} database processes (in the web group: "
          f"{layout['database in web group']}); episodes sent {len(ledger.episodes)}, acknowledged "
          f"{outcomes['acknowledged']} ({acknowledged_before_kill} before the kill, "
          f"{in_flight_at_kill} in flight at it), cut off {outcomes['cut off']}, unreached "
          f"{outcomes['unreached']}; after restart whole {whole - 1} (of which cut off "
          f"{whole - 1 - outcomes['acknowledged']}), absent {absent}, plus 1 new write; "
          f"facts stored {len(stored['facts'])}, entities "
          f"{len(stored['entities'])}; audit events verified {sum(actions.values())}; "
          f"{time.monotonic() - started:.1f}s from first write")


LOCK_FILES = """
import json
from pathlib import Path
pgdata = Path({pgdata!r})
print(json.dumps({{name: (pgdata / name).read_text()
                  for name in ("postmaster.pid", ".s.PGSQL.5432.lock")}}))
"""


def test_a_restart_ignores_lock_files_left_by_a_killed_database(home):
    """After a crash, postmaster.pid and the socket's lock file still name the dead
    postmaster. Its pid may be a zombie nobody has reaped yet (containers whose init
    reaps lazily) or, after a reboot, another program's: neither may stop a start."""
    env = cli_env(home)
    assert run_cli("quickstart", "--no-serve", env=env).returncode == 0
    shown = run_cli("manage", "shell", "-c", LOCK_FILES.format(pgdata=str(home / "pgdata")),
                    env=env)
    assert shown.returncode == 0, shown.stderr
    left = json.loads(shown.stdout.strip().splitlines()[-1])
    dead, other = subprocess.Popen(["sleep", "60"]), subprocess.Popen(["sleep", "60"])
    try:
        dead.kill()  # and not reaped: a zombie until dead.wait() below
        while psutil.Process(dead.pid).status() != psutil.STATUS_ZOMBIE:
            time.sleep(0.01)
        for pid in (dead.pid, other.pid):
            for name, text in left.items():
                lines = text.splitlines()
                (home / "pgdata" / name).write_text("\n".join([str(pid), *lines[1:]]) + "\n")
            again = run_cli("quickstart", "--no-serve", env=env)
            assert again.returncode == 0, again.stderr
            assert "found your existing account" in again.stdout
            assert not (home / "pgdata" / "postmaster.pid").exists()
    finally:
        other.kill()
        other.wait()
        dead.wait()
