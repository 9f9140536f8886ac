"""query_memory on the real model and the real indexes."""

from __future__ import annotations

import time

import pytest
from django.utils import timezone

from echomem.errors import ValidationFailed
from memories.models import Fact
from tests.factories import Engine, fact, person

TEAM = [person("Alice"), person("Bob"), {"name": "Postgres", "type": "database"},
        {"name": "Kyoto", "type": "city"}, {"name": "checkout", "type": "service"}]
FACTS = [
    fact("Alice", "Kyoto", "travelled_to", "Alice spent her spring holiday hiking near Kyoto"),
    fact("Bob", "Postgres", "migrated", "Bob moved the billing tables to Postgres 16 last week"),
    fact("checkout", "Postgres", "depends_on", "The checkout service reads prices from Postgres"),
    fact("Alice", "Bob", "pairs_with", "Alice pairs with Bob on code reviews every Friday"),
    fact("Bob", "Kyoto", "born_in", "Bob was born in Kyoto and moved to Berlin at twelve"),
]


@pytest.fixture
def team(engine) -> Engine:
    engine.write(session_id="s1", entities=TEAM, assume_new=True, facts=FACTS)
    Engine.index()
    return engine


def top(engine: Engine, query: str, **args) -> list[str]:
    return [f["fact"] for f in engine.query(query, **args)["facts"]]


def test_meaning_finds_a_paraphrase_without_shared_words(team):
    assert top(team, "Who went trekking in the mountains during a vacation?")[0] == \
        FACTS[0]["fact"]


def test_words_find_a_rare_term(team):
    assert top(team, "billing tables")[0] == FACTS[1]["fact"]


def test_when_every_word_is_common_facts_with_all_of_them_are_scored(team, monkeypatch):
    from memories.graph.selectors import memory_for
    from memories.search import candidates
    from memories.search.window import Window

    # Endpoint names join a fact's searchable text, so the filler facts point at Kyoto.
    filler = [*(f"billing job {word} runs" for word in ("alpha", "beta", "gamma", "delta",
                                                          "epsilon", "zeta", "eta", "theta")),
              "Postgres restarts", "Postgres upgrades"]
    team.write(session_id="s2", entities=[{"name": "ledger", "type": "service"}, *TEAM[2:4]],
               assume_new=True, facts=[
                   *(fact("ledger", "Kyoto", f"note_{i}", text) for i, text in enumerate(filler)),
                   fact("ledger", "Postgres", "writes_to",
                        "The ledger writes billing events into Postgres")])
    Engine.index()
    # Every word over the budget, and room to score two facts: the rarest word alone
    # would score the two oldest facts that have it, whatever else they say.
    monkeypatch.setattr(candidates, "TEXT_CANDIDATE_BUDGET", 1)
    monkeypatch.setattr(candidates, "TEXT_CANDIDATE_CAP", 2)
    memory = memory_for(team.principal)
    found = candidates.text_candidates(memory.pk, "shared", "billing Postgres", 10, Window())
    texts = set(Fact.objects.filter(pk__in=[c.fact_id for c in found])
                .values_list("fact", flat=True))
    assert texts == {FACTS[1]["fact"], "The ledger writes billing events into Postgres"}


def test_each_result_has_rank_score_and_matched(team):
    result = team.query("Which service depends on the database?")
    first = result["facts"][0]
    assert first["fact"] == FACTS[2]["fact"]
    assert [f["rank"] for f in result["facts"]] == list(range(1, len(result["facts"]) + 1))
    assert 0.2 < first["score"] <= 1.0
    assert "vector" in first["matched"]
    assert {"fact_id", "source", "target", "relation_type", "confidence", "causal_hint",
            "session_id", "created_at", "valid_at", "invalid_at"} <= set(first)
    assert (first["source"], first["target"]) == ("checkout", "Postgres")
    assert result["units"] == result["count"] == len(result["facts"])


def test_scores_are_cosines_comparable_across_queries(team):
    close = team.query("Bob moved the billing tables to Postgres")["facts"][0]
    loose = team.query("moving tables between databases")["facts"][0]
    assert close["fact"] == loose["fact"] == FACTS[1]["fact"]
    # Below 1 even for the fact's own words: it is embedded with its episode's context.
    assert close["score"] > 0.6 > loose["score"] > 0.15


