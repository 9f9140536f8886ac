"""The file itself: valid against the published JSON Schema, which is the one the line models
generate; vectors travel as stored and count in the word statistics at once."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import numpy as np

from memories.models import CorpusStat, Fact
from memories.portability.schema import json_schema, rendered
from tests.factories import Engine
from tests.portability.conftest import exported, imported, records

SCHEMA_FILE = Path(__file__).resolve().parents[2] / "docs" / "export-format.schema.json"


def test_the_published_schema_is_the_one_the_line_models_make():
    assert SCHEMA_FILE.read_text() == rendered(), (
        "regenerate: python -m memories.portability.schema > docs/export-format.schema.json")


def test_every_line_of_an_export_is_valid_against_the_schema(alice, filled):
    schema = json.loads(SCHEMA_FILE.read_text())
    validator = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())
    jsonschema.Draft202012Validator.check_schema(json_schema())
    lines = records(exported(alice.principal, vectors=True))
    for line in lines:
        validator.validate(line)
    assert {line["kind"] for line in lines} == {"header", "episode", "entity", "fact", "note",
                                                "recall_save", "trailer"}
    assert lines[-1]["records"] == len(lines) - 2


def _vectors(account) -> dict[str, np.ndarray]:
    return {f.fact: np.asarray(f.embedding, dtype=np.float32) for f in Fact.objects.filter(
        memory__account=account)}


def test_vectors_of_the_same_model_are_stored_as_given(alice, charlie, filled):
    report = imported(charlie.principal, exported(alice.principal, vectors=True))

    assert report.vectors == "stored as given"
    mine, theirs = _vectors(charlie.account), _vectors(alice.account)
    assert mine.keys() == theirs.keys()
    assert all(np.array_equal(mine[text], theirs[text]) for text in mine)
    stats = {(c.partition.split(":")[0], c.documents, c.tokens)
             for c in CorpusStat.objects.filter(memory__account=charlie.account)}
    assert stats == {(c.partition.split(":")[0], c.documents, c.tokens)
                     for c in CorpusStat.objects.filter(memory__account=alice.account)}


def test_vectors_of_another_model_are_embedded_again(alice, charlie, filled):
    lines = exported(alice.principal, vectors=True)
    header = json.loads(lines[0]) | {"embedding_model": "some-other-model:context-0"}

    report = imported(charlie.principal, [json.dumps(header) + "\n", *lines[1:]])

    assert report.vectors.startswith("re-embedded")
    waiting = Fact.objects.filter(memory__account=charlie.account, embedding__isnull=True)
    assert waiting.count() == 4  # the indexer embeds them once the import commits
    Engine.index()
    mine, theirs = _vectors(charlie.account), _vectors(alice.account)
    assert all(np.allclose(mine[text], theirs[text], atol=2e-3) for text in mine)


def test_imported_with_vectors_a_memory_answers_queries_as_the_source_did(alice, charlie,
                                                                          filled):
    imported(charlie.principal, exported(alice.principal, vectors=True))

    for question in ("why was there an outage?", "where does Alice work", "deploy"):
        answers = [[(f["fact"], f["rank"], f["score"]) for f in Engine(actor.principal).query(
            question, include_superseded=True)["facts"]] for actor in (alice, charlie)]
        assert answers[0] and answers[0] == answers[1]
