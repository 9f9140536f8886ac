"""Vectors as query parameters: pgvector's text input format, cast in the SQL.

Every statement that sends a vector sends this text and casts it (`%s::vector`,
`%s::halfvec`, `%s::text[]` then `::halfvec[]`). pgvector's psycopg adapter would send
them in binary, but it is registered per connection with loaders too, which would change
what every embedding column reads back as for the ORM fields and the explorer; seven
digits are as many as a float32 holds, and half precision keeps fewer. (First-pass
vectors go as integer steps instead, memories/first_pass.py: a write formats 384 numbers
a fact, and integers format in a fraction of the time.)
"""

from __future__ import annotations

import numpy as np


def literal(vector: np.ndarray) -> str:
    return "[" + ",".join(f"{x:.7g}" for x in vector.tolist()) + "]"