def test_a_reply_is_embedded_with_the_turns_before_it(engine, settings):
    talk = [person("Mel"), person("Caro")]
    turns = [
        fact("Mel", "Caro", "said 1", "Mel: did you finish that evening pottery course?"),
        fact("Caro", "Mel", "said 2", "Caro: Yes, last week! I brought home a wobbly bowl."),
    ]
    question = "When did Caro complete her ceramics class?"
    scores = {}
    for context, memory in ((0, "plain"), (2, "context")):
        settings.ECHO_MEMORY_EMBED_CONTEXT = context
        from memories.graph.services import memory_create

        memory_create(account_id=engine.principal.account_id, name=memory)
        engine.write(memory=memory, entities=talk, assume_new=True, facts=turns)
        Engine.index()
        found = engine.query(question, memory=memory)["facts"]
        scores[context] = next(f["score"] for f in found if f["relation_type"] == "said 2")
    assert scores[2] > scores[0] + 0.1, scores


def test_an_unrelated_query_returns_nothing_rather_than_noise(team):
    assert team.query("quantum chromodynamics lecture notes")["facts"] == []


def test_top_k_bounds_the_results_and_the_units(team):
    result = team.query("Alice", top_k=2)
    assert result["count"] == 2 and result["units"] == 2


@pytest.mark.parametrize("top_k", [0, 101, -1])
def test_top_k_outside_1_to_100_is_refused(team, top_k):
    with pytest.raises(ValidationFailed) as caught:
        team.query("Alice", top_k=top_k)
    assert caught.value.field == "top_k"


def test_an_empty_query_without_digest_is_refused_with_the_fix(team):
    with pytest.raises(ValidationFailed, match="digest: true"):
        team.query("")


def test_a_fact_not_yet_embedded_is_found_by_its_first_pass_vector_and_words(team, settings):
    # The query embeds waiting facts itself (test_freshness.py) unless, as after a bulk
    # import, its budget is spent before it reaches this one.
    settings.ECHO_MEMORY_QUERY_EMBED_FACTS = 0
    team.write(entities=[person("Alice"), person("Bob")], facts=[
        fact("Alice", "Bob", "lent", "Alice lent Bob her xylophone mallets")])
    assert Fact.objects.filter(embedding__isnull=True).count() == 1
    reply = team.query("xylophone mallets")
    result = reply["facts"]
    assert result[0]["fact"] == "Alice lent Bob her xylophone mallets"
    assert result[0]["matched"] == ["vector", "text"] and 0 < result[0]["score"] < 1
    assert reply["facts_pending_vector"] == 1


def test_a_fact_from_before_first_pass_vectors_is_found_by_words_with_a_null_score(
        team, settings):
    settings.ECHO_MEMORY_QUERY_EMBED_FACTS = 0
    team.write(entities=[person("Alice"), person("Bob")], facts=[
        fact("Alice", "Bob", "lent", "Alice lent Bob her xylophone mallets")])
    # As a fact written before migration 0013 is.
    Fact.objects.update(first_pass_embedding=None)
    result = team.query("xylophone mallets")["facts"]
    assert result[0]["fact"] == "Alice lent Bob her xylophone mallets"
    assert result[0]["matched"] == ["text"] and result[0]["score"] is None


def test_digest_returns_the_most_recent_active_facts(team):
    team.write(entities=[person("Alice"), person("Bob")], facts=[
        fact("Alice", "Bob", "pairs_with", "Alice pairs with Bob on Mondays now")])
    digest = team.query(digest=True, top_k=3)["facts"]
    assert digest[0]["fact"] == "Alice pairs with Bob on Mondays now"
    assert all(f["matched"] == ["digest"] and f["score"] is None for f in digest)
    assert FACTS[3]["fact"] not in [f["fact"] for f in team.query(digest=True)["facts"]]


def test_superseded_facts_only_on_request(team):
    before = timezone.now()
    time.sleep(0.01)
    team.write(entities=[person("Bob"), {"name": "Kyoto", "type": "city"}], facts=[
        fact("Bob", "Kyoto", "born_in", "Bob was born in Osaka, not Kyoto (corrected)")])
    Engine.index()
    live = top(team, "Where was Bob born?", top_k=10)
    assert FACTS[4]["fact"] not in live
    everything = team.query("Where was Bob born?", include_superseded=True)["facts"]
    old = next(f for f in everything if f["fact"] == FACTS[4]["fact"])
    assert old["superseded_at"] is not None and old["superseded_by"] is not None
    # as_of answers what was live then: the old version, not its correction.
    then = top(team, "Where was Bob born?", as_of=before.isoformat())
    assert FACTS[4]["fact"] in then
    assert "Bob was born in Osaka, not Kyoto (corrected)" not in then


