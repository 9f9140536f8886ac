"""Every read the engine makes. Each takes the Principal and sees only its own partition."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from operator import attrgetter
from typing import Any

import numpy as np
from django.conf import settings
from django.db import connection, transaction

from accounts.limits import may_use_memory, memory_refusal
from accounts.models import Account
from accounts.principal import Principal
from audit.models import AuditEvent
from echomem import bulk
from echomem.errors import NotFound, ValidationFailed
from memories.core import metering
from memories.core.scopes import partition_for
from memories.models import Fact, Memory
from memories.search import candidates, freshness, partition_counts, query_turns
from memories.search import hybrid as search
from memories.search.embeddings import get_embedder
from memories.search.window import Window

DEFAULT_MEMORY_NAME = "default"
CANDIDATES_PER_RETRIEVER = 50


def memory_list(principal: Principal) -> list[Memory]:
    """The account's memories the principal may use (a key limited to some: those)."""
    memories = Memory.objects.filter(account_id=principal.account_id)
    if principal.memory_ids is not None:
        memories = memories.filter(pk__in=principal.memory_ids)
    return list(memories.order_by("name"))


_MEMORY_FIELDS = ["id", "account_id", "name"]


def _shown(name: str, limit: int = 80) -> str:
    return name if len(name) <= limit else name[:limit] + "…"


def memory_for(principal: Principal, name: str | None = None) -> Memory:
    """The named memory, else the key's default, else the account's default.

    An unknown name is refused with the names that do exist: creating a graph by
    use would let a typo open an empty graph that silently recalls nothing.
    """
    # Every call of every tool starts here: one plain statement, not an ORM query (which
    # cost five times as much as the statement itself). The row loads as the ORM would
    # load .only(*_MEMORY_FIELDS), so any other field is fetched on first use.
    if name and not Memory.can_be_named(name):
        which, params = "FALSE", []
    elif name:
        which, params = "m.name = %s", [name]
    elif principal.default_memory_id:
        which, params = "m.id = %s", [principal.default_memory_id]
    else:
        which, params = (f"m.id = (SELECT default_memory_id FROM {Account._meta.db_table} "
                         "WHERE id = %s)", [principal.account_id])
    rows = bulk.execute(f"SELECT {', '.join('m.' + f for f in _MEMORY_FIELDS)} "
                        f"FROM {Memory._meta.db_table} m WHERE m.account_id = %s AND {which}",
                        [principal.account_id, *params])
    if rows:
        memory = Memory.from_db(connection.alias, _MEMORY_FIELDS, rows[0])
        if not may_use_memory(principal, memory.pk):
            raise memory_refusal(principal, (m.name for m in memory_list(principal)))
        return memory
    existing = [memory.name for memory in memory_list(principal)]
    wanted = _shown(name) if name else "the account's default"
    listed = ", ".join(existing) if existing else "none yet"
    raise NotFound(
        f"unknown memory {wanted!r}; this account has: {listed}", field="memory",
        fix="pass one of the existing names, or create the memory in the dashboard first",
    )


_EMBEDDING_POOL = ThreadPoolExecutor(max_workers=2, thread_name_prefix="echo-query-embed")


@lru_cache(maxsize=2048)
def _query_vector(text: str) -> np.ndarray:
    return get_embedder().embed([text])[0]


def embed_query(text: str) -> Future[np.ndarray]:
    """The query's vector, computed in the background while the caller queries Postgres."""
    return _EMBEDDING_POOL.submit(_query_vector, text)


@lru_cache(maxsize=2048)
def question_vector(text: str) -> np.ndarray:
    return get_embedder().embed_quick([text])[0]


def embed_question(text: str) -> Future[np.ndarray]:
    """query_memory's question (and its masked form), by the int8 copy of the model, in
    the background. On two cores the model run shares the CPU with the statements beside
    it: int8 takes 3-4 ms where float32 took 8-10 (100k facts, load 5), and recall holds:
    held out, the same recording made both ways on one machine, LoCoMo 0.816 -> 0.817,
    runbooks 0.788 -> 0.785, pyfaq 0.866 -> 0.861, mixed 0.951 -> 0.950 (nested 0.810 ->
    0.810, 0.785 -> 0.792, 0.841 -> 0.855, 0.949 -> 0.948; docs/benchmarks.md, "Where a
    query's time goes"). The facts' settled vectors stay float32."""
    return _EMBEDDING_POOL.submit(question_vector, text)


def _same(value: Any) -> Any:
    return value


def _text_or_none(value: Any) -> str | None:
    return str(value) if value else None


@dataclass(frozen=True)
class Shown:
    """One key of a fact as shown to agents: the reply's key (a field of
    tools.results.FactOut), the SQL that reads it over `memories_fact f` joined to
    its endpoints `s` and `t`, the ORM path that loads it, and how the value is shown."""

    key: str
    column: str
    path: str
    show: Callable[[Any], Any] = _same


