"""Facts and questions for the 1M-fact benchmark: many templates, a wide vocabulary.

bench/corpus.py has one sentence shape over 2,000 names: at 1M facts every one of its
words would sit in tens of thousands of facts, a word search no real memory poses.
Here twelve shapes draw from a few thousand people, 1,131 systems, 16 teams, cities,
tools and numbers, so words range from rare (a person, a ticket) to common ("team").

The bulk of the facts reuse a smaller set of real sentences (`real_facts`, embedded by
the model): bulk fact i is real sentence i mod N with its number slot drawn again, and
its vector is made by `mixed_vectors`, as bench/scale.py's docstring says.
"""

from __future__ import annotations

import random

import numpy as np


def _words(text: str) -> list[str]:
    return text.split()


FIRST = _words("""Ada Ben Cleo Dev Eli Fay Gus Hana Ivo Jun Kai Lena Milo Nia Omar Pia Quin Rosa
Sami Tess Uma Vik Wren Xia Yusuf Zoe Amir Bea Carlos Dana Emil Freya Goran Hugo Ines Jonas
Keiko Liam Maya Nils Olga Pablo Rafa Sofia Tomas Ulla Vera Wes Yara Zane Aiko Bruno Chidi
Dora Enzo Farah Gita Hamid Ilse Jasper Kofi Lucia Mateo Noor Oskar Priya Ravi Sana Tariq
Uri Vilma Wanda Xavier Yuki Zara Anika Boris Celine Diego Esme Felix Greta Hiro Isla Joel
Kira Lars Mira Nadia Otto Paulo Rhea Stefan Thea Umar Vito""")
LAST = _words("""Abe Boyd Cruz Diaz Engel Fox Gray Holt Ito Jones Khan Lund Moss Nash Ortiz Park
Quade Reyes Stone Tran Ueda Vance West Young Zhou Alvarez Berg Costa Dubois Eriksen Fischer
Garcia Hansen Ibrahim Jensen Kowalski Larsen Meyer Novak Okafor Petrov Rossi Schmidt Tanaka
Urban Varga Weber Yilmaz Zimmer Andersen Bianchi Chen Dalton Evans Ferreira Gomez Haddad
Iyer Janssen Kim Lopez Mendes Nguyen Olsen Patel Ramos Silva Torres Ullman Volkov Walsh
Yamada Zeller""")
QUALIFIERS = _words("""billing checkout search payments auth image email analytics pricing
onboarding backup audit recommendation inventory shipping notification reporting mobile
partner support fraud ledger catalog session upload export import metrics logging tracing
scheduler gateway invoice refund loyalty referral identity consent translation""")
NOUNS = _words("""service database index queue cache worker dashboard pipeline API cluster job
script model page flow trail limiter proxy bucket store replica scheduler webhook stream
table report console registry bot""")
TEAMS = _words("""platform growth data infra mobile web security payments search billing support
design research ops reliability compliance""")
CITIES = _words("""Lisbon Berlin Osaka Nairobi Toronto Austin Dublin Seoul Lyon Porto Oslo Quito
Lagos Krakow Denver Perth Tallinn Bogota Hanoi Zurich Accra Lima Riga Malmo Bilbao Cork
Leeds Gdansk Turin Utrecht""")
TOOLS = _words("""Postgres Redis Kafka Terraform Kubernetes Grafana Sentry Django Rust Go Python
TypeScript React Vue Svelte Airflow dbt Spark Flink Nginx Envoy Vault Ansible Prometheus
Elasticsearch ClickHouse Snowflake Bazel Docker Celery""")
VERBS = """fixed a memory leak in|migrated|reviewed the design of|broke|load-tested|wrote the
runbook for|rolled back|added caching to|profiled|documented|paired on|refactored|upgraded|
monitored|shipped a new version of|debugged a timeout in|cut the latency of|planned the
sunset of|reported a bug in|benchmarked|sharded|moved to a new region|rewrote|added alerts
to|cleaned up|split|deprecated|rotated the keys of|patched|audited""".replace("\n", " ").split("|")
WHEN = ["on Monday", "last sprint", "during the outage", "before the launch", "in March",
        "over the weekend", "after the incident review", "at the offsite", "yesterday",
        "in the Q3 planning", "during on-call", "last night", "before the holidays",
        "in the freeze week", "after the board meeting", "on release day"]
