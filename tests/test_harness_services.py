"""The suite runs on real services: this proves which ones it got."""

from __future__ import annotations

import os

import redis
from django.core.cache import cache
from django.db import connection


def test_database_is_postgresql_with_pgvector_and_trigrams(db):
    with connection.cursor() as cursor:
        cursor.execute("SELECT extname FROM pg_extension ORDER BY extname")
        extensions = {row[0] for row in cursor.fetchall()}
        cursor.execute("SELECT '[1,2,3]'::vector <=> '[1,2,4]'::vector")
        distance = cursor.fetchone()[0]
    assert {"vector", "pg_trgm"} <= extensions
    assert 0 < distance < 0.01


def test_cache_is_the_real_redis_at_redis_url():
    cache.set("echo-harness-probe", "here", 30)
    raw = redis.Redis.from_url(os.environ["REDIS_URL"])
    assert any(b"echo-harness-probe" in key for key in raw.keys("*echo-harness-probe*"))
    assert cache.get("echo-harness-probe") == "here"
