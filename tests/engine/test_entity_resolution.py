"""Entity resolution: exact, normalized, resolutions, assume_new, similar names defer."""

from __future__ import annotations

import pytest

from echomem.errors import ValidationFailed
from memories.models import Entity, Fact
from tests.factories import fact, person


def thing(name: str, kind: str = "service") -> dict[str, str]:
    return {"name": name, "type": kind}


# Labelled pairs behind the thresholds in memories/graph/resolution.py.
SAME_THING = [
    (thing("PostgreSQL", "database"), thing("Postgres", "database"), "spelling or meaning"),
    (thing("checkout-service"), thing("checkout service"), "similar spelling"),
    (thing("New York City", "place"), thing("NYC", "place"), "abbreviation"),
    (thing("NYC", "place"), thing("New York City", "place"), "abbreviation"),
    (person("Jon Smith"), person("John Smith"), "similar spelling"),
    (thing("Acme Corporation", "company"), thing("Acme Corp", "company"), "similar spelling"),
    (thing("Kubernetes", "platform"), thing("kubernetes cluster", "platform"), "similar"),
]
DIFFERENT_THINGS = [
    (person("Caroline"), person("Melanie")),
    (thing("Redis", "database"), thing("Postgres", "database")),
    (thing("payment service"), thing("checkout service")),
    (person("Alice"), person("Bob")),
    (thing("London", "place"), thing("Paris", "place")),
    (thing("frontend"), thing("backend")),
]


def test_exact_name_always_resolves_even_with_assume_new(engine):
    engine.write(entities=[person("Alice")], assume_new=True)
    out = engine.write(entities=[person("Alice")], assume_new=True)
    assert out["stored"] and Entity.objects.count() == 1


@pytest.mark.parametrize(("existing", "incoming", "why"), SAME_THING)
def test_a_similar_existing_name_defers_the_whole_episode(engine, existing, incoming, why):
    engine.write(entities=[existing], assume_new=True)
    out = engine.write(session_id="s2", entities=[incoming, person("Zoe")], facts=[
        fact("Zoe", incoming["name"], "uses", f"Zoe uses {incoming['name']}")])
    assert out["stored"] is False
    assert out["edges_created"] == [] and out["units"] == 0
    [ambiguous] = out["ambiguous_entities"]
    assert ambiguous["name"] == incoming["name"]
    [candidate] = ambiguous["candidates"]
    assert candidate["name"] == existing["name"]
    assert any(word in candidate["why"] for word in why.split(" or ")), candidate["why"]
    assert "entity_resolutions" in out["message"]
    # Nothing of the deferred episode was stored, not even the unambiguous Zoe.
    assert Entity.objects.count() == 1 and Fact.objects.count() == 0


@pytest.mark.parametrize(("existing", "incoming"), DIFFERENT_THINGS)
def test_unrelated_names_are_not_ambiguous(engine, existing, incoming):
    engine.write(entities=[existing], assume_new=True)
    out = engine.write(entities=[incoming])
    assert out["stored"] is True, out["ambiguous_entities"]


def test_same_normalized_name_with_another_type_is_ambiguous(engine):
    engine.write(entities=[thing("Mercury", "planet")], assume_new=True)
    out = engine.write(entities=[thing("mercury", "element")])
    assert out["stored"] is False
    assert "type 'planet'" in out["ambiguous_entities"][0]["candidates"][0]["why"]


def test_resolving_to_an_existing_id_links_to_that_node(engine):
    engine.write(entities=[thing("PostgreSQL", "database")], assume_new=True)
    deferred = engine.write(entities=[thing("Postgres", "database"), person("Zoe")],
                            facts=[fact("Zoe", "Postgres", "uses", "Zoe uses Postgres")])
    candidate = deferred["ambiguous_entities"][0]["candidates"][0]["id"]
    out = engine.write(entities=[thing("Postgres", "database"), person("Zoe")],
                       facts=[fact("Zoe", "Postgres", "uses", "Zoe uses Postgres")],
                       entity_resolutions={"Postgres": candidate})
    assert out["stored"] is True
    assert Fact.objects.get().target.name == "PostgreSQL"
    assert Entity.objects.filter(type="database").count() == 1


def test_resolving_as_new_creates_a_second_node(engine):
    engine.write(entities=[thing("PostgreSQL", "database")], assume_new=True)
    out = engine.write(entities=[thing("Postgres", "database")],
                       entity_resolutions={"Postgres": "new"})
    assert out["stored"] is True
    assert Entity.objects.filter(type="database").count() == 2


def test_assume_new_skips_the_similarity_check(engine):
    engine.write(entities=[thing("PostgreSQL", "database")], assume_new=True)
    out = engine.write(entities=[thing("Postgres", "database")], assume_new=True)
    assert out["stored"] is True


def test_resolution_to_an_id_outside_the_scope_is_refused(engine, charlie):
    from tests.engine.conftest import Engine

    other = Engine(charlie.principal).write(entities=[person("Eve")], assume_new=True)
    eve = other["entities"][0]["id"]
    with pytest.raises(ValidationFailed) as caught:
        engine.write(entities=[person("Eva")], entity_resolutions={"Eva": eve})
    assert caught.value.field == "entity_resolutions['Eva']"
    assert Entity.objects.filter(name="Eva").count() == 0


def test_every_ambiguous_name_is_listed(engine):
    engine.write(entities=[thing("PostgreSQL", "database"), thing("New York City", "place")],
                 assume_new=True)
    out = engine.write(entities=[thing("Postgres", "database"), thing("NYC", "place")])
    assert sorted(a["name"] for a in out["ambiguous_entities"]) == ["NYC", "Postgres"]


def test_similar_names_are_looked_up_in_one_statement_however_many(engine):
    """Every name no rule decided is checked for similar existing ones (spelling, meaning,
    abbreviation) in one statement: a write's query count does not grow with them."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    engine.write(entities=[person("Existing Person")], assume_new=True)

    def queries_to_write(names: list[str]) -> int:
        with CaptureQueriesContext(connection) as captured:
            out = engine.write(entities=[thing(name) for name in names])
        assert out["stored"], out
        return len(captured.captured_queries)

    one = queries_to_write(["ledger"])
    many = queries_to_write(["billing queue", "audit trail", "search cluster",
                             "image cache", "mail relay", "dns resolver"])
    assert one == many
    assert Entity.objects.count() == 8


def test_each_new_names_vector_is_read_once_not_once_per_entity_compared(engine):
    """A vector sent as text and cast where it is compared is parsed again for every row
    the probe reads: 384 numbers per existing entity per new name (a 9-name write into a
    memory of 200 entities spent 0.2 s there). Cast once, the array is parsed once."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    engine.write(entities=[person("Existing Person"), thing("ledger")], assume_new=True)
    with CaptureQueriesContext(connection) as captured:
        engine.write(entities=[thing("billing queue"), thing("mail relay")])
    sql = next(q["sql"] for q in captured.captured_queries
               if "WITH ORDINALITY" in q["sql"] and "name_embedding <=>" in q["sql"])
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN VERBOSE " + sql)
        compared = [row[0] for row in cursor.fetchall() if "name_embedding <=>" in row[0]]
    assert compared, "the probe by meaning is in the plan"
    assert not [line for line in compared if "::vector)" in line], compared
