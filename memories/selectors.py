"""Every read the engine makes. Each takes the Principal and sees only its account."""

from __future__ import annotations

from accounts.principal import Principal
from echomem.errors import NotFound
from memories.models import Memory

DEFAULT_MEMORY_NAME = "default"


def memory_list(principal: Principal) -> list[Memory]:
    return list(Memory.objects.filter(account_id=principal.account_id).order_by("name"))


def memory_for(principal: Principal, name: str | None = None) -> Memory:
    """The named memory, else the key's default, else the account's `default`.

    An unknown name is refused with the names that do exist: creating a graph by
    use would let a typo open an empty graph that silently recalls nothing.
    """
    memories = Memory.objects.filter(account_id=principal.account_id)
    if name:
        memory = memories.filter(name=name).first()
    elif principal.default_memory_id:
        memory = memories.filter(pk=principal.default_memory_id).first()
    else:
        memory = memories.filter(name=DEFAULT_MEMORY_NAME).first()
    if memory is not None:
        return memory
    existing = sorted(memories.values_list("name", flat=True))
    wanted = name or DEFAULT_MEMORY_NAME
    listed = ", ".join(existing) if existing else "none yet"
    raise NotFound(
        f"unknown memory {wanted!r}; this account has: {listed}", field="memory",
        fix="pass one of the existing names, or create the memory in the dashboard first",
    )
