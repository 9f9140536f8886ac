from django.contrib import admin

from accounts.admin import AccountAdmin
from echomem.admin_widgets import CheckedAutocomplete
from memories.models import Memory


@admin.register(Memory)
class MemoryAdmin(CheckedAutocomplete, admin.ModelAdmin):
    list_display = ["name", "account", "created_at"]
    search_fields = ["name", "account__name"]
    autocomplete_fields = ["account"]

    def has_delete_permission(self, request, obj=None) -> bool:
        # The admin would delete with the ORM: around the erasure path (the memory's text
        # would stay in the audit log) and moving the keys whose default it is to the
        # account's default without anyone choosing. Owners and admins delete a memory
        # from the dashboard, which asks about those keys (memories.erasure.services.memory_delete).
        return False


class MemoryInline(admin.TabularInline):
    model = Memory
    extra = 0
    fields = ["name", "description", "created_at"]
    readonly_fields = ["created_at"]
    # Deleted from the dashboard only, through the erasure path (MemoryAdmin says why).
    can_delete = False


# An account's page lists its memories; tenancy's admin cannot name them (accounts imports
# no engine), so the engine adds its inline to it. The admin builds its inlines from this
# list on each request, after every app's admin module has loaded.
AccountAdmin.inlines = [*AccountAdmin.inlines, MemoryInline]
