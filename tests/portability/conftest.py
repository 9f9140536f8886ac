"""Portability tests: alice's memory exported, imported into charlie's account (another
tenant) or back into her own, through the engine's services."""

from __future__ import annotations

import json

import pytest

from memories.portability.export import export_memory
from memories.portability.import_ import import_memory
from tests.factories import Engine, fact, note, person


def exported(principal, memory: str = "default", *, vectors: bool = False) -> list[str]:
    return list(export_memory(principal=principal, memory=memory, include_vectors=vectors))


def records(lines: list[str]) -> list[dict]:
    return [json.loads(line) for line in lines]


def imported(principal, lines, memory: str = "default", **options):
    return import_memory(principal=principal, memory=memory, lines=lines, **options)


@pytest.fixture
def filled(alice):
    """alice's default memory: a history (a fact replaced), a causal link, a note with an
    earlier version, a recall save and a solo fact."""
    engine = Engine(alice.principal)
    engine.write(entities=[person("Alice"), {"name": "Acme", "type": "company"}],
                 facts=[fact("Alice", "Acme", "works_at", "Alice works at Acme",
                             valid_at="2020-01-01T00:00:00Z")])
    second = engine.write(
        entities=[person("Alice"), {"name": "Acme", "type": "company"},
                  {"name": "Outage", "type": "event"}, {"name": "Deploy", "type": "event"}],
        facts=[fact("Alice", "Acme", "works_at", "Alice left Acme for good",
                    valid_at="2020-01-01T00:00:00Z", invalid_at="2024-05-01T00:00:00Z"),
               fact("Outage", "Deploy", "caused_by", "The outage was caused by the deploy",
                    causal_hint="caused_by")])
    engine.write(scope="solo", entities=[person("Bob")],
                 facts=[fact("Bob", "Bob", "likes", "Bob likes tea")])
    Engine.index()
    outage = second["edges_created"][1]["fact_id"]
    engine.save(fact_id=outage, note="spared a re-explanation of the outage")
    from tools.calling import run_validated
    from tools.registry import TOOLS

    run_validated(alice.principal, TOOLS["memory_save"], note())
    run_validated(alice.principal, TOOLS["memory_save"], note(what="Moved to JWT, rotated daily"))
    return engine
