"""Re-rank recorded candidate lists offline with other fusion constants.

A query through `query_memory` hands `memories.search.hybrid.fuse` its two candidate lists (and
the entities the query names); `FusionTap` keeps them. `refuse` then runs the product's
own `fuse` on them with some of `memories.search.hybrid`'s constants set otherwise, so a grid
of fusion settings costs one server round per question instead of one per setting.
Only the constants `fuse` reads can be varied this way (RRF_K, VECTOR_WEIGHT,
TEXT_WEIGHT, ENTITY_WEIGHT, VECTOR_FLOOR, TEXT_COVERAGE_FLOOR, NEIGHBOUR_WEIGHT,
NEIGHBOUR_SPAN, and LEARNED_RANKING: whether RANK_WEIGHTS order the pool); the candidate
lists themselves (BM25, vectors, pool size) are fixed by
the run that recorded them.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass

FUSION_CONSTANTS = ("RRF_K", "VECTOR_WEIGHT", "TEXT_WEIGHT", "ENTITY_WEIGHT", "VECTOR_FLOOR",
                    "TEXT_COVERAGE_FLOOR", "NEIGHBOUR_WEIGHT", "NEIGHBOUR_SPAN",
                    "LEARNED_RANKING")


@dataclass
class Recorded:
    """What one query handed to fuse."""

    vector: list
    text: list
    mentioned: set
    top_k: int


class FusionTap:
    """Wraps memories.search.hybrid.fuse to keep each call's arguments; answers as fuse does."""

    def __init__(self, search_module) -> None:
        self.module = search_module
        self.inner = search_module.fuse
        self.calls: list[Recorded] = []

    def __call__(self, vector, text, top_k, mentioned=frozenset()):
        self.calls.append(Recorded(list(vector), list(text), set(mentioned), top_k))
        return self.inner(vector, text, top_k, mentioned)

    def install(self) -> FusionTap:
        self.module.fuse = self
        return self

    def take_one(self) -> Recorded:
        if len(self.calls) != 1:
            raise RuntimeError(f"expected one call of memories.search.hybrid.fuse per query, got "
                               f"{len(self.calls)}; the bench reads the candidate lists there")
        recorded = self.calls.pop()
        return recorded


@contextmanager
def constants(search_module, setting: dict[str, float]):
    """memories.search.hybrid's fusion constants set to `setting` for the duration."""
    unknown = set(setting) - set(FUSION_CONSTANTS)
    if unknown:
        raise ValueError(f"not a fusion constant: {sorted(unknown)}")
    saved = {name: getattr(search_module, name) for name in setting}
    try:
        for name, value in setting.items():
            setattr(search_module, name, type(saved[name])(value))
        yield
    finally:
        for name, value in saved.items():
            setattr(search_module, name, value)


def refuse(search_module, fuse, recorded: Recorded, setting: dict[str, float]) -> list[str]:
    """Fact ids, best first, that `fuse` ranks from `recorded` under `setting`."""
    with constants(search_module, setting):
        hits = fuse(recorded.vector, recorded.text, recorded.top_k, recorded.mentioned)
    return [str(hit.fact_id) for hit in hits]
