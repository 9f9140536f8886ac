"""Which versions of facts a read sees, on two clocks: the Window every search and graph
read takes (memories/search/hybrid.py and candidates.py read by it)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import BooleanField, Q
from django.db.models.expressions import RawSQL

from memories.models import Fact


@dataclass(frozen=True)
class Window:
    """Which versions of facts a read sees, on two clocks (docs/engine.md, "Record time and
    event time").

    Record time (`as_of`): the versions the memory held then. Event time (`valid_as_of`):
    of the versions held (now, or at `as_of`), those true in the world at that time. A
    version is true from `valid_at` (else from when it was recorded) until `invalid_at` and,
    once replaced, until its replacement starts: `valid_at` of the replacement, else the
    moment of replacement (the replacement's `created_at` is that moment). So a key's
    history reads as consecutive periods, as Graphiti closes an edge a new one contradicts.
    """

    include_superseded: bool = False
    as_of: datetime | None = None
    valid_as_of: datetime | None = None

    def q(self) -> Q:
        """The same condition as `sql`, for ORM querysets over Fact."""
        where, params = self.sql(Fact._meta.db_table)
        return Q() if where == "TRUE" else Q(RawSQL(where, params, output_field=BooleanField()))

    def sql(self, alias: str = "f") -> tuple[str, list[object]]:
        if self.valid_as_of is not None:
            return self._valid_then(alias)
        if self.as_of is not None:
            return (f"{alias}.created_at <= %s AND ({alias}.superseded_at IS NULL "
                    f"OR {alias}.superseded_at > %s)", [self.as_of, self.as_of])
        if self.include_superseded:
            return "TRUE", []
        return f"{alias}.superseded_at IS NULL", []

    def _valid_then(self, alias: str) -> tuple[str, list[object]]:
        when, recorded = self.valid_as_of, self.as_of
        # The replacement's start is a primary-key probe, last so that it runs only for the
        # replaced versions the row's own columns have not already ruled out.
        clauses = [f"coalesce({alias}.valid_at, {alias}.created_at) <= %s",
                   f"({alias}.invalid_at IS NULL OR {alias}.invalid_at > %s)"]
        params: list[object] = [when, when]
        live_then = f"{alias}.superseded_at IS NULL"
        if recorded is not None:
            clauses.insert(0, f"{alias}.created_at <= %s")
            params.insert(0, recorded)
            live_then += f" OR {alias}.superseded_at > %s"
            params.append(recorded)
        replacement_start = (
            f"coalesce((SELECT n.valid_at FROM {Fact._meta.db_table} n "
            f"WHERE n.id = {alias}.superseded_by_id), {alias}.superseded_at)")
        clauses.append(f"({live_then} OR {replacement_start} > %s)")
        params.append(when)
        return " AND ".join(clauses), params