# How a fact is shown to agents, everywhere, declared once: fact_view (model instances),
# fact_views (rows, the hot path) and the ORM's only() are all read off this.
FACT_VIEW = (
    Shown("fact_id", "f.id", "id", str),
    Shown("fact", "f.fact", "fact"),
    Shown("source", "s.name", "source__name"),
    Shown("target", "t.name", "target__name"),
    Shown("relation_type", "f.relation_type", "relation_type"),
    Shown("confidence", "f.confidence", "confidence"),
    Shown("causal_hint", "f.causal_hint", "causal_hint"),
    Shown("session_id", "f.session_id", "session_id"),
    Shown("project", "f.project", "project", lambda project: project or None),
    Shown("written_by", "f.written_by_tool", "written_by_tool", lambda tool: {"tool": tool}),
    Shown("created_at", "f.created_at", "created_at"),
    Shown("valid_at", "f.valid_at", "valid_at"),
    Shown("invalid_at", "f.invalid_at", "invalid_at"),
    Shown("superseded_at", "f.superseded_at", "superseded_at"),
    Shown("superseded_by", "f.superseded_by_id", "superseded_by_id", _text_or_none),
    Shown("episode_id", "f.episode_id", "episode_id", str),
)
# What fact_view reads, plus what the explorer orders and links by; vectors (384 floats
# parsed per row) are never loaded for display.
FACT_VIEW_FIELDS = (*(shown.path for shown in FACT_VIEW), "source_id", "target_id", "position")
_FACT_VIEW_SQL = (
    f"SELECT f.id, {', '.join(shown.column for shown in FACT_VIEW)} FROM memories_fact f "
    "JOIN memories_entity s ON s.id = f.source_id "
    "JOIN memories_entity t ON t.id = f.target_id WHERE f.id = ANY(%s)"
)
_READERS = [attrgetter(shown.path.replace("__", ".")) for shown in FACT_VIEW]


def facts_for_view(queryset):
    """`queryset` with its endpoints joined and only the columns fact_view shows."""
    return queryset.select_related("source", "target").only(*FACT_VIEW_FIELDS)


def fact_view(fact: Fact) -> dict[str, Any]:
    """How a fact is shown to agents, everywhere."""
    return _view([read(fact) for read in _READERS])


def _view(values: Sequence[Any]) -> dict[str, Any]:
    return {shown.key: shown.show(value) for shown, value in zip(FACT_VIEW, values, strict=True)}


def fact_views(ids: list) -> dict[Any, dict[str, Any]]:
    """fact_view for many ids in one query, without building model instances (hot path)."""
    with connection.cursor() as cursor:
        cursor.execute(_FACT_VIEW_SQL, [ids])
        return {row[0]: _view(row[1:]) for row in cursor.fetchall()}


