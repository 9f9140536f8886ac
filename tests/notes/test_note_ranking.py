"""How memory_search orders notes: meaning first, words only when they cover the question."""

from __future__ import annotations

import uuid

from memories.models import Note
from memories.notes import ranking as note_ranking
from memories.search import candidates, indexing, note_words
from memories.search.embeddings import get_embedder
from memories.search.hybrid import Candidate
from memories.search.note_words import WordMatch
from tests.factories import note

ENDS = (None, None)


def ids(hits) -> list[uuid.UUID]:
    return [hit.fact_id for hit in hits]


def test_a_word_match_on_a_small_share_of_the_question_does_not_reorder_meaning():
    first, second = uuid.uuid4(), uuid.uuid4()
    vector = [Candidate(first, 0.52, *ENDS), Candidate(second, 0.49, *ENDS)]
    # `second` shares one ordinary word with the question: a third of its weight.
    text = [Candidate(second, 2.1, *ENDS, coverage=0.33)]
    assert ids(note_ranking.fuse_notes(vector, text, 5)) == [first, second]


def test_a_note_holding_most_of_the_question_words_is_lifted_over_closer_meaning():
    near, pasted = uuid.uuid4(), uuid.uuid4()
    vector = [Candidate(near, 0.61, *ENDS), Candidate(pasted, 0.57, *ENDS)]
    text = [Candidate(pasted, 11.0, *ENDS, coverage=1.0)]
    hits = note_ranking.fuse_notes(vector, text, 5)
    assert ids(hits) == [pasted, near]
    assert hits[0].matched == ["vector", "text"] and hits[0].rank == 1
    bonus = note_ranking.TEXT_WEIGHT * (1.0 - note_ranking.COVERAGE_FLOOR)
    assert abs(hits[0].fused - (0.57 + bonus)) < 1e-9


def test_near_words_lift_a_paraphrased_note_but_never_bring_in_one_no_list_found():
    closer, paraphrased, unseen = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
    vector = [Candidate(closer, 0.50, *ENDS), Candidate(paraphrased, 0.48, *ENDS)]
    # Four question words: three have a near word in the note (0.6 to 0.9), one has
    # only a far one, under the threshold, which counts nothing.
    words = [WordMatch(paraphrased, (0.9, 0.6, 0.7, 0.2)),
             WordMatch(closer, (0.3, 0.2, 0.25, 0.2)), WordMatch(unseen, (1.0,) * 4)]
    hits = note_ranking.fuse_notes(vector, [], 5, words)
    assert ids(hits) == [paraphrased, closer]
    expected = 0.48 + note_ranking.WORD_WEIGHT * (0.9 + 0.6 + 0.7) / 4
    assert abs(hits[0].fused - expected) < 1e-9
    assert ids(note_ranking.fuse_notes(vector, [], 5, words, word_weight=0)) == \
        [closer, paraphrased]


def test_weak_neighbours_by_meaning_are_left_out_but_word_matches_stay():
    noise, by_words = uuid.uuid4(), uuid.uuid4()
    vector = [Candidate(noise, 0.05, *ENDS)]
    text = [Candidate(by_words, 4.0, *ENDS, coverage=0.2)]
    assert ids(note_ranking.fuse_notes(vector, text, 5)) == [by_words]


def test_a_pasted_error_message_finds_its_note_first_among_near_neighbours(agent):
    saves = [
        note(title="Checkout times out under load", category="bug",
             what="Checkout requests time out after 30s when the payment provider is slow",
             why=None, impact="Raised the client timeout and added a retry", tags=["timeout"],
             related_files=["api/checkout.py"], details=None),
        note(title="Webhook worker times out on large payloads", category="bug",
             what="psycopg.errors.QueryCanceled: canceling statement due to statement "
                  "timeout in the webhook worker",
             why="Bulk upserts of 10k rows ran past statement_timeout=5s",
             impact="Batch the upserts by 500 rows", tags=["timeout", "postgres"],
             related_files=["workers/webhooks.py"], details=None),
        note(title="Login requests time out behind the VPN", category="bug",
             what="Login calls hang for a minute behind the corporate VPN",
             why="MTU of the tunnel drops large TLS records", impact="Lowered the MTU",
             tags=["timeout", "network"], related_files=[], details=None),
    ]
    saved = [agent.call("memory_save", body)["result"] for body in saves]
    assert all(reply["isError"] is False for reply in saved)
    assert indexing.index_pending() == len(saves)
    query = "QueryCanceled: canceling statement due to statement timeout"
    found = agent.call("memory_search", {"query": query})["result"]
    assert found["results"][0]["id"] == saved[1]["id"]
    assert found["results"][0]["matched"] == ["vector", "text"]
    # Meaning alone already puts it first here; what the bonus reads is the coverage the
    # word search measures on the stored notes: the pasted message is most of the question,
    # a note sharing only "timeout" almost none of it.
    pasted = Note.objects.get(pk=saved[1]["id"])
    coverage = {str(c.fact_id): c.coverage for c in candidates.text_candidates(
        pasted.memory_id, pasted.partition, query, 10, candidates.NoteFilter(),
        corpus=candidates.NOTES)}
    others = [coverage[reply["id"]] for reply in (saved[0], saved[2]) if reply["id"] in coverage]
    # 0.56 here: BM25's length normalization lowers a long note's share, which keeps this
    # one under the chosen floor (0.8); noted in the issue as the next thing to measure.
    assert coverage[saved[1]["id"]] > 0.5 and others and max(others) < 0.1


def test_each_question_word_is_matched_to_the_nearest_word_of_a_stored_note(agent):
    saved = agent.call("memory_save", note(
        title="Tips were taxed in California", category="bug",
        what="Tips were sent to Stripe Tax with the coffee tax code and were taxed.",
        why="The tip line used the default product tax_code.", impact=None,
        tags=["tax"], related_files=[], details=None))["result"]
    assert indexing.index_pending() == 1
    stored = Note.objects.get(pk=saved["id"])
    [match] = note_words.word_matches(stored.memory_id, stored.partition,
                                      "Which state taxed the tips?", [stored.pk],
                                      get_embedder())
    # Question words in order (stop words dropped): state, taxed, tips.
    state, taxed, tips = match.nearest
    assert taxed > 0.99 and tips > 0.99  # the same words
    # "state" is in no field, but "california" is near it by meaning alone.
    assert note_ranking.WORD_THRESHOLD < state < 0.99
    assert match.coverage(note_ranking.WORD_THRESHOLD) > 0.8
