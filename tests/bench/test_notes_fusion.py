"""The note fusion's cross-validation keeps a note's questions in one fold and reports
each question once, held out."""

from __future__ import annotations

import uuid

from bench.locomo import score
from bench.notes_fusion import FOLDS, Question, cross_validate, folds_of, grid
from memories.notes.ranking import fuse_notes
from memories.search.hybrid import Candidate


def question(qid: str, evidence: tuple[str, ...], kind: str = "paraphrase") -> Question:
    return Question(qid, kind, evidence, [], [])


def test_questions_sharing_an_evidence_note_share_a_fold():
    questions = [question("q1", ("a",)), question("q2", ("b",)), question("q3", ("a", "c")),
                 question("q4", ("c",)), question("q5", ("d",)), question("q6", ("e",))]
    fold = folds_of(questions, folds=3)
    assert fold[0] == fold[2] == fold[3]  # a and c are joined by q3
    assert len(set(fold)) == 3


def test_cross_validation_picks_text_weight_when_words_decide_and_vector_alone_otherwise():
    notes = {name: uuid.uuid4() for name in "abcdefghij"}
    set_id = {v: k for k, v in notes.items()}
    questions = []
    for index, name in enumerate("abcdefghij"):
        other = "abcdefghij"[(index + 1) % 10]
        # Meaning prefers the wrong note by a little; the right one holds the pasted words.
        vector = [Candidate(notes[other], 0.60, None, None), Candidate(notes[name], 0.58,
                                                                       None, None)]
        text = [Candidate(notes[name], 9.0, None, None, coverage=0.9),
                Candidate(notes[other], 1.0, None, None, coverage=0.1)]
        questions.append(Question(f"q{index}", "exact", (name,), vector, text))
    result = cross_validate(questions, fuse_notes, 1, score,
                            lambda hit: set_id[hit.fact_id])
    assert result["chosen"].text_weight > 0
    assert result["held_out"]["overall"]["r@1"] == 1.0
    assert result["vector_alone"]["overall"]["r@1"] == 0.0
    assert len(result["per_fold"]) == FOLDS
    assert sum(size for _, size, _ in result["per_fold"]) == len(questions)
    assert len(grid()) == len(set(grid()))
