from __future__ import annotations

from django.core.validators import RegexValidator
from django.db import models

MEMORY_NAME_RULE = "1-64 characters: lowercase letters, digits, '-' and '_'"
memory_name_validator = RegexValidator(
    r"^[a-z0-9_-]{1,64}\Z", message=f"A memory name must be {MEMORY_NAME_RULE}."
)


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
            models.CheckConstraint(condition=models.Q(name__regex=r"^[a-z0-9_-]{1,64}$"),
                                   name="memory_name_format"),
        ]

    def __str__(self) -> str:
        return self.name
