"""The cast: alice owns account A, bob is a member of A, charlie is an outsider with his own."""

from __future__ import annotations

import logging
import uuid
from collections import defaultdict

import pytest

from tests.factories import Actor, make_actor, make_member


@pytest.fixture
def alice(db) -> Actor:
    return make_actor("alice", account="Alice's team", key="laptop", tool="claude-code")


@pytest.fixture
def staff_client(client, alice):
    """A test client signed in as alice, made staff and superuser (the admin's pages)."""
    alice.user.is_staff = alice.user.is_superuser = True
    alice.user.save()
    client.force_login(alice.user)
    return client


@pytest.fixture
def bob(alice: Actor) -> Actor:
    return make_member(alice.account, "bob", key="bot", tool="support-bot")


@pytest.fixture
def charlie(db) -> Actor:
    return make_actor("charlie", account="Charlie's shop", key="cli", tool="cursor")


class _TracebackCatcher(logging.Handler):
    """Every log record that carries a traceback: a request that failed inside the server."""

    def __init__(self) -> None:
        super().__init__(level=logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info:
            self.records.append(record)


@pytest.fixture(autouse=True)
def fresh_plan_rates():
    """Each process caches plan rates for a few seconds; a test starts from the plans' rows."""
    from billing import rates

    rates.forget()


@pytest.fixture(autouse=True)
def fresh_key_cache():
    """Each process keeps the key and MCP session rows it read for half a second; a test
    starts without another's (echomem/short_memory.py)."""
    from accounts import key_cache
    from mcp_gateway import sessions

    key_cache.forget()
    sessions.forget()


@pytest.fixture(autouse=True)
def fresh_rate_limit_windows(settings):
    """Each test counts in its own Redis windows: sign-in pages count per address, and
    every test's client is 127.0.0.1 (the database limiter's rows roll back anyway)."""
    settings.RATE_LIMIT_REDIS_PREFIX = f"{settings.RATE_LIMIT_REDIS_PREFIX}{uuid.uuid4().hex}:"


@pytest.fixture(autouse=True)
def no_server_tracebacks(request):
    """Fail a test whose requests logged a traceback, unless it injects the fault itself.

    A fault the server answers politely (-32603, a JSON 500) is still a bug when bad
    input caused it; the log is where it shows.
    """
    catcher = _TracebackCatcher()
    root = logging.getLogger()
    root.addHandler(catcher)
    try:
        yield catcher
    finally:
        root.removeHandler(catcher)
    if catcher.records and not request.node.get_closest_marker("injects_server_fault"):
        shown = "\n".join(f"{r.name}: {r.getMessage()}" for r in catcher.records)
        pytest.fail(f"the server logged {len(catcher.records)} traceback(s):\n{shown}")


_suite_seconds: dict[str, float] = defaultdict(float)


def _suite_of(nodeid: str) -> str:
    from tests.budgets import BUDGETS

    return next((suite for suite in BUDGETS if nodeid.startswith(suite + "/")), "the rest")


WHOLE_RUN_PROCESSES = 2


def pytest_xdist_auto_num_workers(config):
    """`-n auto` (pyproject.toml): the whole suite in two processes, chosen tests in this
    one, where -x, -s and a debugger behave as usual (pass -n 2 to split them too)."""
    whole = config.args_source == pytest.Config.ArgsSource.TESTPATHS
    return WHOLE_RUN_PROCESSES if whole else 0


def _unit_of(nodeid: str) -> str:
    """What one process runs whole: an expensive suite (its servers start once), else a file."""
    suite = _suite_of(nodeid)
    return suite if suite != "the rest" else nodeid.split("::")[0]


def pytest_collection_modifyitems(items):
    """The longest suites first, so that the two processes of a whole run end together."""
    from tests.budgets import BUDGETS

    rank = {suite: i for i, suite in enumerate(sorted(BUDGETS, key=lambda s: -BUDGETS[s]))}
    items.sort(key=lambda item: rank.get(_suite_of(item.nodeid), len(rank)))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """Two processes share the whole run: most suites mostly wait, on PostgreSQL, on a
    server they started or on the browser. Each unit (`_unit_of`) goes whole to the next
    free process, in collection order."""
    from xdist.scheduler import LoadScopeScheduling

    config.option.loadscopereorder = False  # keep the longest-first order, not by test count
    class ByUnit(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return _unit_of(nodeid)

    return ByUnit(config, log)


def pytest_runtest_logreport(report):
    _suite_seconds[_suite_of(report.nodeid)] += report.duration


def pytest_sessionfinish(session):
    """A worker process hands its fuzzing figures to the one that prints the summary."""
    output = getattr(session.config, "workeroutput", None)
    if output is not None:
        from tests.fuzz import server

        output["fuzz_stats"] = dict(server.STATS)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    from tests.fuzz import server

    server.STATS.update(getattr(node, "workeroutput", {}).get("fuzz_stats", {}))


def _fuzz_summary(terminalreporter) -> None:
    from tests.fuzz import server

    stats = server.STATS
    if stats["requests"]:
        terminalreporter.write_line(
            f"echo fuzz: {stats['cases']} cases in {stats['requests']} requests "
            f"({stats['accepted']} tool calls accepted, {stats['refused']} refused); "
            f"{stats['5xx']} 5xx, {stats['-32603']} -32603, {stats['tracebacks']} server "
            f"tracebacks; {stats['ledger_checks']} ledger checks counting {stats['rows']} rows, "
            f"{stats['events']} audit events verified")


def pytest_terminal_summary(terminalreporter):
    """The fuzzing figures, then each expensive suite's time in this run beside its CI
    budget (tests/budgets.py)."""
    from tests.budgets import BUDGETS, REST

    _fuzz_summary(terminalreporter)

    if not _suite_seconds:
        return
    terminalreporter.section("suite times against their CI budgets (tests/budgets.py)")
    for suite, seconds in sorted(_suite_seconds.items(), key=lambda item: -item[1]):
        budget = BUDGETS.get(suite, REST)
        flag = "  OVER BUDGET" if seconds > budget else ""
        terminalreporter.write_line(f"{suite:<16} {seconds:7.1f} s of {budget:4d} s{flag}")
