"""Entity resolution: which node each name in an episode means, or why we cannot tell.

Order (DESIGN.md): exact name in the partition; the same normalized name with the
same type; the caller's `entity_resolutions`; `assume_new`; then a similar existing
name (trigram or name-embedding similarity, an abbreviation, the same normalized
name with another type) makes the name ambiguous; anything else is new.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

import numpy as np

from echomem import bulk
from echomem.errors import ValidationFailed
from memories.core.names import MINOR_WORDS, as_abbreviation, initials, normalize, same_type
from memories.graph.inputs import EntityIn
from memories.models import Entity, Memory
from memories.search import vector_params
from memories.search.embeddings import get_embedder

# Chosen on the labelled pairs in tests/memories/test_entity_resolution.py: high enough
# that unrelated names of one kind (Caroline/Melanie, Redis/Postgres) stay apart.
TRIGRAM_THRESHOLD = 0.5
NAME_EMBEDDING_THRESHOLD = 0.82
MAX_CANDIDATES = 5


@dataclass(frozen=True)
class Node:
    """An entity as the write path needs it (no vector, no model instance)."""

    pk: uuid.UUID
    name: str
    type: str
    normalized_name: str


NODE_FIELDS = ("id", "name", "type", "normalized_name")


def _nodes(queryset) -> list[Node]:
    return [Node(*row) for row in queryset.values_list(*NODE_FIELDS)]


@dataclass
class Candidate:
    id: str
    name: str
    type: str
    why: str


@dataclass
class Ambiguity:
    name: str
    type: str
    candidates: list[Candidate] = field(default_factory=list)

    def as_dict(self) -> dict[str, object]:
        return {"name": self.name, "type": self.type,
                "candidates": [c.__dict__ for c in self.candidates]}


@dataclass
class Resolution:
    existing: dict[str, Node]            # name -> node it means
    new: list[EntityIn]                  # names that become nodes
    ambiguous: list[Ambiguity]
    name_embeddings: dict[str, np.ndarray]  # for new names, computed once


def resolve(
    *, memory: Memory, partition: str, entities: list[EntityIn],
    resolutions: dict[str, str], assume_new: bool,
) -> Resolution:
    in_scope = Entity.objects.filter(memory=memory, partition=partition)
    names = [e.name for e in entities]
    # A unique-index probe per name, whatever the statistics say (see _plan_facts).
    exact = {row[1]: Node(*row) for row in bulk.execute(
        "SELECT e.* FROM unnest(%s::text[]) AS n(name) CROSS JOIN LATERAL "
        "(SELECT id, name, type, normalized_name FROM memories_entity WHERE memory_id = %s "
        "AND partition = %s AND name = n.name LIMIT 1) e", [names, memory.pk, partition])}
    result = Resolution(existing={}, new=[], ambiguous=[], name_embeddings={})
    pending: list[EntityIn] = []
    for entity in entities:
        if entity.name in exact:
            result.existing[entity.name] = exact[entity.name]
        else:
            pending.append(entity)
    if not pending:
        return result

    by_normal: dict[str, list[Node]] = {}
    normals = {normalize(e.name) for e in pending}
    for node in _nodes(in_scope.filter(normalized_name__in=normals)):
        by_normal.setdefault(node.normalized_name, []).append(node)
    chosen = _chosen_nodes(in_scope, resolutions)
    undecided: list[EntityIn] = []
    for entity in pending:
        same_name = by_normal.get(normalize(entity.name), [])
        same_kind = [n for n in same_name if same_type(n.type, entity.type)]
        choice = resolutions.get(entity.name)
        if len(same_kind) == 1:
            result.existing[entity.name] = same_kind[0]
        elif choice == "new" or (choice is None and assume_new):
            result.new.append(entity)
        elif choice is not None:
            result.existing[entity.name] = chosen[choice]
        else:
            undecided.append(entity)

    if undecided:
        _embed_names(result, undecided)
        similar = _similar(memory, partition, undecided, by_normal, result.name_embeddings)
        for entity, candidates in zip(undecided, similar, strict=True):
            if candidates:
                result.ambiguous.append(Ambiguity(entity.name, entity.type, candidates))
            else:
                result.new.append(entity)
    new_without_vectors = [e for e in result.new if e.name not in result.name_embeddings]
    if new_without_vectors:
        _embed_names(result, new_without_vectors)
    return result


def _chosen_nodes(in_scope, resolutions: dict[str, str]) -> dict[str, Node]:
    ids = {choice for choice in resolutions.values() if choice != "new"}
    if not ids:
        return {}
    chosen = in_scope.filter(pk__in=[uuid.UUID(i) for i in ids])
    found = {str(node.pk): node for node in _nodes(chosen)}
    for name, choice in resolutions.items():
        if choice != "new" and str(uuid.UUID(choice)) not in found:
            raise ValidationFailed(
                f"entity_resolutions[{name!r}]: no entity {choice} in this scope and memory",
                field=f"entity_resolutions[{name!r}]",
                fix="use an id from ambiguous_entities[].candidates of this scope, or \"new\"",
            )
    return {choice: found[str(uuid.UUID(choice))] for choice in ids}


def _embed_names(result: Resolution, entities: list[EntityIn]) -> None:
    vectors = get_embedder().embed([e.name for e in entities])
    for entity, vector in zip(entities, vectors, strict=True):
        result.name_embeddings[entity.name] = vector


# Similar existing names of every undecided name in one statement (one LATERAL probe per
# name and kind, each through its index), so a 1,500-name episode costs one round trip,
# not three per name. Kinds in the order their reasons are listed.
SIMILAR_NAMES = (
    "SELECT n.i, 1, e.id, e.name, e.type, e.s FROM unnest(%(normals)s::text[]) "
    "WITH ORDINALITY AS n(normal, i) CROSS JOIN LATERAL (SELECT id, name, type, "
    "similarity(normalized_name, n.normal) AS s FROM memories_entity "
    "WHERE memory_id = %(memory)s AND partition = %(partition)s "
    "AND normalized_name %% n.normal ORDER BY s DESC LIMIT %(limit)s) e "
    "UNION ALL "
    "SELECT n.i, 2, e.id, e.name, e.type, e.s FROM unnest(%(vectors)s::vector[]) "
    "WITH ORDINALITY AS n(vector, i) CROSS JOIN LATERAL (SELECT id, name, type, "
    "1 - (name_embedding <=> n.vector) AS s FROM memories_entity "
    "WHERE memory_id = %(memory)s AND partition = %(partition)s "
    "AND name_embedding IS NOT NULL ORDER BY name_embedding <=> n.vector "
    "LIMIT %(limit)s) e "
    "UNION ALL "
    "SELECT n.i, 3, e.id, e.name, e.type, NULL FROM unnest(%(shorts)s::text[], "
    "%(forms)s::text[]) WITH ORDINALITY AS n(short, forms, i) CROSS JOIN LATERAL "
    "(SELECT id, name, type FROM memories_entity WHERE memory_id = %(memory)s "
    "AND partition = %(partition)s AND ((initials <> '' AND initials = n.short) "
    "OR normalized_name = ANY(string_to_array(n.forms, E'\\n'))) LIMIT %(limit)s) e "
    "ORDER BY 1, 2, 6 DESC NULLS LAST"
)


def _similar(
    memory: Memory, partition: str, entities: list[EntityIn], by_normal: dict[str, list[Node]],
    vectors: dict[str, np.ndarray],
) -> list[list[Candidate]]:
    """Each entity's similar existing names (at most MAX_CANDIDATES), with why."""
    found: list[dict[str, Candidate]] = [{} for _ in entities]

    def note(index: int, node_id: object, name: str, kind: str, why: str) -> None:
        candidate = found[index].setdefault(str(node_id), Candidate(str(node_id), name, kind, ""))
        candidate.why = f"{candidate.why}; {why}" if candidate.why else why

    for index, entity in enumerate(entities):
        for node in by_normal.get(normalize(entity.name), []):
            note(index, node.pk, node.name, node.type,
                 f"same name, type {node.type!r} instead of {entity.type!r}")
    # Abbreviations, both ways: 'NYC' finds 'New York City' by its stored initials, and
    # 'New York City' finds an existing 'NYC' by its normalized name. (A normalized name
    # holds no line break, so one joins the forms.)
    rows = bulk.execute(SIMILAR_NAMES, {
        "normals": [normalize(e.name) for e in entities],
        "vectors": [vector_params.vector(vectors[e.name]) for e in entities],
        "shorts": [as_abbreviation(e.name) or None for e in entities],
        "forms": ["\n".join(_abbreviation_forms(e.name)) for e in entities],
        "memory": memory.pk, "partition": partition, "limit": MAX_CANDIDATES,
    })
    for ordinal, kind_of_match, node_id, name, kind, score in rows:
        index = ordinal - 1
        if kind_of_match == 1 and score >= TRIGRAM_THRESHOLD:
            note(index, node_id, name, kind, f"similar spelling ({score:.2f})")
        elif kind_of_match == 2 and score >= NAME_EMBEDDING_THRESHOLD:
            note(index, node_id, name, kind, f"similar meaning ({score:.2f})")
        elif kind_of_match == 3:
            note(index, node_id, name, kind, "abbreviation")
    return [list(candidates.values())[:MAX_CANDIDATES] for candidates in found]


def _abbreviation_forms(name: str) -> list[str]:
    forms = {initials(name)}
    forms.add("".join(w[0] for w in normalize(name).split() if w not in MINOR_WORDS))
    return sorted(f for f in forms if len(f) >= 2)
