from django.contrib.postgres.operations import TrigramExtension
from django.db import migrations
from pgvector.django import VectorExtension


class Migration(migrations.Migration):
    """pgvector for embeddings, pg_trgm for similar-name lookups; both ship with the box."""

    initial = True
    dependencies = []
    operations = [VectorExtension(), TrigramExtension()]
