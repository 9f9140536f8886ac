"""Every write the engine makes."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from echomem.errors import ValidationFailed
from memories.models import MEMORY_NAME_RULE, Memory, memory_name_validator


def memory_create(*, account_id: int, name: str, description: str = "") -> Memory:
    try:
        memory_name_validator(name)
    except ValidationError:
        raise ValidationFailed(
            f"memory name {name!r} is not allowed", field="name",
            fix=f"use {MEMORY_NAME_RULE}, for example 'support-bot'",
        ) from None
    try:
        with transaction.atomic():
            return Memory.objects.create(account_id=account_id, name=name,
                                         description=description)
    except IntegrityError:
        raise ValidationFailed(
            f"a memory named {name!r} already exists in this account", field="name",
            fix="choose another name, or use the existing memory",
        ) from None
