"""The onward link a confirmation gives after an erasure or a revocation: the audit log,
filtered to that action, with the event just recorded at its top (newest first)."""

from __future__ import annotations

from urllib.parse import urlencode

from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString


def audit_entry(action: str) -> SafeString:
    return format_html('<a href="{}?{}">See its audit entry</a>.',
                       reverse("web:audit_log"), urlencode({"action": action}))