def test_as_of_before_anything_was_written_returns_nothing(team):
    assert team.query("Alice", as_of="2000-01-01T00:00:00Z")["facts"] == []


def test_a_query_that_matches_nothing_costs_nothing(engine):
    result = engine.query("anything at all")
    assert result["facts"] == [] and result["units"] == 0


def test_on_equal_fused_scores_the_word_match_ranks_first(monkeypatch):
    import uuid

    from memories.search import hybrid as search
    from memories.search.hybrid import Candidate, fuse

    # The first stage's order (the learned order of the pool weighs it as one input).
    monkeypatch.setattr(search, "LEARNED_RANKING", False)

    by_meaning, by_words = uuid.uuid4(), uuid.uuid4()
    ends = (uuid.uuid4(), uuid.uuid4())
    # First place in each list, nothing else: the fused scores are equal.
    hits = fuse([Candidate(by_meaning, 0.8, *ends)], [Candidate(by_words, 7.5, *ends)], top_k=2)

    assert [h.fact_id for h in hits] == [by_words, by_meaning]
    assert hits[0].fused == hits[1].fused


def test_a_word_match_on_an_incidental_word_gets_no_vote(team, monkeypatch):
    from memories.graph.selectors import memory_for
    from memories.search import candidates
    from memories.search import hybrid as search
    from memories.search.window import Window

    # Facts that share one common word ("went") with a paraphrased question: in a memory
    # of runbooks such matches fill the word list and, each with a vote, pushed the fact
    # the question means (found by meaning alone) out of the top.
    incidental = ["Bob went to the Postgres meetup in Berlin",
                  "Bob went through the checkout logs after the outage",
                  "Alice went over the Postgres upgrade plan with Bob"]
    team.write(session_id="s2", entities=TEAM, facts=[
        fact("Bob", "Postgres", "attended", incidental[0]),
        fact("Bob", "checkout", "inspected", incidental[1]),
        fact("Alice", "Postgres", "reviewed", incidental[2])])
    Engine.index()
    question = "Who went trekking in the mountains during a vacation abroad?"
    memory = memory_for(team.principal)
    found = candidates.text_candidates(memory.pk, "shared", question, 50, Window())
    texts = dict(Fact.objects.filter(pk__in=[c.fact_id for c in found])
                 .values_list("pk", "fact"))
    measured = {texts[c.fact_id]: c.coverage for c in found}
    assert set(measured) == set(incidental)
    assert all(0 < c < search.TEXT_COVERAGE_FLOOR for c in measured.values()), measured

    answer = team.query(question, top_k=3)["facts"]
    assert answer[0]["fact"] == FACTS[0]["fact"] and answer[0]["matched"] == ["vector"]
    # The floor is what holds it there: with every word match voting, one of them wins.
    monkeypatch.setattr(search, "TEXT_COVERAGE_FLOOR", 0.0)
    assert top(team, question, top_k=3)[0] in incidental


