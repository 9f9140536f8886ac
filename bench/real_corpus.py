"""A corpus of ~1M distinct real sentences in many memories, with their model vectors.

    nice -n 19 .venv/bin/python bench/real_corpus.py build    # sentences, memories, questions
    nice -n 19 .venv/bin/python bench/real_corpus.py embed    # resumable; prints progress

`build` reads bench/real_sources.py's sources (Debian documentation packages, apt's
package descriptions, LoCoMo, bench/data; docs/benchmarks.md lists them), keeps prose
sentences, drops repeats (case and spacing folded) and deals them into memories by
source, so each memory is about one thing:

- debian: package descriptions and man pages (200,000 facts at 1M, 20,000 at 100k);
- python: the Python and SQLAlchemy manuals (50,000; not in the 100k table);
- git: the git manual (10,000, both tables);
- small memories under EXACT_SEARCH_MAX: each LoCoMo conversation, the runbooks and
  notes sets, and the smaller manuals and fortune files cut into memories of at most
  3,500 facts by document (14,000 facts in all at 100k); at 1M also memories of 300 to
  3,500 facts cut from each EXTRA source (140,000 small-memory facts wanted in all);
- big: the rest (the BIG sources, then the EXTRA ones, then what the memories above
  leave), so the whole table is 1M (or 100k).

A memory's facts are its documents (shuffled, seeded) in document order; the 100k table
is a prefix of each 1M memory, written first, so `embed` has it after a tenth of the
work. A fact is (source entity, target entity, sentence): the document (page, package,
man page, speaker) and the collection ("PostgreSQL manual"); what is embedded is the
product's search text (memories/search/fact_text.py), the sentence plus the names it
leaves out, each sentence alone (embedding context 0).

Questions, per memory, from the same sources' headings and summaries (real_text.py),
none equal to a corpus sentence, none asked twice.

Everything lands in bench/.cache/real-corpus/: corpus.jsonl.gz, questions.json and
vectors-NNNNN.npz (float16 vectors with their text's key, CHUNK a file), written chunk by
chunk so an interrupted `embed` resumes where it stopped, and a rebuilt corpus reuses
every vector whose text it still has.

`embed --model int8` embeds with the int8 copy of the model that query_memory ranks waiting
facts by (memories/search/embeddings.py: cosine to the float32 vectors 0.993 mean), into
vectors-int8-NNNNN.npz: three times the rate on a CPU with VNNI (the million in 46
minutes, niced beside other jobs), so it fits in one session. The product never stores
such a vector as a settled one; for this bench they only stand in for real sentence
vectors whose HNSW neighbours are compared with exact search over the same vectors.
`vectors()` takes a text's float32 vector where the cache has one, and says how many rows
came from the int8 copy.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import random
import re
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench import real_sources
from bench.setup import CACHE

HOME = CACHE / "real-corpus"
CHUNK = 10_000
FULL = 1_000_000
SMALL_MAX = 3_500
# The three filtered memories, each of one kind of text, and the big one's sources.
NAMED = {"debian": ("packages", "man"), "python": ("python", "sqlalchemy"), "git": ("git",)}
BIG = ("postgres", "django", "perl", "java", "erlang", "node", "kernel", "rust", "scipy",
       "pandas")
# Sources added once the 100k table was embedded: the big memory's facts after the BIG
# sources', so the 100k table (a prefix of each memory) is unchanged.
EXTRA = ("qt", "boost", "llvm", "gimp", "sklearn", "astropy", "grass", "sqlite", "ghc",
         "wireshark", "biopython", "kicad", "apache", "cmake", "maxima", "skimage",
         "statsmodels", "sympy", "racket", "octave", "gnome")
# Facts per memory in each table; "big" takes what is left, "small" is all the small
# memories together, taken whole in order.
LAYOUT = {
    1_000_000: {"debian": 200_000, "python": 50_000, "git": 10_000, "small": 140_000},
    100_000: {"debian": 20_000, "git": 10_000, "small": 14_000},
}
COLLECTIONS = {"packages": "Debian packages", "postgres": "PostgreSQL manual",
               "git": "git manual", "python": "Python documentation",
               "django": "Django documentation", "perl": "Perl documentation",
               "man": "man pages", "bash": "Bash reference manual",
               "sphinx": "Sphinx documentation", "handbook": "Debian Administrator's Handbook",
               "reference": "Debian Reference", "fortunes": "fortune cookies",
               "locomo": "conversation", "runbooks": "Tallyline operations",
               "notes": "coding notes", "notes-team": "team notes",
               "java": "Java SE 17 API", "erlang": "Erlang/OTP documentation",
               "sqlalchemy": "SQLAlchemy documentation", "node": "Node.js API",
               "kernel": "Linux kernel documentation", "rust": "Rust documentation",
               "scipy": "SciPy documentation", "pandas": "pandas documentation",
               "qt": "Qt 5 documentation", "boost": "Boost documentation",
               "llvm": "LLVM documentation", "gimp": "GIMP user manual",
               "sklearn": "scikit-learn documentation", "astropy": "Astropy documentation",
               "grass": "GRASS GIS manual", "sqlite": "SQLite documentation",
               "ghc": "GHC documentation", "wireshark": "Wireshark guides",
               "biopython": "Biopython tutorial", "kicad": "KiCad manual",
               "apache": "Apache HTTP Server manual", "cmake": "CMake documentation",
               "maxima": "Maxima manual", "skimage": "scikit-image documentation",
               "statsmodels": "statsmodels documentation", "sympy": "SymPy documentation",
               "racket": "Racket documentation", "octave": "GNU Octave manual",
               "gnome": "GNOME help"}


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')} load {os.getloadavg()[0]:.1f}] {message}",
          file=sys.stderr, flush=True)


def _fold(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().casefold()


class Collector:
    """Documents per source, each sentence once over all sources (the first source in
    real_sources.SOURCES' order that has it keeps it)."""

    def __init__(self) -> None:
        self.seen: set[str] = set()
        self.docs: dict[str, list[tuple[str, list[str]]]] = defaultdict(list)
        self.questions: dict[str, list[str]] = defaultdict(list)

    def add(self, source: str, document: str, texts: list[str]) -> None:
        kept = []
        for sentence in texts:
            key = _fold(sentence)
            if key not in self.seen:
                self.seen.add(key)
                kept.append(sentence)
        if kept:
            self.docs[source].append((document, kept))

    def count(self, source: str) -> int:
        return sum(len(s) for _, s in self.docs[source])


def collect() -> Collector:
    """Every source's documents (read once, then from bench/.cache), deduplicated."""
    import pickle

    c = Collector()
    folder = HOME / "sources"
    folder.mkdir(parents=True, exist_ok=True)
    for name, read in real_sources.SOURCES:
        path = folder / f"{name}.pickle"
        if not path.exists():
            read_docs, read_questions = read()
            with open(path.with_suffix(".tmp"), "wb") as out:
                pickle.dump((read_docs, read_questions), out)
            path.with_suffix(".tmp").rename(path)
        with open(path, "rb") as cached:
            read_docs, read_questions = pickle.load(cached)
        for source, document, texts in read_docs:
            c.add(source, document, texts)
        for source, questions in read_questions.items():
            c.questions[source] += questions
        log(f"{name}: {sum(c.count(s) for s in {d[0] for d in read_docs}):,} sentences")
    return c


def _small_memories(c: Collector, rng: random.Random) -> list[tuple[str, list[tuple]]]:
    """(memory, facts) of the small memories: whole sets, and manuals cut by document."""
    out = []
    for source in sorted(s for s in c.docs if s.startswith("locomo:")):
        out.append((source.replace(":", "-"), _facts(c, source, c.docs[source])))
    for source in ("runbooks", "notes", "notes-team"):
        out.append((source, _facts(c, source, c.docs[source])))
    for source in ("bash", "reference", "handbook", "sphinx", "fortunes"):
        docs = list(c.docs[source])
        rng.shuffle(docs)
        part, count, n = [], 0, 0
        for document in docs:
            if part and count + len(document[1]) > SMALL_MAX:
                out.append((f"{source}-{n}", _facts(c, source, part)))
                part, count, n = [], 0, n + 1
            part.append((document[0], document[1][:SMALL_MAX]))
            count += len(part[-1][1])
        if part:
            out.append((f"{source}-{n}", _facts(c, source, part)))
    # Interleaved, so the 100k table's first 14,000 take some of each kind.
    rng.shuffle(out)
    return out


def _facts(c: Collector, source: str, docs) -> list[tuple]:
    collection = COLLECTIONS[source.split(":")[0]]
    if source.startswith("locomo:"):
        return [_locomo_fact(text) for _, texts in docs for text in texts]
    # A package's name is already what a person writes ("python3.11", not a path).
    name = (lambda d: d) if source == "packages" else display_name
    return [(name(document), collection, text) for document, texts in docs for text in texts]


def display_name(document: str) -> str:
    """A document's entity name as a person would write it: 'library/os' -> 'os',
    'std/collections/struct.HashMap' -> 'HashMap', 'ls.1' -> 'ls(1)'."""
    name = document.rsplit("/", 1)[-1].removesuffix(".rst").removesuffix(".txt")
    kind = re.fullmatch(r"(?:struct|trait|fn|enum|macro|primitive|keyword|constant|type|union"
                        r"|attr|derive|static)\.(.+)", name)
    if kind:
        return kind.group(1)
    section = re.fullmatch(r"(.+)\.(\d\w*)", name)
    return f"{section.group(1)}({section.group(2)})" if section else name


def _locomo_fact(text: str) -> tuple:
    speaker = text.split(" on ", 1)[0]
    return (speaker, "conversation", text)


def layout(c: Collector) -> tuple[list[dict], dict[str, list[str]]]:
    """The corpus rows in embedding order (the 100k table first) and each memory's
    questions."""
    rng = random.Random(43)
    memories: dict[str, list[tuple]] = {}
    for name, sources in NAMED.items():
        docs = [(source, d) for source in sources for d in c.docs[source]]
        rng.shuffle(docs)
        memories[name] = [f for source, d in docs for f in _facts(c, source, [d])]
    small = _small_memories(c, rng)
    big_docs = [(s, d) for s in BIG for d in c.docs[s]]
    rng.shuffle(big_docs)
    extra_docs = [(s, d) for s in EXTRA for d in c.docs[s]]
    rng.shuffle(extra_docs)
    carved, extra_docs = _carve_small(
        c, extra_docs, LAYOUT[FULL]["small"] - sum(len(f) for _, f in small))
    big = [(display_name(document), COLLECTIONS[s], text)
           for s, (document, texts) in big_docs + extra_docs for text in texts]
    # What the three named memories leave over their 1M quota joins the big one.
    for source, quota in LAYOUT[FULL].items():
        if source in memories:
            big += memories[source][quota:]
            memories[source] = memories[source][:quota]
    # After the others, so the 100k table takes the same small memories as before.
    small_full = _take_small(small + carved, LAYOUT[FULL]["small"])
    named = sum(LAYOUT[FULL][s] for s in NAMED)
    need_big = FULL - named - sum(len(f) for _, f in small_full)
    if len(big) < need_big:
        log(f"only {len(big):,} sentences for the big memory, {need_big:,} wanted: the full "
            f"table is {FULL - need_big + len(big):,} facts")
    memories["big"] = big[:need_big]
    for name, facts in small_full:
        memories[name] = facts
    small_tenth = _take_small(small_full, LAYOUT[100_000]["small"])
    tenth = {**{s: n for s, n in LAYOUT[100_000].items() if s != "small"},
             **{name: len(f) for name, f in small_tenth}}
    tenth["big"] = 100_000 - sum(tenth.values())
    rows: list[dict] = []
    for tier in (0, 1):
        for name, facts in memories.items():
            start, end = (0, tenth.get(name, 0)) if tier == 0 else (tenth.get(name, 0),
                                                                      len(facts))
            rows += [{"m": name, "s": s, "t": t, "f": f, "tier": tier}
                     for s, t, f in facts[start:end]]
    questions = _questions(c, memories)
    return rows, questions


def _carve_small(c: Collector, docs, budget: int):
    """Many more small memories for the 1M table (past the 100k one): from each EXTRA
    source, by document, memories of 300 to 3,500 facts (drawn), an equal share of
    `budget` each. Returns them and the documents left for the big memory."""
    rng = random.Random(59)
    share = budget // len(EXTRA)
    by_source: dict[str, list] = defaultdict(list)
    for source, document in docs:
        by_source[source].append(document)
    carved, left = [], []
    for source in EXTRA:
        taken, part, target, n = 0, [], rng.randint(300, SMALL_MAX), 0
        for document in by_source[source]:
            if taken >= share:
                left.append((source, document))
                continue
            part.append((document[0], document[1][:SMALL_MAX]))
            taken += len(part[-1][1])
            if sum(len(t) for _, t in part) >= target:
                carved.append((f"{source}-{n}", _facts(c, source, part)))
                part, target, n = [], rng.randint(300, SMALL_MAX), n + 1
        if part:
            carved.append((f"{source}-{n}", _facts(c, source, part)))
    return [(name, facts[:SMALL_MAX]) for name, facts in carved], left


def _take_small(small, budget: int):
    out, total = [], 0
    for name, facts in small:
        if total + len(facts) > budget:
            continue
        out.append((name, facts))
        total += len(facts)
    return out


def _questions(c: Collector, memories) -> dict[str, list[str]]:
    """Each memory's questions: its sources', none a corpus sentence, none repeated."""
    asked: set[str] = set()

    def fresh(questions):
        out = []
        for q in questions:
            key = _fold(q)
            if key not in asked and key not in c.seen:
                asked.add(key)
                out.append(q)
        return out

    rng = random.Random(47)
    out = {name: fresh([q for s in sources for q in c.questions[s]])
           for name, sources in NAMED.items()}
    big = fresh([q for s in BIG for q in c.questions[s]])
    rng.shuffle(big)
    out["big"] = big
    for name in memories:
        if name.startswith("locomo-"):
            out[name] = fresh(c.questions[name.replace("-", ":", 1)])
        elif name in ("runbooks", "notes", "notes-team"):
            out[name] = fresh(c.questions[name])
    for qs in out.values():
        rng.shuffle(qs)
    return out


def build() -> None:
    c = collect()
    rows, questions = layout(c)
    HOME.mkdir(parents=True, exist_ok=True)
    with gzip.open(HOME / "corpus.jsonl.gz", "wt") as out:
        for row in rows:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
    (HOME / "questions.json").write_text(json.dumps(questions, indent=0, ensure_ascii=False))
    sizes = defaultdict(lambda: [0, 0])
    for row in rows:
        sizes[row["m"]][row["tier"]] += 1
    # The summary on stdout (the progress above went to stderr).
    print(f"{len(rows):,} facts, {len(sizes)} memories; sentences by source: " + ", ".join(
        f"{s} {c.count(s):,}" for s in sorted(c.docs)
        if c.count(s) and not s.startswith("locomo:")))
    for name, (t0, t1) in sorted(sizes.items(), key=lambda x: -sum(x[1]))[:12]:
        print(f"  {name}: {t0 + t1:,} at 1M, {t0:,} at 100k, "
              f"{len(questions.get(name, [])):,} questions")


def rows(limit: int | None = None) -> list[dict]:
    """The corpus in embedding order; the first 100,000 are the 100k table."""
    out = []
    with gzip.open(HOME / "corpus.jsonl.gz", "rt") as lines:
        for line in lines:
            out.append(json.loads(line))
            if limit and len(out) == limit:
                break
    return out


def questions() -> dict[str, list[str]]:
    return json.loads((HOME / "questions.json").read_text())


def embedded_text(row: dict) -> str:
    from memories.search.fact_text import search_text_for

    return search_text_for(row["f"], row["s"], row["t"])


def _key(text: str) -> bytes:
    return hashlib.blake2b(text.encode(), digest_size=12).digest()


# The chunk files' names by the model copy that made them; float32 (the product's) first,
# so a text embedded by both is taken from it.
MODELS = {"float32": "vectors-[0-9]*.npz", "int8": "vectors-int8-*.npz"}


def _cached() -> dict[bytes, tuple[int, int]]:
    """Every cached vector's place, (file, row), by its text's key; float32 over int8."""
    places = {}
    for n, path in reversed(list(enumerate(_chunk_files()))):
        with np.load(path) as data:
            for row, key in enumerate(data["keys"]):
                places[bytes(key)] = (n, row)
    return places


def _chunk_files(model: str | None = None) -> list[Path]:
    models = [model] if model else list(MODELS)
    return [path for name in models for path in sorted(HOME.glob(MODELS[name]))]


def vectors(count: int) -> np.ndarray:
    """The first `count` rows' vectors (float16), from the cache by text."""
    wanted = [_key(embedded_text(r)) for r in rows(count)]
    places = _cached()
    missing = sum(k not in places for k in wanted)
    if missing:
        raise SystemExit(f"{missing:,} of the first {count:,} rows have no vector yet: run "
                         f"`bench/real_corpus.py embed --upto {count}`")
    paths = _chunk_files()
    int8 = {n for n, path in enumerate(paths) if path.match(MODELS["int8"])}
    from_int8 = sum(places[k][0] in int8 for k in wanted)
    if from_int8:
        log(f"{from_int8:,} of {count:,} rows' vectors are from the int8 copy of the model")
    files = [np.load(path)["vectors"] for path in paths]
    return np.stack([files[n][row] for n, row in (places[k] for k in wanted)])


def embed(upto: int | None, model: str = "float32") -> None:
    """Embed what the cache lacks among the first `upto` rows, CHUNK at a time, each chunk
    saved as it is done (keyed by text, so a changed corpus reuses what it can)."""
    from memories.search.embeddings import get_embedder

    data = rows(upto)
    places = _cached()
    todo = list(dict.fromkeys(t for t in map(embedded_text, data) if _key(t) not in places))
    log(f"{len(data) - len(todo):,} of {len(data):,} rows cached; embedding {len(todo):,} "
        f"({model})")
    embedder = get_embedder()
    run = embedder.embed_quick if model == "int8" else embedder.embed
    started, done = time.perf_counter(), 0
    first = len(_chunk_files(model))
    stem = "vectors" if model == "float32" else f"vectors-{model}"
    for n, start in enumerate(range(0, len(todo), CHUNK), start=first):
        texts = todo[start:start + CHUNK]
        vectors = run(texts).astype(np.float16)
        path = HOME / f"{stem}-{n:05d}.npz"
        tmp = HOME / f"partial-{n:05d}.npz"
        np.savez(tmp, keys=np.array([np.frombuffer(_key(t), dtype=np.uint8) for t in texts]),
                 vectors=vectors)
        tmp.rename(path)
        done += len(texts)
        rate = done / (time.perf_counter() - started)
        log(f"embedded {done:,} of {len(todo):,} ({rate:.0f} a second, about "
            f"{(len(todo) - done) / rate / 60:.0f} min left)")
    print(f"{len(data):,} rows have vectors: {len(todo):,} texts embedded now, "
          f"{len(data) - len(todo):,} rows' from the cache")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("step", choices=["build", "embed"])
    parser.add_argument("--upto", type=int, default=None, help="embed only the first N rows")
    parser.add_argument("--model", choices=list(MODELS), default="float32",
                        help="embed: the model copy (int8: about three times as fast with VNNI; "
                             "the module's docstring says what that changes)")
    parser.add_argument("--root", type=Path, default=None,
                        help="build: read the sources under this folder instead of / (a tree "
                             "in their shapes, e.g. tests/bench/data/real_corpus; with "
                             "ECHO_BENCH_CACHE elsewhere, or it replaces the cached corpus)")
    args = parser.parse_args()
    if args.root:
        from bench import real_text

        real_text.set_root(args.root.resolve())
    if args.step == "build":
        build()
    else:
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "echomem.settings")
        embed(args.upto, args.model)


if __name__ == "__main__":
    main()
