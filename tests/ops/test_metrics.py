"""/metrics: Prometheus text behind a token, moving when tools are called."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from echomem.errors import ConfigurationError
from echomem.server import prepare_metrics_directory
from tests.mcp.test_tools import episode

TOKEN = "metrics-token-for-tests-0123456789"


@pytest.fixture
def scrape(client, settings):
    settings.METRICS_TOKEN = TOKEN

    def read() -> dict[tuple[str, tuple], float]:
        response = client.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
        assert response.status_code == 200
        assert response["Content-Type"].startswith("text/plain; version=")
        return {(sample.name, tuple(sorted(sample.labels.items()))): sample.value
                for family in text_string_to_metric_families(response.content.decode())
                for sample in family.samples}

    return read


def value(samples: dict, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def test_metrics_do_not_exist_without_a_token(client, settings, db):
    settings.METRICS_TOKEN = ""
    assert client.get("/metrics").status_code == 404
    assert client.get("/metrics", headers={"Authorization": "Bearer anything"}).status_code == 404


def test_metrics_refuse_a_missing_or_wrong_token(client, settings, db):
    settings.METRICS_TOKEN = TOKEN
    for headers in ({}, {"Authorization": "Bearer wrong-token-0123456789"},
                    {"Authorization": TOKEN}, {"Authorization": f"Basic {TOKEN}"}):
        response = client.get("/metrics", headers=headers)
        assert response.status_code == 401
        assert response["WWW-Authenticate"].startswith("Bearer")
        assert b"echo_memory" not in response.content


def test_a_tool_call_moves_its_counter_latency_and_the_request_count(scrape, mcp_for, alice):
    session = mcp_for(alice)
    before = scrape()
    assert session.call("write_episode", episode())["result"]["stored"] is True
    after = scrape()
    ok = {"tool": "write_episode", "status": "ok"}
    assert value(after, "echo_memory_tool_calls_total", **ok) == \
        value(before, "echo_memory_tool_calls_total", **ok) + 1
    assert value(after, "echo_memory_tool_call_duration_seconds_count", **ok) == \
        value(before, "echo_memory_tool_call_duration_seconds_count", **ok) + 1
    assert value(after, "echo_memory_tool_call_duration_seconds_sum", **ok) > \
        value(before, "echo_memory_tool_call_duration_seconds_sum", **ok)
    # The write was one POST to /mcp answered 200; the first scrape was one more request.
    assert value(after, "echo_memory_http_requests_total", door="mcp", status="200") == \
        value(before, "echo_memory_http_requests_total", door="mcp", status="200") + 1
    assert value(after, "echo_memory_http_requests_total", door="ops", status="200") == \
        value(before, "echo_memory_http_requests_total", door="ops", status="200") + 1


def test_a_refused_tool_call_is_counted_under_its_error_code(scrape, mcp_for, alice):
    session = mcp_for(alice)
    before = scrape()
    reply = session.call("query_memory", {"scope": "shared", "query": "pool",
                                          "memory": "no-such-memory"})
    assert reply["result"]["isError"] is True
    code = reply["result"]["error"]["code"]
    after = scrape()
    assert value(after, "echo_memory_tool_calls_total", tool="query_memory", status=code) == \
        value(before, "echo_memory_tool_calls_total", tool="query_memory", status=code) + 1


def test_rest_tool_calls_are_counted_with_the_same_labels(scrape, client, alice):
    before = scrape()
    response = client.post("/api/v1/tools/get_usage", data={}, content_type="application/json",
                           headers={"Authorization": f"Bearer {alice.plaintext}"})
    assert response.status_code == 200
    after = scrape()
    ok = {"tool": "get_usage", "status": "ok"}
    assert value(after, "echo_memory_tool_calls_total", **ok) == \
        value(before, "echo_memory_tool_calls_total", **ok) + 1
    assert value(after, "echo_memory_http_requests_total", door="api", status="200") == \
        value(before, "echo_memory_http_requests_total", door="api", status="200") + 1


def test_units_are_counted_when_the_write_commits(scrape, mcp_for, alice,
                                                  django_capture_on_commit_callbacks):
    session = mcp_for(alice)
    before = scrape()
    with django_capture_on_commit_callbacks(execute=True):
        assert session.call("write_episode", episode())["result"]["stored"] is True
    after = scrape()
    assert value(after, "echo_memory_units_total", tool="write_episode") == \
        value(before, "echo_memory_units_total", tool="write_episode") + 2


def test_rate_limit_refusals_are_counted(scrape, mcp_for, alice, settings, fake_clock):
    settings.RATE_LIMIT_PER_MINUTE = 3
    session = mcp_for(alice)  # initialize and notifications/initialized: 2 of the 3
    before = scrape()
    assert session.request("ping").status_code == 200
    assert session.request("ping").status_code == 429
    after = scrape()
    assert value(after, "echo_memory_rate_limit_refusals_total", kind="key") == \
        value(before, "echo_memory_rate_limit_refusals_total", kind="key") + 1


def test_backlog_and_lag_are_read_from_the_database(scrape, mcp_for, alice):
    # Inside the test's transaction the indexer (run after commit) never sees these facts:
    # they stay in the backlog, as facts do until a worker embeds them.
    before = scrape()
    assert mcp_for(alice).call("write_episode", episode())["result"]["stored"] is True
    after = scrape()
    assert value(after, "echo_memory_embedding_backlog", kind="fact") == \
        value(before, "echo_memory_embedding_backlog", kind="fact") + 2
    assert value(after, "echo_memory_embedding_lag_seconds", kind="fact") >= 0
    assert value(after, "echo_memory_embedding_backlog", kind="note") >= 0
    assert value(after, "echo_memory_database_up") == 1
    assert value(after, "echo_memory_database_max_connections") > 0
    assert value(after, "echo_memory_database_connections", state="active") >= 1


def test_no_label_names_an_account_or_a_key(scrape, mcp_for, alice):
    mcp_for(alice).call("write_episode", episode())
    labels = {name for (_, pairs) in scrape() for name, _ in pairs}
    assert labels <= {"door", "status", "tool", "kind", "state", "le",
                      # the process and platform collectors of prometheus_client
                      "implementation", "major", "minor", "patchlevel", "version",
                      "generation"}


def test_serve_gives_its_workers_a_fresh_metrics_directory(monkeypatch):
    # Empty counts as unset; monkeypatch then restores this process's own value after.
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", "")
    prepare_metrics_directory()
    directory = Path(os.environ["PROMETHEUS_MULTIPROC_DIR"])
    assert directory.is_dir() and not any(directory.iterdir())
    directory.rmdir()


def test_serve_refuses_a_metrics_directory_it_cannot_write(monkeypatch, tmp_path):
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path / "missing"))
    with pytest.raises(ConfigurationError, match=r"PROMETHEUS_MULTIPROC_DIR=.*missing is not a "
                                                 r"writable directory"):
        prepare_metrics_directory()