def test_a_fact_next_to_good_matches_outranks_an_equally_scored_loner(monkeypatch):
    import uuid

    from memories.search import hybrid as search
    from memories.search.hybrid import Candidate, fuse

    episode, other = uuid.uuid4(), uuid.uuid4()
    ends = (uuid.uuid4(), uuid.uuid4())
    ids = {name: uuid.uuid4() for name in ("question", "answer", "far", "loner", "elsewhere")}

    def at(name, score, episode_id, position):
        return Candidate(ids[name], score, *ends, None, episode_id, position)

    # "answer" (position 2) sits beside "question" (position 1), the best match; "loner" is
    # alone in its episode; "far" is three places from anything; "elsewhere" has the
    # answer's position in another episode. Without the bonus "loner" beats "answer".
    # Seven fillers between them, each from an episode of its own: near the tenth place a
    # rank is worth less than the nudge, near the first it is worth more.
    fillers = [Candidate(uuid.uuid4(), 0.8 - i / 100, *ends, None, uuid.uuid4(), 0)
               for i in range(7)]
    vector = [at("question", 0.9, episode, 1), *fillers, at("loner", 0.5, other, 7),
              at("answer", 0.45, episode, 2), at("far", 0.4, episode, 5)]
    text = [at("elsewhere", 6.0, uuid.uuid4(), 2)]
    names = {v: k for k, v in ids.items()}

    def order():
        return [names.get(h.fact_id, "filler") for h in fuse(vector, text, top_k=20)]

    # The first stage's order (the learned order weighs the neighbours on its own too).
    monkeypatch.setattr(search, "LEARNED_RANKING", False)
    monkeypatch.setattr(search, "NEIGHBOUR_WEIGHT", 0.0)
    plain = order()
    assert plain.index("loner") < plain.index("answer")
    monkeypatch.setattr(search, "NEIGHBOUR_WEIGHT", 0.05)
    nudged = order()
    assert nudged.index("answer") < nudged.index("loner")
    fused = {names.get(h.fact_id, "filler"): h.fused for h in fuse(vector, text, top_k=20)}
    rrf = 1 / (search.RRF_K + 1)
    # Each bonus comes from the scores before any bonus: the two neighbours lift each other
    # by a twentieth of the other's own vote; "far" and the other episodes gain nothing.
    assert fused["question"] == pytest.approx(rrf + 0.05 / (search.RRF_K + 10))
    assert fused["answer"] == pytest.approx(1 / (search.RRF_K + 10) + 0.05 * rrf)
    assert fused["far"] == pytest.approx(1 / (search.RRF_K + 11))
    assert fused["elsewhere"] == pytest.approx(rrf)
    # Notes (no episode) are fused as before, side by side or not.
    notes = fuse([Candidate(ids["far"], 0.4, *ends), Candidate(ids["loner"], 0.3, *ends)], [],
                 top_k=2)
    assert [h.fused for h in notes] == pytest.approx([rrf, 1 / (search.RRF_K + 2)])


def test_candidates_carry_where_each_fact_was_written(team):
    from memories.graph.selectors import memory_for
    from memories.search import candidates
    from memories.search.embeddings import get_embedder
    from memories.search.window import Window

    memory = memory_for(team.principal)
    written = {f.pk: (f.episode_id, f.position) for f in Fact.objects.filter(memory=memory)}
    assert sorted(p for _, p in written.values()) == [0, 1, 2, 3, 4]
    vector = candidates.vector_candidates(memory.pk, "shared", get_embedder().embed(
        ["Who went trekking in the mountains?"])[0], 50, Window(), exact=True)
    text = candidates.text_candidates(memory.pk, "shared", "Postgres Kyoto", 50, Window())
    # And a waiting fact, read by its first-pass vector.
    team.write(session_id="s2", entities=TEAM, facts=[
        fact("Alice", "Kyoto", "visited", "Alice toured the temples of Kyoto in autumn")])
    waiting = Fact.objects.get(fact__startswith="Alice toured")
    assert waiting.embedding is None
    pending = candidates.vector_candidates(memory.pk, "shared", get_embedder().embed(
        ["temples in autumn"])[0], 50, Window())
    written[waiting.pk] = (waiting.episode_id, waiting.position)
    for found in (vector, text, pending):
        assert found and all((c.episode_id, c.position) == written[c.fact_id] for c in found)
    assert waiting.pk in {c.fact_id for c in pending}


def test_a_possessive_names_its_entity_and_the_name_is_masked_for_the_second_vector(team):
    from echomem import bulk
    from memories.search import hybrid

    written = Fact.objects.filter(fact=FACTS[4]["fact"]).get()
    mentions = hybrid.mentions_from(bulk.execute(*hybrid.mentions_statement(
        written.memory_id, written.partition, "Where was Bob\u2019s birthplace, and Alice's?")))
    assert mentions.ids == {written.source_id, Fact.objects.get(fact=FACTS[0]["fact"]).source_id}
    assert mentions.names == ("alice", "bob")
    assert hybrid.masked_query("Where was Bob's birthplace, and Alice's?", mentions.names) \
        == "where was they birthplace and they"


def test_the_masked_vector_blends_in_only_when_the_query_names_an_entity():
    import numpy as np

    from memories.search import hybrid

    plain, masked = np.array([1.0, 0.0]), np.array([0.0, 1.0])
    assert hybrid.query_vector(plain, None) is plain
    blended = hybrid.query_vector(plain, masked)
    assert np.isclose(np.linalg.norm(blended), 1.0)
    assert blended[0] > 0 and blended[1] > 0


