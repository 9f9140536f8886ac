from __future__ import annotations

import re
import uuid

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex, OpClass
from django.contrib.postgres.search import SearchVector, SearchVectorField
from django.core.validators import RegexValidator
from django.db import models
from django.db.models import Q
from pgvector.django import HalfVectorField, HnswIndex, VectorField

from memories.core import limits

EMBEDDING_DIMENSIONS = 384
MEMORY_NAME_RULE = ("1-64 characters: lowercase letters, digits, '-' and '_' (not 'new', "
                    "the dashboard's page for creating one)")
# Every name a memory can have (the table's check constraint says the same).
MEMORY_NAME = r"[a-z0-9_-]{1,64}"
# `new` would share its address with the new-memory page (/memories/new/).
memory_name_validator = RegexValidator(
    rf"^(?!new\Z){MEMORY_NAME}\Z", message=f"A memory name must be {MEMORY_NAME_RULE}."
)
ACTIVE = Q(superseded_at__isnull=True)
TEXT_SEARCH_CONFIG = "english"


class Memory(models.Model):
    """A named graph. Names are unique per account and must exist before use."""

    account = models.ForeignKey("accounts.Account", on_delete=models.CASCADE,
                                related_name="memories")
    name = models.CharField(max_length=64, validators=[memory_name_validator])
    description = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "memories"
        constraints = [
            models.UniqueConstraint(fields=["account", "name"], name="memory_name_per_account"),
            models.CheckConstraint(condition=models.Q(name__regex=rf"^{MEMORY_NAME}$"),
                                   name="memory_name_format"),
        ]

    def __str__(self) -> str:
        return self.name

    @staticmethod
    def can_be_named(text: str) -> bool:
        """Whether any memory could have this name. One that could not (a NUL, 10,000
        characters, capitals), from a URL or an argument, names no memory and is never
        sent to the database, which refuses NUL outright."""
        return re.fullmatch(MEMORY_NAME, text) is not None


