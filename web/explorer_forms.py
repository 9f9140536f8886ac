"""The explorer's GET forms: what a person may ask of a memory, checked before the engine."""

from __future__ import annotations

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


class FactsForm(ScopedForm):
    q = forms.CharField(label="Search", required=False, max_length=2000, strip=True,
                        help_text="Words or a question: ranked by meaning and by words, "
                                  "the same way your agents' query_memory is.")
    superseded = forms.BooleanField(label="Show superseded facts", required=False)
    after = forms.CharField(required=False, max_length=200, widget=forms.HiddenInput)


class CauseForm(ScopedForm):
    subject = forms.CharField(label="Subject", max_length=limits.NAME_CHARS,
                              help_text="An entity's name, e.g. “Outage 42”.")
    direction = forms.ChoiceField(label="Direction", initial="both", required=False, choices=[
        ("both", "Causes and effects"), ("upstream", "Causes (upstream)"),
        ("downstream", "Effects (downstream)")])
    max_hops = forms.IntegerField(label="Longest chain", min_value=1, max_value=6, initial=3,
                                  required=False, help_text="Links per chain, 1 to 6 (3 if empty).",
                                  widget=forms.NumberInput(attrs={"placeholder": "3"}))


class NotesForm(ScopedForm):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["scope"].help_text = "Shared notes, or the solo notes of one of your tools."

    q = forms.CharField(label="Search notes", required=False, max_length=2000, strip=True,
                        help_text="Words from any field: title, what, why, details, tags, files.")
    project = forms.CharField(label="Project", required=False, max_length=limits.LABEL_CHARS,
                              strip=True)
