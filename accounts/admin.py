from __future__ import annotations

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.utils import timezone

from accounts import second_factor_admin  # noqa: F401  (people's factors, list and delete)
from accounts.models import Account, ApiKey, Membership
from accounts.services import (
    api_key_check,
    api_key_create,
    api_key_rate_limit_set,
    api_key_revoke,
)
from accounts.user_admin import UserAdmin
from echomem.admin_widgets import CheckedAutocomplete
from echomem.errors import EchoError
from redaction.redactor import check_user_patterns

admin.site.unregister(get_user_model())
admin.site.register(get_user_model(), UserAdmin)


class MembershipInline(CheckedAutocomplete, admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]


class AccountForm(forms.ModelForm):
    class Meta:
        model = Account
        fields = ["name", "default_memory", "redact_secrets", "redaction_patterns"]
        help_texts = {"redaction_patterns": 'Extra secret patterns, a JSON list of regular '
                                            'expressions, e.g. ["ACME-[0-9]{6}"].'}

    def clean_redaction_patterns(self):
        try:
            return check_user_patterns(self.cleaned_data["redaction_patterns"])
        except EchoError as refused:
            raise forms.ValidationError(f"{refused.message}; {refused.fix}") from None


@admin.register(Account)
class AccountAdmin(admin.ModelAdmin):
    form = AccountForm
    list_display = ["name", "created_at"]
    search_fields = ["name"]
    # memories/admin.py adds the account's memories (tenancy knows nothing of them).
    inlines = [MembershipInline]

    def has_delete_permission(self, request, obj=None) -> bool:
        # Deleting an account deletes its memories: only through the erasure path, by an
        # owner on the dashboard's account page (memories.erasure.services.account_delete).
        return False


@admin.register(Membership)
class MembershipAdmin(CheckedAutocomplete, admin.ModelAdmin):
    list_display = ["user", "account", "role", "created_at"]
    list_filter = ["role"]
    search_fields = ["user__username", "account__name"]
    autocomplete_fields = ["user", "account"]


class ApiKeyForm(forms.ModelForm):
    class Meta:
        model = ApiKey
        fields = ["account", "holder", "name", "tool", "default_memory", "requests_per_minute"]

    def clean(self):
        data = super().clean()
        if self.instance.pk is None and data.get("account") and data.get("holder"):
            try:
                api_key_check(account=data["account"], holder=data["holder"],
                              tool=data.get("tool") or "",
                              default_memory=data.get("default_memory"))
            except EchoError as exc:
                self.add_error(exc.field if exc.field in self.fields else None,
                               f"{exc.message}; {exc.fix}")
        return data


@admin.register(ApiKey)
class ApiKeyAdmin(CheckedAutocomplete, admin.ModelAdmin):
    """Keys are issued here through the same service as everywhere; the hash is never shown."""

    list_display = ["__str__", "account", "holder", "tool", "created_at", "last_used_at",
                    "revoked_at"]
    list_filter = ["tool", ("revoked_at", admin.EmptyFieldListFilter)]
    search_fields = ["name", "prefix", "tool", "account__name", "holder__username"]
    # A key's limits are chosen on the dashboard's key page and shown here; a key issued
    # here has none.
    fields = ["account", "holder", "name", "tool", "default_memory", "requests_per_minute",
              "prefix", "created_at", "last_used_at", "last_used_network", "read_only",
              "memory_ids", "expires_at", "rotated_at", "revoked_at"]
    readonly_fields = ["prefix", "created_at", "last_used_at", "last_used_network",
                       "read_only", "memory_ids", "expires_at", "rotated_at", "revoked_at"]
    autocomplete_fields = ["account", "holder"]
    actions = ["revoke"]
    form = ApiKeyForm

    def get_readonly_fields(self, request, obj=None):
        fixed = list(self.readonly_fields)
        if obj is not None:  # who holds a key and for what is fixed once it exists
            fixed += ["account", "holder"]
        if not settings.SELF_HOSTED:  # the hosted service keeps each plan's rate
            fixed.append("requests_per_minute")
        return fixed

    def save_model(self, request, obj: ApiKey, form, change: bool) -> None:
        rate = form.cleaned_data.get("requests_per_minute")
        if change:
            rate_changed = "requests_per_minute" in form.changed_data
            if rate_changed:  # through the service, which audits it and tells every process
                obj.requests_per_minute = ApiKey.objects.get(pk=obj.pk).requests_per_minute
            super().save_model(request, obj, form, change)
            if rate_changed:
                api_key_rate_limit_set(key=obj, requests_per_minute=rate,
                                       actor_id=request.user.pk)
            return
        key, plaintext = api_key_create(
            account=obj.account, holder=obj.holder, name=obj.name, tool=obj.tool,
            default_memory=obj.default_memory, actor_id=request.user.pk,
        )
        if rate is not None:
            api_key_rate_limit_set(key=key, requests_per_minute=rate, actor_id=request.user.pk)
        obj.pk, obj.prefix = key.pk, key.prefix
        messages.warning(request, f"New key (shown once, copy it now): {plaintext}")

    @admin.action(description="Revoke selected keys")
    def revoke(self, request, queryset) -> None:
        keys = list(queryset.filter(revoked_at__isnull=True))
        for key in keys:
            api_key_revoke(key=key, actor_id=request.user.pk)
        messages.success(request, f"Revoked {len(keys)} key(s) at {timezone.now():%Y-%m-%d %H:%M}.")