class Episode(models.Model):
    """Provenance: one write_episode call that stored something."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="episodes")
    partition = models.CharField(max_length=200)
    session_id = models.CharField(max_length=limits.LABEL_CHARS, blank=True, default="")
    project = models.CharField(max_length=limits.LABEL_CHARS, blank=True, default="")
    holder = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL,
                               related_name="+")
    tool = models.CharField(max_length=64)
    key = models.ForeignKey("accounts.ApiKey", null=True, on_delete=models.SET_NULL,
                            related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)


class Entity(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="entities")
    partition = models.CharField(max_length=200)
    name = models.CharField(max_length=limits.NAME_CHARS)
    normalized_name = models.CharField(max_length=limits.NAME_CHARS)
    # Initials of a multi-word name ('nyc' for New York City), to find abbreviations by index.
    initials = models.CharField(max_length=limits.INITIALS_CHARS, blank=True, default="")
    type = models.CharField(max_length=limits.TYPE_CHARS)
    name_embedding = VectorField(dimensions=EMBEDDING_DIMENSIONS, null=True)
    episode = models.ForeignKey(Episode, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "entities"
        constraints = [
            models.UniqueConstraint(fields=["memory", "partition", "name"],
                                    name="entity_name_per_partition"),
        ]
        indexes = [
            models.Index(fields=["memory", "partition", "normalized_name"],
                         name="entity_normalized"),
            models.Index(fields=["memory", "partition", "initials"], name="entity_initials",
                         condition=~Q(initials="")),
            GinIndex(OpClass("normalized_name", name="gin_trgm_ops"), name="entity_name_trgm"),
            HnswIndex(name="entity_name_embedding", fields=["name_embedding"],
                      opclasses=["vector_cosine_ops"], m=16, ef_construction=64),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.type})"


class Fact(models.Model):
    """An edge (source, relation_type, target) with its sentence; one live edge per key."""

    class Confidence(models.TextChoices):
        EXTRACTED = "extracted"
        INFERRED = "inferred"
        AMBIGUOUS = "ambiguous"

    class CausalHint(models.TextChoices):
        CAUSED_BY = "caused_by"
        LED_TO = "led_to"
        ENABLED_BY = "enabled_by"
        BLOCKED_BY = "blocked_by"
        CONTRADICTS = "contradicts"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="facts")
    partition = models.CharField(max_length=200)
    source = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="facts_out")
    # No index of its own: live-edge lookups use one_live_edge_per_key, causal walks their
    # partial indexes; every index here is paid twice per fact (insert, then embedding).
    target = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="facts_in",
                               db_index=False)
    relation_type = models.CharField(max_length=limits.RELATION_CHARS)
    fact = models.TextField()
    confidence = models.CharField(max_length=16, choices=Confidence.choices)
    causal_hint = models.CharField(max_length=16, choices=CausalHint.choices, null=True)
    session_id = models.CharField(max_length=limits.LABEL_CHARS, blank=True, default="")
    project = models.CharField(max_length=limits.LABEL_CHARS, blank=True, default="")
    episode = models.ForeignKey(Episode, on_delete=models.CASCADE, related_name="facts")
    # Order within the episode: the indexer embeds a fact with the one before it as context.
    position = models.PositiveIntegerField(default=0)
    written_by_holder = models.ForeignKey(settings.AUTH_USER_MODEL, null=True,
                                          on_delete=models.SET_NULL, related_name="+",
                                          db_index=False)
    written_by_tool = models.CharField(max_length=64)
    written_by_key = models.ForeignKey("accounts.ApiKey", null=True, on_delete=models.SET_NULL,
                                       related_name="+", db_index=False)
    created_at = models.DateTimeField()
    superseded_at = models.DateTimeField(null=True)
    superseded_by = models.OneToOneField("self", null=True, on_delete=models.SET_NULL,
                                         related_name="supersedes")
    valid_at = models.DateTimeField(null=True)
    invalid_at = models.DateTimeField(null=True)
    # What is embedded and indexed for words: the sentence with its endpoints' names.
    search_text = models.TextField()
    # Half precision: a vector and its HNSW node take half the bytes, so a search touches
    # fewer pages (vector search at 100k facts 4.7 -> 2.8 ms p50); cosines move by less
    # than 1e-4, which neither ranking nor the 4-decimal score shows (docs/benchmarks.md).
    embedding = HalfVectorField(dimensions=EMBEDDING_DIMENSIONS, null=True)
    # Written with the fact, cleared when `embedding` is stored (memories/search/first_pass.py):
    # searched only while the fact waits for the indexer, so it needs no index of its own.
    first_pass_embedding = HalfVectorField(dimensions=EMBEDDING_DIMENSIONS, null=True)
    # Set when a query has put the model's own (int8) vector in first_pass_embedding while
    # the fact waits (indexing.rescore_waiting): that cosine needs no calibration.
    first_pass_from_model = models.BooleanField(default=False, db_default=False)
    search_vector = models.GeneratedField(
        expression=SearchVector("search_text", config=TEXT_SEARCH_CONFIG),
        output_field=SearchVectorField(), db_persist=True,
    )
    # Its context's words (storing.CONTEXT_VECTOR), weighed by candidates.CONTEXT_WORD_WEIGHT
    # for a fact its own words found, so no index; null for an episode's first fact.
    context_vector = SearchVectorField(null=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["memory", "partition", "source", "target", "relation_type"],
                condition=ACTIVE, name="one_live_edge_per_key",
            ),
            models.CheckConstraint(
                condition=Q(invalid_at__isnull=True) | Q(valid_at__isnull=True)
                | Q(invalid_at__gte=models.F("valid_at")),
                name="fact_valid_before_invalid",
            ),
        ]
        indexes = [
            models.Index(fields=["memory", "partition", "-created_at", "-position"],
                         condition=ACTIVE, name="fact_live_recent"),
            # Replaced versions too: trace_cause with as_of or valid_as_of walks the links
            # held or true then (a replaced causal link is rare, so these stay small).
            models.Index(fields=["source"], condition=Q(causal_hint__isnull=False),
                         name="fact_causal_source"),
            models.Index(fields=["target"], condition=Q(causal_hint__isnull=False),
                         name="fact_causal_target"),
            # The indexer's queues, one per (memory, partition), each in the order it takes
            # facts: without the order in the index, every batch sorted the whole backlog
            # (quadratic after a bulk import). The leading columns let a batch skip-scan
            # the waiting queues and query_memory count and settle its own partition's.
            models.Index(fields=["memory", "partition", "created_at", "position"],
                         condition=Q(embedding__isnull=True), name="fact_index_queue"),
            # A small pending list: a long one is scanned linearly by every search, and
            # made the planner give up on this index for whole-memory scans.
            GinIndex(fields=["search_vector"], name="fact_search_vector",
                     gin_pending_list_limit=256),
            HnswIndex(name="fact_embedding", fields=["embedding"],
                      opclasses=["halfvec_cosine_ops"], m=16, ef_construction=64),
        ]

    def __str__(self) -> str:
        return self.fact[:80]


class TermStat(models.Model):
    """Document frequency of each word per memory partition, for BM25 weighting.

    Maintained by the indexer together with embeddings, so a write never waits on it.
    """

    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="+")
    partition = models.CharField(max_length=200)
    term = models.TextField()
    df = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["memory", "partition", "term"], name="term_once"),
        ]


class CorpusStat(models.Model):
    """Per partition: how many facts are indexed and their total length (BM25's avgdl)."""

    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="+")
    partition = models.CharField(max_length=200)
    documents = models.PositiveIntegerField(default=0)
    tokens = models.BigIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["memory", "partition"], name="corpus_once"),
        ]


