from django.contrib import admin

from echomem.admin_widgets import CheckedAutocomplete
from memories.models import Memory


@admin.register(Memory)
class MemoryAdmin(CheckedAutocomplete, admin.ModelAdmin):
    list_display = ["name", "account", "created_at"]
    search_fields = ["name", "account__name"]
    autocomplete_fields = ["account"]
