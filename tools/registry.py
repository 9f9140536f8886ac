"""Every tool the product serves, in the order tools/list shows them.

Adding a tool: write its module beside these (arguments, result, handler, TOOL) and list
it here; tools/list, the REST endpoints, the OpenAPI document and the docs' tool lists
follow from this table.
"""

from __future__ import annotations

from tools import (
    forget,
    get_audit_log,
    get_episode,
    get_usage,
    memory_context,
    memory_details,
    memory_save,
    memory_search,
    query_memory,
    record_recall_save,
    trace_cause,
    write_episode,
)
from tools.contract import Tool

TOOLS: dict[str, Tool] = {module.TOOL.name: module.TOOL for module in [
    write_episode, query_memory, trace_cause, get_episode, record_recall_save, get_audit_log,
    get_usage, memory_save, memory_search, memory_context, memory_details, forget,
]}
