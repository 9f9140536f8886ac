"""`manage.py check --deploy` warns when an installed app adds tools, prompts or capabilities
to /mcp (the conformance suite's test-only app, tests/conformance_app, is the one that does)."""

from __future__ import annotations

from django.core.checks import Tags, Warning, register

from mcp_gateway import extensions


@register(Tags.security, deploy=True)
def conformance_tools_off(app_configs, **kwargs) -> list[Warning]:
    if not extensions.registered():
        return []
    return [Warning(
        "/mcp lists tools beside the memory tools, to every key: "
        f"{', '.join(extensions.TOOLS) or '(prompts or capabilities only)'}",
        hint="install only the product's apps; the MCP conformance suite's test app "
             "(tests.conformance_settings) is for the conformance run's own server",
        id="mcp_gateway.W001")]
