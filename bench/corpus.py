"""A deterministic synthetic graph for speed benchmarks: varied sentences, realistic word spread."""

from __future__ import annotations

import random

FIRST = ["Ada", "Ben", "Cleo", "Dev", "Eli", "Fay", "Gus", "Hana", "Ivo", "Jun", "Kai", "Lena",
         "Milo", "Nia", "Omar", "Pia", "Quin", "Rosa", "Sami", "Tess", "Uma", "Vik", "Wren",
         "Xia", "Yusuf", "Zoe"]
LAST = ["Abe", "Boyd", "Cruz", "Diaz", "Engel", "Fox", "Gray", "Holt", "Ito", "Jones", "Khan",
        "Lund", "Moss", "Nash", "Ortiz", "Park", "Quade", "Reyes", "Stone", "Tran", "Ueda",
        "Vance", "West", "Young", "Zhou"]
THINGS = ["checkout service", "billing database", "search index", "mobile app", "data pipeline",
          "auth gateway", "payment queue", "image cache", "email worker", "analytics dashboard",
          "feature flag", "deploy script", "load balancer", "recommendation model",
          "support inbox", "pricing page", "onboarding flow", "backup job", "audit trail",
          "rate limiter"]
VERBS = ["fixed a memory leak in", "migrated", "reviewed the design of", "broke", "load-tested",
         "wrote the runbook for", "rolled back", "added caching to", "profiled", "documented",
         "paired on", "refactored", "upgraded", "monitored", "shipped a new version of",
         "debugged a timeout in", "cut the latency of", "planned the sunset of",
         "reported a bug in", "benchmarked"]
WHEN = ["on Monday", "last sprint", "during the outage", "before the launch", "in March",
        "over the weekend", "after the incident review", "at the offsite", "yesterday",
        "in the Q3 planning", "during on-call", "last night"]
WHY = ["because customers saw errors", "to cut cloud costs", "after a pager alert",
       "for the compliance audit", "since the old version was deprecated",
       "to unblock the mobile team", "after a failed canary", "to halve p95 latency",
       "because the disk filled up", "to support the new region"]
QUESTIONS = ["What did {a} do to the {t}?", "Who worked on the {t} {w}?",
             "Why was the {t} changed?", "What happened with the {t} {w}?",
             "Which service did {a} fix?", "Has anyone touched the {t} recently?",
             "What is {a} working on?", "Who rolled back the {t}?"]


def people(count: int) -> list[str]:
    names = [f"{f} {last}" for last in LAST for f in FIRST]
    return [f"{name} {i // len(names)}" if i >= len(names) else name
            for i, name in ((i, names[i % len(names)]) for i in range(count))]


def facts(count: int, names: list[str], seed: int = 7) -> list[dict[str, str]]:
    rng = random.Random(seed)
    out = []
    for i in range(count):
        person, thing = rng.choice(names), rng.choice(THINGS)
        text = (f"{person} {rng.choice(VERBS)} the {thing} {rng.choice(WHEN)} "
                f"{rng.choice(WHY)} (ticket {rng.randint(100, 99999)})")
        out.append({"source": person, "target": thing, "relation_type": f"worked_on_{i}",
                    "fact": text, "confidence": "extracted"})
    return out


def questions(count: int, names: list[str], seed: int = 11) -> list[str]:
    rng = random.Random(seed)
    return [rng.choice(QUESTIONS).format(a=rng.choice(names), t=rng.choice(THINGS),
                                         w=rng.choice(WHEN))
            for _ in range(count)]
