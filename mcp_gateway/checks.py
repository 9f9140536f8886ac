"""`manage.py check --deploy` warns when the conformance suite's tools are served."""

from __future__ import annotations

from django.conf import settings
from django.core.checks import Tags, Warning, register


@register(Tags.security, deploy=True)
def conformance_tools_off(app_configs, **kwargs) -> list[Warning]:
    if not settings.MCP_CONFORMANCE_TOOLS:
        return []
    return [Warning(
        "ECHO_MEMORY_CONFORMANCE_TOOLS is on: /mcp lists the MCP conformance suite's test "
        "tools beside the memory tools, to every key",
        hint="unset ECHO_MEMORY_CONFORMANCE_TOOLS; it is for the conformance run's own server",
        id="mcp_gateway.W001")]
