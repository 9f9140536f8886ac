"""The real-sentence table past its corpus, for bench/scale_curve.py: "recombined facts".

The corpus (bench/real_corpus.py) has one million distinct sentences, and embedding more
real text costs about 50 minutes a million. Past it, fact i >= len(corpus) joins two
sentences of one memory: its first is corpus row j, its second another row of the same
memory; the text is the two joined with a space, the memory, document and collection are
the first's. So every memory grows in proportion (after whole rounds exactly; in between
in expectation) and the big memory stays the unfiltered class.

Which: the k-th recombined fact (k = i - len(corpus)) is in round r = k // len(corpus)
and starts with row j = order[k % len(corpus)], `order` being the memories' rows
interleaved at random as the load writes them (bench/scale_real_load.interleaved), so
the new rows are spread over the heap and each chunk of ids holds every memory's. Each
memory's rows are put in a seeded random cycle; round r pairs each row with the one
offsets[r] further along it, offsets[r] being distinct, drawn from 1 .. (size - 1) // 2.
Below half the cycle an offset fixes the pair's distance, so no two facts join the same
two sentences, in either order, and never a sentence with itself. Deterministic: ids,
texts and vectors depend on the corpus and the seed alone, not on how far a run goes.

The vector is a stand-in, not the model's: the normalized mean of the two sentences'
cached vectors (MiniLM mean-pools its tokens, so this approximates the joined text's
vector); `scale_curve.py --calibrate N` measures how closely.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from bench.scale_real_load import interleaved

SEED = 61


class Recombined:
    """The first `upto` facts of the grown table: rows and their vectors by index."""

    def __init__(self, base_rows: list[dict], base_vectors: np.ndarray, upto: int,
                 seed: int = SEED) -> None:
        self.base_rows, self.base_vectors = base_rows, base_vectors
        self.base, self.upto = len(base_rows), upto
        rng = np.random.default_rng(seed)
        self.order = interleaved(base_rows, seed)
        self.names = names = sorted({row["m"] for row in base_rows})
        code = {name: c for c, name in enumerate(names)}
        self.memory = np.array([code[row["m"]] for row in base_rows])
        rounds = max(0, -(-(upto - self.base) // self.base))
        # Per memory: its rows as a cycle (concatenated), where each row stands in it, and
        # one distinct offset a round (-1 where the memory has no pair left).
        self.cycle = np.empty(self.base, dtype=np.int64)
        self.place = np.empty(self.base, dtype=np.int64)
        self.start = np.zeros(len(names), dtype=np.int64)
        self.size = np.bincount(self.memory, minlength=len(names))
        self.offsets = np.full((len(names), max(rounds, 1)), -1, dtype=np.int64)
        at = 0
        for c, name in enumerate(names):
            cycle = rng.permutation(np.flatnonzero(self.memory == c))
            self.cycle[at:at + len(cycle)] = cycle
            self.place[cycle] = np.arange(len(cycle))
            self.start[c] = at
            drawn = 1 + rng.permutation((len(cycle) - 1) // 2)
            self.offsets[c, :min(rounds, len(drawn))] = drawn[:rounds]
            if rounds > len(drawn) and self.size[c]:
                # Only a memory too small for its share of rounds (none in the 1M corpus,
                # whose smallest memories have hundreds of facts).
                raise SystemExit(f"memory {name} has {len(cycle)} facts: {len(drawn)} "
                                 f"rounds of distinct pairs, {rounds} wanted for {upto:,}")
            at += len(cycle)

    def pairs(self, indexes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The two corpus rows of each recombined fact in `indexes` (all >= the base)."""
        k = np.asarray(indexes, dtype=np.int64) - self.base
        first = self.order[k % self.base]
        c = self.memory[first]
        offset = self.offsets[c, k // self.base]
        second = self.cycle[self.start[c] + (self.place[first] + offset) % self.size[c]]
        return first, second

    def sizes(self, upto: int) -> dict[str, int]:
        """Facts per memory among the first `upto` (at least the corpus)."""
        grown = upto - self.base
        counts = self.size * (1 + grown // self.base) + np.bincount(
            self.memory[self.order[:grown % self.base]], minlength=len(self.names))
        return dict(zip(self.names, counts.tolist(), strict=True))

    def rows(self, start: int, end: int) -> list[dict]:
        """Facts start .. end - 1 as the corpus' rows are: m(emory), s, t (the document
        and the collection), f (the text)."""
        out = self.base_rows[start:min(end, self.base)]
        if end > self.base:
            first, second = self.pairs(np.arange(max(start, self.base), end))
            rows = self.base_rows
            out = out + [{"m": rows[a]["m"], "s": rows[a]["s"], "t": rows[a]["t"],
                          "f": f"{rows[a]['f']} {rows[b]['f']}"}
                         for a, b in zip(first.tolist(), second.tolist(), strict=True)]
        return out

    def vectors(self, indexes) -> np.ndarray:
        """float16 vectors of these facts (one index: one vector); a recombined fact's is
        the normalized mean of its two sentences' (rounded to float16, as stored)."""
        single = np.ndim(indexes) == 0
        indexes = np.atleast_1d(np.asarray(indexes, dtype=np.int64))
        out = np.empty((len(indexes), self.base_vectors.shape[1]), dtype=np.float16)
        old = indexes < self.base
        out[old] = self.base_vectors[indexes[old]]
        for at in range(0, int((~old).sum()), 500_000):  # bounded float32 temporaries
            where = np.flatnonzero(~old)[at:at + 500_000]
            first, second = self.pairs(indexes[where])
            mean = (self.base_vectors[first].astype(np.float32)
                    + self.base_vectors[second].astype(np.float32))
            mean /= np.linalg.norm(mean, axis=1, keepdims=True)
            out[where] = mean
        return out[0] if single else out


class Table:
    """The first `size` facts as bench/scale_real.py's recall reads the table: a sequence
    of rows and an indexable of vectors, made on demand (10M rows would not fit as
    dicts, nor their vectors beside the exact search's float32 blocks)."""

    def __init__(self, recombined: Recombined, size: int) -> None:
        self.recombined, self.size = recombined, size
        self.vectors = _Vectors(recombined)

    def __len__(self) -> int:
        return self.size

    def __iter__(self) -> Iterator[dict]:
        for start in range(0, self.size, 100_000):
            yield from self.recombined.rows(start, min(start + 100_000, self.size))


class _Vectors:
    def __init__(self, recombined: Recombined) -> None:
        self.recombined = recombined

    def __getitem__(self, indexes) -> np.ndarray:
        return self.recombined.vectors(indexes)
