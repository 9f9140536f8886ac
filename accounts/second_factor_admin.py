"""People's second factors in the admin: listed and deletable (to help someone locked out),
never shown or added there. django-otp's own admins would show a TOTP secret's QR code and
the recovery codes to staff: a factor only its owner ever sees."""

from __future__ import annotations

from django.contrib import admin
from django_otp.plugins.otp_static.models import StaticDevice
from django_otp.plugins.otp_totp.models import TOTPDevice
from django_otp_webauthn.models import WebAuthnCredential


class FactorAdmin(admin.ModelAdmin):
    list_display = ["user", "name", "confirmed", "created_at", "last_used_at"]
    list_filter = ["confirmed"]
    search_fields = ["user__username", "user__email", "name"]
    fields = ["user", "name", "confirmed", "created_at", "last_used_at"]
    readonly_fields = fields

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


for model in (TOTPDevice, StaticDevice):
    if admin.site.is_registered(model):
        admin.site.unregister(model)
for model in (TOTPDevice, StaticDevice, WebAuthnCredential):
    admin.site.register(model, FactorAdmin)