class RecallSave(models.Model):
    """A recalled fact saved someone from re-explaining: who wrote it, who read it."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    fact = models.ForeignKey(Fact, on_delete=models.CASCADE, related_name="recall_saves")
    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="+")
    partition = models.CharField(max_length=200)
    writer_holder = models.ForeignKey(settings.AUTH_USER_MODEL, null=True,
                                      on_delete=models.SET_NULL, related_name="+")
    writer_tool = models.CharField(max_length=64)
    reader_holder = models.ForeignKey(settings.AUTH_USER_MODEL, null=True,
                                      on_delete=models.SET_NULL, related_name="+")
    reader_tool = models.CharField(max_length=64)
    reader_key = models.ForeignKey("accounts.ApiKey", null=True, on_delete=models.SET_NULL,
                                   related_name="+")
    note = models.TextField()
    session_id = models.CharField(max_length=limits.LABEL_CHARS, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)


NOTE_TITLE_CHARS = limits.NOTE_TITLE_CHARS


class Note(models.Model):
    """A coding agent's structured note (a decision, a bug, a pattern) in one partition.

    One row per (memory, partition, project, title): saving that title again updates the
    row in place and keeps what it replaced as a NoteVersion, so the id an agent was
    handed stays valid and `memory_details` always finds the current text.
    """

    class Category(models.TextChoices):
        DECISION = "decision"
        BUG = "bug"
        PATTERN = "pattern"
        LEARNING = "learning"
        CONTEXT = "context"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="notes")
    partition = models.CharField(max_length=200)
    project = models.CharField(max_length=limits.LABEL_CHARS, blank=True, default="")
    title = models.CharField(max_length=NOTE_TITLE_CHARS)
    what = models.TextField()
    why = models.TextField(blank=True, default="")
    impact = models.TextField(blank=True, default="")
    tags = models.JSONField(default=list)
    category = models.CharField(max_length=16, choices=Category.choices,
                                default=Category.CONTEXT)
    related_files = models.JSONField(default=list)
    details = models.TextField(blank=True, default="")
    version = models.PositiveIntegerField(default=1)
    written_by_holder = models.ForeignKey(settings.AUTH_USER_MODEL, null=True,
                                          on_delete=models.SET_NULL, related_name="+",
                                          db_index=False)
    written_by_tool = models.CharField(max_length=64)
    written_by_key = models.ForeignKey("accounts.ApiKey", null=True, on_delete=models.SET_NULL,
                                       related_name="+", db_index=False)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()
    # Every field's words (details and files included), for full text; the indexer embeds
    # the shorter head of it (memories/search/note_text.py).
    search_text = models.TextField()
    embedding = HalfVectorField(dimensions=EMBEDDING_DIMENSIONS, null=True)
    search_vector = models.GeneratedField(
        expression=SearchVector("search_text", config=TEXT_SEARCH_CONFIG),
        output_field=SearchVectorField(), db_persist=True,
    )
    # Its distinct content words, listed by the indexer with the embedding, for near-word
    # matching (memories/search/note_words.py); null until then.
    words = ArrayField(models.TextField(), null=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["memory", "partition", "project", "title"],
                                    name="note_title_per_project"),
        ]
        indexes = [
            models.Index(fields=["memory", "partition", "project", "-updated_at"],
                         name="note_recent"),
            models.Index(fields=["updated_at"], condition=Q(embedding__isnull=True),
                         name="note_index_queue"),
            # memory_search settles its own partition's newest waiting notes.
            models.Index(fields=["memory", "partition", "updated_at"],
                         condition=Q(embedding__isnull=True), name="note_waiting"),
            GinIndex(fields=["search_vector"], name="note_search_vector"),
            HnswIndex(name="note_embedding", fields=["embedding"],
                      opclasses=["halfvec_cosine_ops"], m=16, ef_construction=64),
        ]

    def __str__(self) -> str:
        return self.title


class NoteWord(models.Model):
    """One word of a partition's notes and its embedding, for memory_search's word matching.

    A paraphrase shares no word with its note but often a near one ("levy" and "taxed",
    "refused" and "reject"); matching each question word to the nearest word of a note
    needs the words' vectors at search time, and embedding them then costs seconds.
    Kept per memory and partition like the notes, and pruned to the words notes still
    hold (memories/search/note_words.py), so forgetting a note forgets its words.
    """

    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="+",
                               db_index=False)
    partition = models.CharField(max_length=200)
    word = models.TextField()
    embedding = HalfVectorField(dimensions=EMBEDDING_DIMENSIONS)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["memory", "partition", "word"],
                                    name="note_word_per_partition"),
        ]

    def __str__(self) -> str:
        return self.word


class NoteVersion(models.Model):
    """What a note said before a save replaced it (version n of the note, n < note.version)."""

    note = models.ForeignKey(Note, on_delete=models.CASCADE, related_name="versions")
    # The note's memory again: erasing a memory deletes every row that names it
    # (memories/erasure/services.py), versions before their notes.
    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="+",
                               db_index=False)
    version = models.PositiveIntegerField()
    title = models.CharField(max_length=NOTE_TITLE_CHARS)
    what = models.TextField()
    why = models.TextField(blank=True, default="")
    impact = models.TextField(blank=True, default="")
    tags = models.JSONField(default=list)
    category = models.CharField(max_length=16, choices=Note.Category.choices)
    related_files = models.JSONField(default=list)
    details = models.TextField(blank=True, default="")
    written_by_tool = models.CharField(max_length=64)
    saved_at = models.DateTimeField()
    replaced_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["note", "version"], name="note_version_once"),
        ]


class EmbeddingModelState(models.Model):
    """Which embedding model made the stored vectors, and, after a model change, how far
    re-embedding has come (one row; memories/search/reembedding.py)."""

    model = models.CharField(max_length=64, help_text="Fingerprint of the vectors' model.")
    target = models.CharField(max_length=64, blank=True, default="",
                              help_text="The model being re-embedded to, while one is.")
    stage = models.CharField(max_length=16, blank=True, default="")
    after = models.UUIDField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)


from memories.import_records import BoxIdentity, ImportedRecord  # noqa: E402,F401 (registered)