WHY = ["because customers saw errors", "to cut cloud costs", "after a pager alert",
       "for the compliance audit", "since the old version was deprecated",
       "to unblock the mobile team", "after a failed canary", "to halve p95 latency",
       "because the disk filled up", "to support the new region",
       "ahead of the traffic spike", "because the vendor raised prices",
       "after a security review", "to meet the new SLA"]
HOBBIES = _words("""climbing chess pottery sailing running baking cycling birdwatching salsa
photography surfing gardening knitting origami kayaking painting skiing""")
FOODS = _words("""ramen tacos pho sushi falafel paella dumplings curry pierogi ceviche burritos
risotto""")
MONTHS = _words("""January February March April May June July August September October November
December""")
ROLES = ["staff engineer", "product manager", "designer", "data scientist", "SRE",
         "engineering manager", "tech lead", "intern", "security engineer", "analyst"]

# (template, kinds of its source and target): one number slot each ({n}), redrawn per copy.
TEMPLATES = [
    ("{p} {verb} the {t} {when} {why} (ticket {n}).", "person", "system"),
    ("{p} moved from {c} to {c2} in {month} {n}.", "person", "city"),
    ("{p} prefers {tool} over {tool2} for the {t}, per the {n} retro.", "person", "tool"),
    ("{p} is the on-call owner of the {t} for the {team} team since sprint {n}.",
     "person", "system"),
    ("The {t} depends on the {t2} since the {month} migration (change {n}).",
     "system", "system"),
    ("{p} reported that the {t} returned errors for {n} minutes {when}.", "person", "system"),
    ("{p} and {p2} paired on the {t} {when}, closing {n} tickets.", "person", "person"),
    ("{p} likes {hobby} and {hobby2} and did {n} sessions this year.", "person", "hobby"),
    ("{p} joined the {team} team in {month} {n} as a {role}.", "person", "team"),
    ("{p} met {p2} at the {team} offsite in {c}, {n} people came.", "person", "person"),
    ("The {team} team decided to retire the {t} {why}; cost {n} hours.", "team", "system"),
    ("{p}'s favourite lunch is {food} from the place on {n} {month} street.",
     "person", "food"),
]
QUESTIONS = [
    "What did {p} do to the {t}?", "Who worked on the {t} {when}?", "Why was the {t} changed?",
    "What happened with the {t} {when}?", "Where did {p} move?", "Which tool does {p} prefer?",
    "Who owns the {t}?", "What does the {t} depend on?", "Who paired with {p}?",
    "What are {p}'s hobbies?", "When did {p} join the {team} team?", "Who did {p} meet in {c}?",
    "Why did the {team} team retire the {t}?", "What does {p} like for lunch?",
    "Has anyone touched the {t} recently?", "Which errors did the {t} return?",
    "Who knows {tool} on the {team} team?", "What is {p} working on?",
]


def people(count: int, seed: int = 3) -> list[str]:
    rng = random.Random(seed)
    pairs = [(f, last) for f in FIRST for last in LAST]
    rng.shuffle(pairs)
    return [f"{f} {last}" for f, last in pairs[:count]]


def systems() -> list[str]:
    return [f"{q} {n}" for q in QUALIFIERS for n in NOUNS]


class Vocabulary:
    """The entities the facts name, each with the type write_episode would give it."""

    def __init__(self, persons: int) -> None:
        self.people = people(persons)
        self.systems = systems()
        self.entities: dict[str, str] = {
            **{p: "person" for p in self.people}, **{s: "system" for s in self.systems},
            **{c: "city" for c in CITIES}, **{t: "tool" for t in TOOLS},
            **{f"{t} team": "team" for t in TEAMS}, **{h: "hobby" for h in HOBBIES},
            **{f: "food" for f in FOODS},
        }

    def slots(self, rng: random.Random) -> dict[str, str]:
        p, p2 = rng.sample(self.people, 2)
        t, t2 = rng.sample(self.systems, 2)
        c, c2 = rng.sample(CITIES, 2)
        tool, tool2 = rng.sample(TOOLS, 2)
        hobby, hobby2 = rng.sample(HOBBIES, 2)
        return {"p": p, "p2": p2, "t": t, "t2": t2, "c": c, "c2": c2, "tool": tool,
                "tool2": tool2, "hobby": hobby, "hobby2": hobby2, "team": rng.choice(TEAMS),
                "verb": rng.choice(VERBS), "when": rng.choice(WHEN), "why": rng.choice(WHY),
                "month": rng.choice(MONTHS), "role": rng.choice(ROLES),
                "food": rng.choice(FOODS)}