# The indexer thread of this process lets a running query go first (query_turns.py).
@query_turns.queries_first
def query_memory(principal: Principal, *, scope: str, query: str = "", top_k: int = 10,
                 digest: bool = False, include_superseded: bool = False,
                 as_of: datetime | None = None, valid_as_of: datetime | None = None,
                 memory: str | None = None) -> dict[str, Any]:
    # The query's embedding (its model run releases the GIL) is computed while Postgres
    # resolves the memory and runs the word and entity searches; the vector search waits
    # for it.
    embedding = None if digest else embed_question(query)
    graph = memory_for(principal, memory)
    partition = partition_for(principal, scope)
    window = Window(include_superseded=include_superseded, as_of=as_of,
                    valid_as_of=valid_as_of)
    if embedding is None:
        pending = partition_counts.partition_counts(graph.pk, partition).pending
        with transaction.atomic():
            rows = list(facts_for_view(
                Fact.objects.filter(window.q(), memory=graph, partition=partition)
            ).order_by("-created_at", "-position")[:top_k])
            found = len(rows)
            rows = rows[:metering.charge(principal, graph, "query_memory", [1] * found)]
        facts = [{"rank": rank, "score": None, "matched": ["digest"]} | fact_view(row)
                 for rank, row in enumerate(rows, start=1)]
    else:
        pool = max(CANDIDATES_PER_RETRIEVER, top_k * 2)
        # Three reads in one round trip: the partition's counts (a small one is searched
        # exactly), the question's word statistics and the entities it names, whose
        # masked form then embeds while the words are searched. No transaction around the
        # searches: each sends its SET LOCALs with it, and under READ COMMITTED a
        # transaction would not give them one snapshot anyway.
        counted, statistics, named = bulk.execute_all([
            partition_counts.statement(graph.pk, partition),
            candidates.word_statistics(graph.pk, partition, query),
            search.mentions_statement(graph.pk, partition, query)])
        pending, indexed, table_facts = partition_counts.counts_from(counted)
        mentions = search.mentions_from(named)
        masked = (embed_question(search.masked_query(query, mentions.names))
                  if mentions.names and search.MENTION_MASK_WEIGHT else None)
        text = candidates.text_candidates(
            graph.pk, partition, query, pool, window,
            small=pending + indexed <= candidates.EXACT_SEARCH_MAX, statistics=statistics)
        mentioned = mentions.ids if search.ENTITY_WEIGHT else frozenset()
        query_vector = search.query_vector(embedding.result(),
                                           masked and masked.result())
        vector = candidates.vector_candidates(
            graph.pk, partition, query_vector, pool, window,
            exact=indexed <= candidates.EXACT_SEARCH_MAX, table_facts=table_facts)
        if pending and settings.ECHO_MEMORY_QUERY_EMBED_FACTS > 0:
            # Read-your-writes: the best waiting candidates are embedded now (int8, kept as
            # their provisional vector), and the ranking is made with those vectors and any
            # the indexer stored since.
            first = search.fuse(vector, text, len(vector) + len(text), mentioned)
            rescored = freshness.rescore_waiting(
                [hit.fact_id for hit in first], query_vector,
                facts=settings.ECHO_MEMORY_QUERY_EMBED_FACTS,
                seconds=settings.ECHO_MEMORY_QUERY_EMBED_SECONDS)
            vector = search.with_settled(vector, text, rescored.cosines, pool,
                                         just_embedded=set(rescored.embedded))
        hits = search.fuse(vector, text, top_k, mentioned)
        found = len(hits)
        # Paid for before anything is read out for the reply, in a transaction of its own.
        with transaction.atomic():
            hits = hits[:metering.charge(principal, graph, "query_memory", [1] * found)]
        views = fact_views([hit.fact_id for hit in hits])
        facts = [
            {"rank": hit.rank,
             "score": round(hit.cosine, 4) if hit.cosine is not None else None,
             "matched": hit.matched} | views[hit.fact_id]
            for hit in hits
        ]
    reply = {"facts": facts, "memory": graph.name, "scope": scope,
             "count": len(facts), "units": len(facts), "cut_by_allowance": len(facts) < found,
             "facts_pending_vector": pending}
    if reply["cut_by_allowance"]:
        reply["message"] = metering.cut_short(len(facts), found)
    return reply


def get_audit_log(principal: Principal, *, scope: str, since: datetime | None = None,
                  memory: str | None = None, cursor: str | None = None,
                  limit: int = 100) -> dict[str, Any]:
    graph = memory_for(principal, memory)
    partition = partition_for(principal, scope)
    events = AuditEvent.objects.filter(account_id=principal.account_id, memory_id=graph.pk,
                                       partition=partition)
    if since is not None:
        events = events.filter(created_at__gte=since)
    if cursor:
        events = events.filter(seq__gt=_decode_cursor(cursor))
    with transaction.atomic():
        page = list(events.order_by("seq")[:limit + 1])
        more = len(page) > limit
        page = page[:limit]
        # Each fact snapshot the log hands back costs what the fact would cost through
        # query_memory: otherwise paging the log would read a memory for free.
        costs = [_snapshots(e) for e in page]
        paid = metering.charge(principal, graph, "get_audit_log", costs)
    cut = paid < len(page)
    more, page, costs = more or cut, page[:paid], costs[:paid]
    reply = {
        "events": [{
            "seq": e.seq, "at": e.created_at, "action": e.action, "object_id": e.object_id,
            "memory": e.memory_name, "session_id": e.session_id,
            "actor": {"holder_id": e.holder_id, "tool": e.tool}, "before": e.before,
            "after": e.after, "hash": e.hash, "units": WRITE_UNITS.get(e.action, 0),
        } for e in page],
        "next_cursor": _encode_cursor(page[-1].seq) if more else None,
        "memory": graph.name, "scope": scope, "units": sum(costs),
        "cut_by_allowance": cut,
    }
    if cut:
        reply["message"] = (
            f"Returned {len(page)} event(s): the account's monthly unit allowance ran out (each "
            "fact or note snapshot in the log costs one unit, as it would through query_memory "
            "or memory_search). "
            "next_cursor continues from here once units are available; get_usage tells when.")
    return reply


# The events that carry a fact's or a note's text, and on which side: what the log would
# otherwise hand out for free.
SNAPSHOT_SIDE = {"fact.created": "after", "fact.superseded": "before",
                 "note.created": "after", "note.updated": "after"}
# What the write that recorded an event was charged for it: one unit per fact created,
# one per note saved.
WRITE_UNITS = {"fact.created": 1, "note.created": 1, "note.updated": 1}


def _snapshots(event: AuditEvent) -> int:
    """Fact or note snapshots an event carries (a note update's before is the same note, so
    one); an erased event carries none."""
    side = SNAPSHOT_SIDE.get(event.action)
    return int(bool(getattr(event, side))) if side else 0


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
