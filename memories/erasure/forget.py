"""Forgetting: facts, entities (with their facts), whole episodes or notes retracted by id.

One transaction: the rows go (vectors and full-text vectors are columns of them), the
facts written just after a forgotten one in its episode lose its words from their context
words (Fact.context_vector) and go back to the indexer to be embedded without it (their
vectors were made with its text), the word statistics lose their words, recall saves of the
facts go, and the text leaves the audit trail through the erasure that deleting a memory
uses (audit/erase.py): the
events that carry it are erased in place, and one `memory.forgotten` event lists their
seqs, so the account's chain still verifies. Free (no units): it returns nothing.

What goes with what (docs/engine.md, "Forgetting"):
- a fact: its row (its earlier versions are facts of their own and stay unless named); a
  fact it had replaced stays superseded, its `superseded_by` link cleared, and is not made
  live again; a causal link is a fact, so it is no longer walked by trace_cause;
- an entity: every fact to or from it, superseded versions included;
- an episode: every fact it wrote, and the entities it created unless a fact of another
  episode still uses them (then the name is that fact's too);
- a note: its row and its earlier versions.
The entities a forgotten fact touched stay (forget them by id to remove the names); so do
the episode rows of forgotten facts (they hold only session and project labels).

Ids are looked up in the memory and the scope's partition only: another account's,
memory's or partition's id is not found, exactly like an id that never existed, and any
id not found refuses the whole call before anything changes.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from django.db import connection, transaction

from accounts.principal import Principal
from audit.chain import ERASED_SEQS, MEMORY_FORGOTTEN, Change, record
from audit.erase import erase_object_events
from echomem import bulk
from echomem.errors import NotFound, ValidationFailed
from memories.core.scopes import partition_for
from memories.graph.selectors import memory_for
from memories.models import Entity, Episode, Fact, Memory, Note, NoteVersion, RecallSave
from memories.notes.selectors import id_range
from memories.search import indexing, note_words, storing


@dataclass(frozen=True)
class _Named:
    """What the call named to forget, by kind."""

    facts: list[uuid.UUID]
    entities: list[uuid.UUID]
    episodes: list[uuid.UUID]
    notes: list[str]


def forget(principal: Principal, *, scope: str, memory: str | None = None,
           facts: Sequence[uuid.UUID] = (), entities: Sequence[uuid.UUID] = (),
           episodes: Sequence[uuid.UUID] = (), notes: Sequence[str] = ()) -> dict[str, Any]:
    """Erase what is named (note ids or 8+ character prefixes) and everything that goes with
    it, or nothing when any id is not found in this memory and scope."""
    named = _Named(list(facts), list(entities), list(episodes), list(notes))
    graph = memory_for(principal, memory)
    partition = partition_for(principal, scope)
    with transaction.atomic():
        _hold_exclusively(graph)
        named_notes = _note_ids(graph, partition, named.notes)
        _refuse_unknown(graph, partition, scope, named, named_notes)
        note_ids = list(dict.fromkeys(named_notes.values()))
        fact_ids = _facts_to_forget(graph, partition, named)
        entity_ids = _entities_to_forget(graph, partition, named, fact_ids)
        with connection.cursor() as cursor:
            storing.uncount_terms(cursor, fact_ids)
            followers = storing.followers(cursor, fact_ids)
        counted = {
            "recall_saves": RecallSave.objects.filter(fact_id__in=fact_ids).count(),
            "note_versions": NoteVersion.objects.filter(note_id__in=note_ids).count(),
        }
        # The ORM follows every relation the models declare (recall saves, the
        # superseded_by links, note versions), so a table added later is covered.
        episodes_left = list(Fact.objects.filter(pk__in=fact_ids)
                             .values_list("episode_id", flat=True).distinct())
        Fact.objects.filter(pk__in=fact_ids).only("id").delete()
        with connection.cursor() as cursor:
            # The facts written after a forgotten one held its words as their context, and
            # their vectors were made with its text.
            storing.fill_context_vectors(cursor, episodes_left)
            storing.embed_again(cursor, followers)
        if followers:
            transaction.on_commit(partial(indexing.schedule, followers))
        _delete_entities(entity_ids)
        Episode.objects.filter(pk__in=named.episodes).only("id").delete()
        Note.objects.filter(pk__in=note_ids).only("id").delete()
        if note_ids:
            with connection.cursor() as cursor:
                note_words.prune_words(cursor, graph.pk, partition)
        forgotten = {"facts": [str(pk) for pk in fact_ids],
                     "entities": [str(pk) for pk in entity_ids],
                     "episodes": sorted({str(pk) for pk in named.episodes}),
                     "notes": [str(pk) for pk in note_ids]}
        erased = erase_object_events(
            account_id=graph.account_id, memory_id=graph.pk, partition=partition,
            object_ids=forgotten["facts"] + forgotten["entities"] + forgotten["notes"],
            fact_ids=forgotten["facts"])
        record(actor=principal, memory=graph, partition=partition, session_id="",
               changes=[Change(MEMORY_FORGOTTEN, str(graph.pk),
                               after=forgotten | {ERASED_SEQS: erased})])
    counts = {kind: len(ids) for kind, ids in forgotten.items()}
    return {
        **counts, **counted, "audit_events_erased": len(erased), "memory": graph.name,
        "scope": scope, "units": 0,
        "message": (f"Forgot {counts['facts']} fact(s), {counts['entities']} entit"
                    f"{'y' if counts['entities'] == 1 else 'ies'}, {counts['episodes']} "
                    f"episode(s) and {counts['notes']} note(s); their text was erased from "
                    f"{len(erased)} audit event(s)."),
    }


def _hold_exclusively(memory: Memory) -> None:
    """Writes to the memory (which hold it FOR KEY SHARE) wait until the forget commits,
    then resolve names and edges against what is left; a write never lands a fact on an
    entity being deleted."""
    if not bulk.execute("SELECT 1 FROM memories_memory WHERE id = %s FOR UPDATE", [memory.pk]):
        raise NotFound(f"memory {memory.name!r} was deleted; nothing was forgotten",
                       field="memory", fix="name a memory of this account")


def _note_ids(memory: Memory, partition: str, given: list[str]) -> dict[str, uuid.UUID | None]:
    """Each id or prefix -> the one note it names here, or None; one query for all."""
    if not given:
        return {}
    ranges = [id_range(value, field=f"notes[{index}]") for index, value in enumerate(given)]
    rows = bulk.execute(
        "SELECT p.i, n.id FROM unnest(%s::uuid[], %s::uuid[]) WITH ORDINALITY AS p(lo, hi, i) "
        "CROSS JOIN LATERAL (SELECT id FROM memories_note WHERE memory_id = %s "
        "AND partition = %s AND id BETWEEN p.lo AND p.hi ORDER BY id LIMIT 2) n",
        [[lo for lo, _ in ranges], [hi for _, hi in ranges], memory.pk, partition])
    matches: dict[int, list[uuid.UUID]] = {}
    for position, note_id in rows:
        matches.setdefault(position - 1, []).append(note_id)
    for index, found in matches.items():
        if len(found) > 1:
            raise ValidationFailed(
                f"notes[{index}]: the prefix {given[index]!r} matches more than one note "
                f"({found[0]}, {found[1]}); nothing was forgotten", field=f"notes[{index}]",
                fix="pass more characters of the id, or the full id")
    return {value: (matches.get(index) or [None])[0] for index, value in enumerate(given)}


def _refuse_unknown(memory: Memory, partition: str, scope: str, named: _Named,
                    notes: dict[str, uuid.UUID | None]) -> None:
    """Every id must name an object of this memory and partition; else nothing is done."""
    missing: dict[str, list[str]] = {}
    for field, model, ids in (("facts", Fact, named.facts), ("entities", Entity, named.entities),
                              ("episodes", Episode, named.episodes)):
        if ids:
            here = set(model.objects.filter(pk__in=ids, memory_id=memory.pk,
                                            partition=partition).values_list("pk", flat=True))
            unknown = [str(pk) for pk in dict.fromkeys(ids) if pk not in here]
            if unknown:
                missing[field] = unknown
    unknown_notes = [given for given, found in notes.items() if found is None]
    if unknown_notes:
        missing["notes"] = unknown_notes
    if missing:
        listed = "; ".join(f"{field}: {', '.join(ids)}" for field, ids in missing.items())
        raise NotFound(
            f"not found in scope {scope!r} of memory {memory.name!r}: {listed}; nothing "
            "was forgotten", field=next(iter(missing)),
            fix="pass ids this memory returned in the same scope (another scope's or "
                "memory's ids are not found here), or drop the ones already forgotten")


def _facts_to_forget(memory: Memory, partition: str, named: _Named) -> list[uuid.UUID]:
    """The named facts, the facts of the named entities and episodes; locked, in id order
    (an indexer embedding one of them finishes first, so its words are counted by then)."""
    arms = [(column, ids) for column, ids in (("id", named.facts), ("source_id", named.entities),
                                              ("target_id", named.entities),
                                              ("episode_id", named.episodes)) if ids]
    if not arms:
        return []
    # A union of one arm per column keeps each on its own index (a target lookup, which has
    # none, reads this memory's facts once).
    union = " UNION ".join(
        f"SELECT id FROM memories_fact WHERE memory_id = %s AND partition = %s "
        f"AND {column} = ANY(%s)" for column, _ in arms)
    rows = bulk.execute(
        f"SELECT id FROM memories_fact WHERE id IN ({union}) ORDER BY id FOR UPDATE",
        [value for _, ids in arms for value in (memory.pk, partition, list(ids))])
    return [row[0] for row in rows]


def _entities_to_forget(memory: Memory, partition: str, given: _Named,
                        facts: list[uuid.UUID]) -> list[uuid.UUID]:
    """The named entities, and those the named episodes created that no remaining fact
    uses."""
    named = list(dict.fromkeys(given.entities))
    if not given.episodes:
        return named
    created = [pk for pk in Entity.objects.filter(
        episode_id__in=given.episodes, memory_id=memory.pk, partition=partition,
    ).values_list("pk", flat=True) if pk not in set(named)]
    if not created:
        return named
    remaining = Fact.objects.filter(memory_id=memory.pk, partition=partition).exclude(
        pk__in=facts)
    used = (set(remaining.filter(source_id__in=created).values_list("source_id", flat=True))
            | set(remaining.filter(target_id__in=created).values_list("target_id", flat=True)))
    return named + [pk for pk in created if pk not in used]


def _delete_entities(entities: list[uuid.UUID]) -> None:
    """By hand: every fact to or from them is already deleted, and the ORM's cascade would
    look facts up by target in every account (the target column has no index of its own)."""
    if entities:
        bulk.execute("DELETE FROM memories_entity WHERE id = ANY(%s)", [entities])
