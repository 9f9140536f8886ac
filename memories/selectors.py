"""Every read the engine makes. Each takes the Principal and sees only its own partition."""

from __future__ import annotations

import base64
import binascii
from functools import lru_cache
from typing import Any

import numpy as np

from accounts.principal import Principal
from echomem.errors import NotFound, ValidationFailed
from memories import search
from memories.embeddings import get_embedder
from memories.models import AuditEvent, Fact, Memory
from memories.schemas import GetAuditLogArgs, QueryMemoryArgs
from memories.scopes import partition_for

DEFAULT_MEMORY_NAME = "default"
CANDIDATES_PER_RETRIEVER = 50


def memory_list(principal: Principal) -> list[Memory]:
    return list(Memory.objects.filter(account_id=principal.account_id).order_by("name"))


def memory_for(principal: Principal, name: str | None = None) -> Memory:
    """The named memory, else the key's default, else the account's `default`.

    An unknown name is refused with the names that do exist: creating a graph by
    use would let a typo open an empty graph that silently recalls nothing.
    """
    memories = Memory.objects.filter(account_id=principal.account_id)
    if name:
        memory = memories.filter(name=name).first()
    elif principal.default_memory_id:
        memory = memories.filter(pk=principal.default_memory_id).first()
    else:
        memory = memories.filter(name=DEFAULT_MEMORY_NAME).first()
    if memory is not None:
        return memory
    existing = sorted(memories.values_list("name", flat=True))
    wanted = name or DEFAULT_MEMORY_NAME
    listed = ", ".join(existing) if existing else "none yet"
    raise NotFound(
        f"unknown memory {wanted!r}; this account has: {listed}", field="memory",
        fix="pass one of the existing names, or create the memory in the dashboard first",
    )


@lru_cache(maxsize=2048)
def _query_vector(text: str) -> np.ndarray:
    return get_embedder().embed([text])[0]


def fact_view(fact: Fact) -> dict[str, Any]:
    """How a fact is shown to agents, everywhere."""
    return {
        "fact_id": str(fact.pk), "fact": fact.fact,
        "source": fact.source.name, "target": fact.target.name,
        "relation_type": fact.relation_type, "confidence": fact.confidence,
        "causal_hint": fact.causal_hint, "session_id": fact.session_id,
        "project": fact.project or None, "written_by": {"tool": fact.written_by_tool},
        "created_at": fact.created_at, "valid_at": fact.valid_at,
        "invalid_at": fact.invalid_at, "superseded_at": fact.superseded_at,
        "superseded_by": str(fact.superseded_by_id) if fact.superseded_by_id else None,
    }


def query_memory(principal: Principal, args: QueryMemoryArgs) -> dict[str, Any]:
    memory = memory_for(principal, args.memory)
    partition = partition_for(principal, args.scope)
    window = search.Window(include_superseded=args.include_superseded, as_of=args.as_of)
    if args.digest:
        rows = list(
            Fact.objects.filter(window.q(), memory=memory, partition=partition)
            .select_related("source", "target").order_by("-created_at", "-position")[:args.top_k]
        )
        facts = [{"rank": rank, "score": None, "matched": ["digest"]} | fact_view(row)
                 for rank, row in enumerate(rows, start=1)]
    else:
        pool = max(CANDIDATES_PER_RETRIEVER, args.top_k * 2)
        vector = search.vector_candidates(memory.pk, partition, _query_vector(args.query),
                                          pool, window)
        text = search.text_candidates(memory.pk, partition, args.query, pool, window)
        hits = search.fuse(vector, text, args.top_k)
        rows_by_id = Fact.objects.select_related("source", "target").in_bulk(
            [hit.fact_id for hit in hits])
        facts = [
            {"rank": hit.rank,
             "score": round(hit.cosine, 4) if hit.cosine is not None else None,
             "matched": hit.matched} | fact_view(rows_by_id[hit.fact_id])
            for hit in hits
        ]
    return {"facts": facts, "memory": memory.name, "scope": args.scope,
            "count": len(facts), "units": len(facts)}


def get_audit_log(principal: Principal, args: GetAuditLogArgs) -> dict[str, Any]:
    memory = memory_for(principal, args.memory)
    partition = partition_for(principal, args.scope)
    events = AuditEvent.objects.filter(account_id=principal.account_id, memory_id=memory.pk,
                                       partition=partition)
    if args.since is not None:
        events = events.filter(created_at__gte=args.since)
    if args.cursor:
        events = events.filter(seq__gt=_decode_cursor(args.cursor))
    page = list(events.order_by("seq")[:args.limit + 1])
    more = len(page) > args.limit
    page = page[:args.limit]
    return {
        "events": [{
            "seq": e.seq, "at": e.created_at, "action": e.action, "object_id": e.object_id,
            "memory": e.memory_name, "session_id": e.session_id,
            "actor": {"holder_id": e.holder_id, "tool": e.tool}, "before": e.before,
            "after": e.after, "hash": e.hash,
        } for e in page],
        "next_cursor": _encode_cursor(page[-1].seq) if more else None,
        "memory": memory.name, "scope": args.scope, "units": 0,
    }


def _encode_cursor(seq: int) -> str:
    return base64.urlsafe_b64encode(f"seq:{seq}".encode()).decode().rstrip("=")


def _decode_cursor(cursor: str) -> int:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        kind, _, value = raw.partition(":")
        if kind != "seq":
            raise ValueError(kind)
        return int(value)
    except (ValueError, binascii.Error, UnicodeDecodeError):
        raise ValidationFailed("cursor is not one this server issued", field="cursor",
                               fix="pass next_cursor from the previous page unchanged, "
                                   "or omit it to start from the beginning") from None
