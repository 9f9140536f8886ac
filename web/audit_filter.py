"""The audit log's filter, read from the query string: every bad value is a field error
that says what to pick instead, never a server error."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlencode

from django import forms
from django.utils import timezone

from memories.catalog.audit_log import MAX_SEQ, AuditFilter
from memories.core.limits import LABEL_CHARS

ACCOUNT_LEVEL = "account"
# An actor choice's value: its kind, then the person's or key's id or the app's tool label.
USER, KEY, APP = "user:", "key:", "app:"
WHEN_FORMAT = "%Y-%m-%dT%H:%M"


def _when(label: str) -> forms.DateTimeField:
    return forms.DateTimeField(
        label=label, required=False,
        input_formats=[WHEN_FORMAT, "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M", "%Y-%m-%d"],
        widget=forms.DateTimeInput(attrs={"type": "datetime-local"}, format=WHEN_FORMAT),
        error_messages={"invalid": "Enter a date and time like 2026-11-30T14:05."})


def _shown(at: datetime) -> str:
    """A time as the page shows it: in the viewer's zone (web/time_zones.py), named."""
    return f"{timezone.localtime(at):%Y-%m-%d %H:%M %Z}"


class AuditFilterForm(forms.Form):
    memory = forms.ChoiceField(required=False)
    action = forms.ChoiceField(required=False)
    actor = forms.ChoiceField(required=False, label="Who",
                              help_text="A person (by any door), a key, or a connected app.")
    tool = forms.ChoiceField(required=False)
    session = forms.CharField(required=False, max_length=LABEL_CHARS,
                              help_text="The start of the session id an agent passed (or "
                                        "all of it).")
    since = _when("From")
    until = _when("To")
    # The keyset cursors of "older" and "newer": positive sequence numbers.
    before = forms.IntegerField(required=False, min_value=1, max_value=MAX_SEQ,
                                widget=forms.HiddenInput)
    after = forms.IntegerField(required=False, min_value=1, max_value=MAX_SEQ,
                               widget=forms.HiddenInput)

    def __init__(self, data, *, choices: dict[str, Any]):
        super().__init__(data)
        self.oldest, self.newest = choices["oldest"], choices["newest"]
        self.fields["memory"].choices = [("", "All memories and account events"),
                                         (ACCOUNT_LEVEL, "Account-level events only")] + [
            (str(pk), name) for pk, name in choices["memories"]]
        self.fields["action"].choices = [("", "Any action")] + [
            (action, action) for action in choices["actions"]]
        self.fields["actor"].choices = [("", "Anyone")] + [
            (f"{USER}{pk}", f"Person: {name}") for pk, name in choices["people"]] + [
            (f"{KEY}{pk}", f"Key: {key}{' · revoked' if key.revoked_at else ''}")
            for pk, key in choices["keys"].items()] + [
            (f"{APP}{tool}", f"App: {name}") for tool, name in choices["apps"]]
        # The server's own events have no tool: "Any tool" covers them.
        self.fields["tool"].choices = [("", "Any tool")] + [
            (tool, tool) for tool in choices["tools"] if tool]
        invalid = "{value} is not one of the choices: pick one from the list, or leave it empty."
        for name in ("memory", "action", "actor", "tool"):
            self.fields[name].error_messages["invalid_choice"] = invalid.replace(
                "{value}", "%(value)s")
        # Typed times are read in the viewer's zone (Django's current one): the labels say so.
        zone = timezone.get_current_timezone_name()
        for name, label in (("since", "From"), ("until", "To")):
            self.fields[name].label = f"{label} ({zone})"
        if self.oldest is not None:
            self.fields["since"].help_text = (f"The log you can see runs from "
                                              f"{_shown(self.oldest)} to {_shown(self.newest)}.")

    def clean_since(self) -> datetime | None:
        since = self.cleaned_data.get("since")
        if since is not None and self.newest is not None and since > self.newest:
            raise forms.ValidationError(
                f"No event is that recent: the newest is {_shown(self.newest)}. "
                "Pick an earlier time, or leave it empty.")
        return _in_range(since)

    def clean_until(self) -> datetime | None:
        until = self.cleaned_data.get("until")
        if until is not None and self.oldest is not None and until < self.oldest:
            raise forms.ValidationError(
                f"No event is that old: the oldest is {_shown(self.oldest)}. "
                "Pick a later time, or leave it empty.")
        return _in_range(until)

    def clean(self):
        cleaned = super().clean()
        since, until = cleaned.get("since"), cleaned.get("until")
        if since is not None and until is not None and since > until:
            self.add_error("until", "“To” is before “From”: pick a time after "
                                    f"{_shown(since)}, or swap them.")
        if cleaned.get("before") and cleaned.get("after"):
            self.add_error(None, "A page is either older or newer than an event, not both: "
                                 "follow the “Older” or “Newer” link again.")
        return cleaned

    def audit_filter(self) -> AuditFilter:
        data = self.cleaned_data
        memory = data.get("memory") or ""
        return AuditFilter(
            memory_id=int(memory) if memory.isdigit() else None,
            account_level=memory == ACCOUNT_LEVEL, action=data.get("action") or "",
            tool=data.get("tool") or "", session_prefix=data.get("session") or "",
            since=data.get("since"), until=data.get("until"), **_actor(data.get("actor") or ""))

    def query(self) -> str:
        """The filter as a query string, without the page cursor: for the paging and
        export links, so they keep the filter."""
        kept = {name: self.data.get(name) for name in self.fields
                if name not in ("before", "after") and self.data.get(name)}
        return urlencode(kept)


def _actor(value: str) -> dict[str, Any]:
    """The AuditFilter fields an actor choice sets (the choice was validated: its id is
    one of the account's)."""
    if value.startswith(USER):
        return {"holder_id": int(value.removeprefix(USER))}
    if value.startswith(KEY):
        return {"key_id": int(value.removeprefix(KEY))}
    if value.startswith(APP):
        return {"app": value.removeprefix(APP)}
    return {}


def _in_range(value: datetime | None) -> datetime | None:
    """Python's datetime covers years 1 to 9999 (Postgres more): a day's margin keeps the
    comparison in range in any time zone."""
    if value is None:
        return None
    try:
        value + timedelta(days=1)
        value - timedelta(days=1)
    except OverflowError:
        raise forms.ValidationError(
            "That date is outside what the log can hold: pick one between years 1 and 9999."
        ) from None
    return value
