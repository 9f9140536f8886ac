"""Helpers for engine tests: call the services the way the transports will."""

from __future__ import annotations

from typing import Any

import pytest

from memories import causal, indexing, selectors, services
from memories.schemas import (
    GetAuditLogArgs,
    QueryMemoryArgs,
    RecordRecallSaveArgs,
    TraceCauseArgs,
    WriteEpisodeArgs,
    parse,
)


class Engine:
    """The five tools, taking the same plain dicts an agent sends."""

    def __init__(self, principal):
        self.principal = principal

    def write(self, **arguments: Any) -> dict[str, Any]:
        arguments.setdefault("scope", "shared")
        return services.write_episode(self.principal, parse(WriteEpisodeArgs, arguments))

    def query(self, query: str = "", **arguments: Any) -> dict[str, Any]:
        arguments.setdefault("scope", "shared")
        return selectors.query_memory(self.principal,
                                      parse(QueryMemoryArgs, {"query": query, **arguments}))

    def trace(self, subject: str, **arguments: Any) -> dict[str, Any]:
        arguments.setdefault("scope", "shared")
        return causal.trace_cause(self.principal,
                                  parse(TraceCauseArgs, {"subject": subject, **arguments}))

    def save(self, **arguments: Any) -> dict[str, Any]:
        arguments.setdefault("scope", "shared")
        return services.record_recall_save(self.principal,
                                           parse(RecordRecallSaveArgs, arguments))

    def audit(self, **arguments: Any) -> dict[str, Any]:
        arguments.setdefault("scope", "shared")
        return selectors.get_audit_log(self.principal, parse(GetAuditLogArgs, arguments))

    @staticmethod
    def index() -> int:
        return indexing.index_pending()


@pytest.fixture
def engine(alice) -> Engine:
    return Engine(alice.principal)


def person(name: str) -> dict[str, str]:
    return {"name": name, "type": "person"}


def fact(source: str, target: str, relation: str, text: str, **extra: Any) -> dict[str, Any]:
    return {"source": source, "target": target, "relation_type": relation, "fact": text,
            "confidence": "extracted", **extra}
