"""Vectors as query parameters, through pgvector's psycopg adapter.

Every statement that sends a vector passes a `Vector` or `HalfVector` (`vector()`,
`halfvec()`), and psycopg sends it in binary where the statement is bound server-side
(echomem/bulk.py) and as pgvector's text otherwise (Django's cursors). Only the adapter's
dumpers are registered: its loaders would also change what every embedding column reads
back as, for the ORM's fields and the explorer, which expect pgvector's text.

The types exist once migration 0001 has created the extension, so registration happens
on each new connection and again after `migrate` (the connection that created them).
"""

from __future__ import annotations

import numpy as np
from pgvector import HalfVector, Vector
from pgvector.psycopg.halfvec import HalfVectorBinaryDumper, HalfVectorDumper
from pgvector.psycopg.vector import VectorBinaryDumper, VectorDumper
from psycopg.types import TypeInfo

_DUMPERS = (("vector", Vector, (VectorDumper, VectorBinaryDumper)),
            ("halfvec", HalfVector, (HalfVectorDumper, HalfVectorBinaryDumper)))


def vector(values: np.ndarray) -> Vector:
    return Vector(np.asarray(values, dtype=np.float32))


def halfvec(values: np.ndarray) -> HalfVector:
    return HalfVector(np.asarray(values, dtype=np.float32))


def register(conn) -> bool:
    """Teach this psycopg connection to send vectors; False while the types do not exist."""
    if getattr(conn, "_echo_vector_params", False):
        return True
    infos = [TypeInfo.fetch(conn, name) for name, _, _ in _DUMPERS]
    if any(info is None for info in infos):
        return False
    for info, (name, cls, dumpers) in zip(infos, _DUMPERS, strict=True):
        info.register(conn)  # its array type too, for `%s::halfvec[]`
        for dumper in dumpers:
            # The oid tells the server the parameter's type, as pgvector's own registration does.
            conn.adapters.register_dumper(cls, type(f"{name}_dumper", (dumper,), {"oid": info.oid}))
    conn._echo_vector_params = True
    return True


def on_connection_created(sender, connection, **kwargs) -> None:
    if connection.vendor == "postgresql":
        register(connection.connection)


def after_migrate(sender, using="default", **kwargs) -> None:
    from django.db import connections

    wrapper = connections[using]
    if wrapper.vendor == "postgresql" and wrapper.connection is not None:
        register(wrapper.connection)
