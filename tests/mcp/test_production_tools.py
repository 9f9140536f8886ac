"""Production's /mcp lists exactly the memory tools: the conformance suite's test-only app
(tests/conformance_app) is installed by tests/conformance_settings.py alone."""

from __future__ import annotations

from django.apps import apps
from django.conf import settings

from mcp_gateway import extensions
from tests.mcp.test_stateless import stateless

TODAYS_TOOLS = ["write_episode", "query_memory", "trace_cause", "get_episode",
                "record_recall_save", "get_audit_log", "get_usage", "memory_save",
                "memory_search", "memory_context", "memory_details", "forget"]


def test_production_settings_do_not_install_the_conformance_app():
    import echomem.settings as production

    assert not any("conformance" in app for app in production.INSTALLED_APPS)
    assert not any("conformance" in app for app in settings.INSTALLED_APPS)
    assert not apps.is_installed("tests.conformance_app")
    assert not extensions.registered()


def test_production_tools_list_is_exactly_todays_twelve_tools(mcp_for, alice):
    session = mcp_for(alice).request("tools/list").json()["result"]["tools"]
    listed = [tool["name"] for tool in session]
    assert listed == TODAYS_TOOLS
    modern = stateless(mcp_for(alice, initialize=False), "tools/list").json()["result"]["tools"]
    assert [tool["name"] for tool in modern] == TODAYS_TOOLS