def test_the_pool_is_ordered_by_the_learned_weights_over_its_features():
    import uuid

    from memories.search import hybrid as search
    from memories.search.hybrid import Candidate, fuse

    subject, other, episode = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
    ids = [uuid.uuid4() for _ in range(4)]
    vector = [Candidate(ids[0], 0.7, other, other, None, episode, 0),
              Candidate(ids[1], 0.6, subject, other, None, episode, 1),
              Candidate(ids[2], 0.1, other, other, None, episode, 2)]  # under the floor
    text = [Candidate(ids[3], 4.0, other, other, 0.5, uuid.uuid4(), 9),
            Candidate(ids[1], 2.0, subject, other, 0.1, episode, 1)]  # under the coverage floor
    hits = fuse(vector, text, top_k=10, mentioned={subject})
    assert {h.fact_id for h in hits} == {ids[0], ids[1], ids[3]}
    features = search.rank_features(sorted(hits, key=lambda h: -h.fused),
                                    [c for c in vector if c.score >= search.VECTOR_FLOOR],
                                    text, {subject})
    second = features[ids[1]]
    k = search.RRF_K
    assert second["vrrf"] == pytest.approx((k + 1) / (k + 2))
    assert second["trrf"] == 0.0 and second["cov"] == 0.1 and second["bm25"] == 0.5
    assert second["both"] == 1.0 and second["subj"] == 1.0 and second["obj"] == 0.0
    assert second["cosgap"] == pytest.approx(0.1) and second["nbn"] == 0.25
    assert features[ids[3]]["cosgap"] == 0.5 and features[ids[3]]["lvr"] == 1.2
    # The query names an entity: each weight is its own plus the one added for names.
    for hit in hits:
        assert hit.score == pytest.approx(sum(
            (alone + extra) * features[hit.fact_id][name]
            for name, (alone, extra) in search.RANK_WEIGHTS.items()))
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


@pytest.mark.parametrize("question", [
    "Who moved the billing tables to Postgres?", "Kyoto", "Alice Bob Postgres Kyoto",
    "what does the checkout service read", "nothing here matches zzzqx"])
def test_a_small_memory_is_matched_row_by_row_with_the_same_answer(team, question):
    """A partition the vector search reads exactly is matched for words row by row, not
    through the word index (whose posting lists grow with every memory): the same
    candidates, in the same order, with the same scores, in the past too."""
    from memories.graph.selectors import memory_for
    from memories.search import candidates
    from memories.search.window import Window

    team.write(session_id="s2", entities=TEAM, facts=[
        fact("Bob", "Postgres", "migrated", "Bob moved the billing tables back to MySQL")])
    Engine.index()
    memory = memory_for(team.principal)
    for window in (Window(), Window(include_superseded=True),
                   Window(as_of=timezone.now() - timezone.timedelta(days=1))):
        through_index, row_by_row = (
            candidates.text_candidates(memory.pk, "shared", question, 50, window, small=small)
            for small in (False, True))
        assert row_by_row == through_index


@pytest.mark.django_db(transaction=True)
def test_the_searches_run_outside_any_transaction_and_leave_no_setting_behind(alice,
                                                                             monkeypatch):
    """Each search sends its SET LOCALs with it, as one simple query (one implicit
    transaction): no BEGIN and COMMIT around them, and nothing set outlives them."""
    from django.db import connection

    from memories.search import candidates

    engine = Engine(alice.principal)
    engine.write(entities=[person("Ann"), person("Ben")], facts=[
        fact("Ann", "Ben", "knows", "Ann knows Ben from the climbing gym")])
    Engine.index()
    seen = []
    for name in ("text_candidates", "vector_candidates"):
        search = getattr(candidates, name)

        def watched(*args, _search=search, **kwargs):
            seen.append(connection.in_atomic_block)
            return _search(*args, **kwargs)

        monkeypatch.setattr(candidates, name, watched)

    found = engine.query("who climbs with Ann?")["facts"]

    assert found and found[0]["fact"] == "Ann knows Ben from the climbing gym"
    assert seen == [False, False]
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_setting('cpu_operator_cost'), "
                       "current_setting('hnsw.ef_search')")
        assert cursor.fetchone() == ("0.0025", "40")  # the server's defaults, untouched
