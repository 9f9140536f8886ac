from django.contrib import admin

from memories.models import Memory


@admin.register(Memory)
class MemoryAdmin(admin.ModelAdmin):
    list_display = ["name", "account", "created_at"]
    search_fields = ["name", "account__name"]
    autocomplete_fields = ["account"]
