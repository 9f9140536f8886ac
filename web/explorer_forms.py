"""The explorer's GET forms: what a person may ask of a memory, checked before the engine."""

from __future__ import annotations

from datetime import UTC

from django import forms

from memories.core import limits
from memories.graph.browse import ScopeChoice


class ScopedForm(forms.Form):
    scope = forms.ChoiceField(label="Scope", required=False,
                              help_text="Shared facts, or the solo facts of one of your tools.")

    def __init__(self, *args, scopes: list[ScopeChoice], **kwargs):
        super().__init__(*args, **kwargs)
        self.scopes = {choice.value: choice for choice in scopes}
        self.fields["scope"].choices = [(c.value, c.label) for c in scopes]
        self.fields["scope"].error_messages["invalid_choice"] = (
            "%(value)s is not a scope you can read here; pick one from the list.")

    def chosen_scope(self) -> ScopeChoice:
        return self.scopes.get(self.cleaned_data.get("scope") or "shared",
                               next(iter(self.scopes.values())))


ACCEPTED_TIME = "YYYY-MM-DD HH:MM (e.g. 2026-03-04 14:05) or just YYYY-MM-DD"


class DateTimeLocalInput(forms.DateTimeInput):
    input_type = "datetime-local"
    format = "%Y-%m-%dT%H:%M"


class PointInTime(forms.DateTimeField):
    """A moment typed in the viewer's time zone (the page says which), as the browser's
    datetime-local control sends it or as typed by hand; readable back as UTC."""

    widget = DateTimeLocalInput

    def __init__(self, **kwargs):
        super().__init__(required=False, input_formats=[
            "%Y-%m-%dT%H:%M", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M", "%Y-%m-%d %H:%M:%S",
            "%Y-%m-%d"], error_messages={
            "invalid": f"Give a date and time as {ACCEPTED_TIME}, or leave it empty."},
            **kwargs)

    def to_python(self, value):
        if isinstance(value, str) and (len(value) > 40 or "\x00" in value):
            raise forms.ValidationError(self.error_messages["invalid"], code="invalid")
        moment = super().to_python(value)
        if moment is None:
            return None
        try:
            # The engine's clocks are UTC; a moment outside years 1 to 9999 there cannot
            # be compared with what the database holds (memories/core/inputs.py).
            return moment.astimezone(UTC)
        except OverflowError:
            raise forms.ValidationError("That moment falls outside years 1 to 9999 in UTC; "
                                        "pick a date inside that range.",
                                        code="out_of_range") from None


class FactsForm(ScopedForm):
    q = forms.CharField(label="Search", required=False, max_length=2000, strip=True,
                        help_text="Words or a question: ranked by meaning and by words, "
                                  "the same way your agents' query_memory is.")
    superseded = forms.BooleanField(label="Show superseded facts", required=False)
    as_of = PointInTime(label="As the memory held it on",
                        help_text="What the memory knew then: facts learned by that moment "
                                  "and not yet replaced by it (query_memory's as_of).")
    valid_as_of = PointInTime(label="As true in the world on",
                              help_text="Facts that were true then, by when they were valid "
                                        "(query_memory's valid_as_of).")
    after = forms.CharField(required=False, max_length=200, widget=forms.HiddenInput)


class CauseForm(ScopedForm):
    subject = forms.CharField(label="Subject", max_length=limits.NAME_CHARS,
                              help_text="An entity's name, e.g. “Outage 42”; matching "
                                        "entities are offered as you type.")
    direction = forms.ChoiceField(label="Direction", initial="both", required=False, choices=[
        ("both", "Causes and effects"), ("upstream", "Causes (upstream)"),
        ("downstream", "Effects (downstream)")])
    max_hops = forms.IntegerField(label="Longest chain", min_value=1, max_value=6, initial=3,
                                  required=False, help_text="Links per chain, 1 to 6 (3 if empty).",
                                  widget=forms.NumberInput(attrs={"placeholder": "3"}))

    def __init__(self, *args, suggest_url: str, **kwargs):
        super().__init__(*args, **kwargs)
        # Search-as-you-type (htmx): matching entities appear under the field as links;
        # without script the field is a plain one and the form submits the typed name.
        self.fields["subject"].widget.attrs.update({
            "autocomplete": "off", "hx-get": suggest_url,
            "hx-trigger": "input changed delay:300ms, search",
            "hx-target": "#subject-suggestions", "hx-include": "[name='scope']",
            "hx-sync": "this:replace", "aria-controls": "subject-suggestions"})


class SuggestForm(ScopedForm):
    """What the cause view's search-as-you-type sends: the subject typed so far."""

    subject = forms.CharField(required=False, max_length=limits.NAME_CHARS, strip=True)


class NotesForm(ScopedForm):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["scope"].help_text = "Shared notes, or the solo notes of one of your tools."

    q = forms.CharField(label="Search notes", required=False, max_length=2000, strip=True,
                        help_text="Words from any field: title, what, why, details, tags, files.")
    project = forms.CharField(label="Project", required=False, max_length=limits.LABEL_CHARS,
                              strip=True)