ENDPOINT = {"person": "p", "system": "t", "city": "c2", "tool": "tool", "hobby": "hobby",
            "team": "team", "food": "food"}


def _endpoints(template: int, slots: dict[str, str]) -> tuple[str, str]:
    _, source_kind, target_kind = TEMPLATES[template]
    source = slots[ENDPOINT[source_kind]]
    target_slot = ENDPOINT[target_kind]
    if target_kind == source_kind:  # person-person, system-system: the second one
        target_slot += "2"
    target = slots[target_slot]
    if target_kind == "team":
        target = f"{target} team"
    if source_kind == "team":
        source = f"{source} team"
    return source, target


def real_facts(count: int, vocabulary: Vocabulary, seed: int = 17) -> list[dict]:
    """`count` sentences, each with its template's number slot left as {n} to fill."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        template = rng.randrange(len(TEMPLATES))
        slots = vocabulary.slots(rng)
        source, target = _endpoints(template, slots)
        out.append({"template": TEMPLATES[template][0].format(**slots, n="{n}"),
                    "shape": template, "source": source, "target": target})
    return out


def fill(template: str, rng: random.Random) -> str:
    return template.replace("{n}", str(rng.randint(2, 99999)))


def questions(count: int, vocabulary: Vocabulary, seed: int) -> list[str]:
    """`count` distinct questions (the query-embedding cache must never answer one)."""
    rng = random.Random(seed)
    seen: dict[str, None] = {}
    while len(seen) < count:
        seen[rng.choice(QUESTIONS).format(**vocabulary.slots(rng))] = None
    return list(seen)


def mixed_vectors(real: np.ndarray, start: int, count: int, *, seed: int) -> np.ndarray:
    """Vectors of bulk facts start..start+count: each a normalized mix of its own real
    sentence's vector (weight 0.7-0.9), another random real vector (the rest) and Gaussian
    noise (0.01 a dimension, about 0.2 in length), as float16 for halfvec."""
    rng = np.random.default_rng(seed + start)
    n = len(real)
    own = real[np.arange(start, start + count) % n]
    other = real[rng.integers(0, n, count)]
    weight = rng.uniform(0.7, 0.9, (count, 1)).astype(np.float32)
    mixed = weight * own + (1 - weight) * other
    mixed += rng.normal(0, 0.01, mixed.shape).astype(np.float32)
    mixed /= np.linalg.norm(mixed, axis=1, keepdims=True)
    return mixed.astype(np.float16)


def embed_cached(texts: list[str], label: str) -> np.ndarray:
    """The model's vectors for `texts` (float32, normalized), kept in bench/.cache by content,
    so the 50k rehearsal pays for them and the 1M run reuses them."""
    import hashlib
    import sys
    from pathlib import Path

    digest = hashlib.blake2b("\n".join(texts).encode(), digest_size=8).hexdigest()
    path = Path(__file__).resolve().parent / ".cache" / f"scale-{label}-{len(texts)}-{digest}.npy"
    if path.exists():
        return np.load(path)
    from memories.search.embeddings import get_embedder

    embedder, parts = get_embedder(), []
    for start in range(0, len(texts), 1000):
        parts.append(embedder.embed(texts[start:start + 1000]))
        print(f"  embedded {start + len(parts[-1])} of {len(texts)} {label}", file=sys.stderr)
    vectors = np.concatenate(parts).astype(np.float32)
    path.parent.mkdir(exist_ok=True)
    np.save(path, vectors)
    return vectors


def real_texts(facts: list[dict], seed: int = 23) -> list[str]:
    """The real sentences as embedded: each template's number slot filled once."""
    rng = random.Random(seed)
    return [fill(f["template"], rng) for f in facts]
