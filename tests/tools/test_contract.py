"""The tool contract's declarations hold: every tool module is registered, and what a tool
says it audits and charges is what a real call does."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import tools
from accounts.principal import principal_from_key
from audit.models import AuditEvent
from tests.tool_arguments import base_arguments, renamed
from tools.calling import call_tool
from tools.registry import TOOLS


def test_every_tool_module_is_registered_once():
    declared = {}
    for module in pkgutil.iter_modules(tools.__path__):
        tool = getattr(importlib.import_module(f"tools.{module.name}"), "TOOL", None)
        if tool is not None:
            declared[module.name] = tool.name
    assert declared == {name: name for name in TOOLS}, "one module per tool, named after it"


@pytest.fixture
def arguments(alice):
    """alice's principal, and arguments that name a real episode, fact and note."""
    principal = principal_from_key(alice.plaintext)
    placeholder = {"episode_id": "", "fact_id": "", "note_id": ""}
    written = call_tool(principal, TOOLS["write_episode"],
                        base_arguments(placeholder)["write_episode"])
    note = call_tool(principal, TOOLS["memory_save"],
                     base_arguments(placeholder)["memory_save"] | {"title": "Seed note"})
    ids = {"episode_id": written["episode_id"], "fact_id": written["edges_created"][0]["fact_id"],
           "note_id": note["id"]}
    valid = base_arguments(ids)
    # Different names: a write that stores something rather than finding it stored.
    valid["write_episode"] = renamed(valid["write_episode"], "again")
    return principal, valid


@pytest.mark.parametrize("name", list(TOOLS))
def test_a_call_audits_and_charges_what_its_tool_declares(arguments, name):
    principal, valid = arguments
    tool = TOOLS[name]
    events = AuditEvent.objects.filter(account_id=principal.account_id)
    last = events.order_by("-seq").values_list("seq", flat=True).first() or 0

    reply = call_tool(principal, tool, valid[name])

    recorded = set(events.filter(seq__gt=last).values_list("action", flat=True))
    assert recorded <= tool.audits, f"{name} recorded {recorded - tool.audits} undeclared"
    if tool.audits:
        assert recorded, f"{name} declares audit events and recorded none"
    assert (reply["units"] > 0) == bool(tool.meters), (name, reply["units"], tool.meters)
