"""The engine's tuning settings (embedding context, read-your-writes, first pass, import
line limit), star-imported by echomem.settings; each names the module that reads it."""

import environ

env = environ.Env()

# How many earlier facts of the same episode are embedded with each fact
# (memories/search/storing.py).
ECHO_MEMORY_EMBED_CONTEXT = env.int("ECHO_MEMORY_EMBED_CONTEXT", default=2)
# The longest line `echo-memory import` and the import pages read, in bytes
# (memories/portability/reading.py); a record with its vector is about 8 KB.
ECHO_MEMORY_IMPORT_LINE_BYTES = env.int("ECHO_MEMORY_IMPORT_LINE_BYTES", default=1024 * 1024)
# Read-your-writes: query_memory embeds up to this many of its best candidates that still
# wait for their vector, as many as this long covers (memories/search/freshness.py rescore_waiting).
ECHO_MEMORY_QUERY_EMBED_FACTS = env.int("ECHO_MEMORY_QUERY_EMBED_FACTS", default=4)
ECHO_MEMORY_QUERY_EMBED_SECONDS = env.float("ECHO_MEMORY_QUERY_EMBED_SECONDS", default=0.25)
# And memory_search embeds up to this many of the partition's newest waiting notes, in the
# same time (memories/search/freshness.py settle_notes).
ECHO_MEMORY_SEARCH_EMBED_NOTES = env.int("ECHO_MEMORY_SEARCH_EMBED_NOTES", default=4)
# Write each fact with a first-pass vector, so it is found by meaning before the indexer
# gets to it (memories/search/first_pass.py); off, a waiting fact is found by words only.
ECHO_MEMORY_FIRST_PASS = env.bool("ECHO_MEMORY_FIRST_PASS", default=True)
