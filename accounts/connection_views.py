"""Connections as the Connected apps page shows them: the memories they are limited to by
name, and how the app registered (by itself, or described by a client ID metadata document
on some host), as the dashboard shows keys (accounts/key_views.py)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from accounts.models import Connection


@dataclass(frozen=True)
class ConnectionView:
    connection: Connection
    memory_names: list[str] | None  # None: every memory of the account
    document_host: str | None  # its client ID metadata document's host; None: registered itself

    @property
    def by_document(self) -> bool:
        return self.document_host is not None


def document_host(client_id: str) -> str | None:
    """A client ID that is an https URL names the app's metadata document (and its host is
    who vouches for the app); any other client ID was issued here, at registration."""
    if not client_id.startswith("https://"):
        return None
    return urlsplit(client_id).hostname or client_id


def connections_with_limits(account_id: int,
                            connections: Iterable[Connection]) -> list[ConnectionView]:
    """The page's connections with the names of their memories (one query for the page)."""
    connections = list(connections)
    limited = {pk for c in connections for pk in (c.memory_ids or ())}
    # The engine's Memory, reached through the foreign key: tenancy imports no engine.
    memories = Connection._meta.get_field("default_memory").related_model
    names = dict(memories.objects.filter(account_id=account_id, pk__in=limited)
                 .values_list("pk", "name")) if limited else {}
    return [ConnectionView(
        connection=c,
        memory_names=(None if c.memory_ids is None else
                      sorted(names[pk] for pk in c.memory_ids if pk in names)),
        document_host=document_host(c.application.client_id),
    ) for c in connections]
