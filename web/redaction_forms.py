from __future__ import annotations

from django import forms

from accounts.redaction_settings import PREVIEW_CHARS
from echomem.errors import ValidationFailed
from redaction.redactor import MAX_USER_PATTERN_CHARS, MAX_USER_PATTERNS, check_user_patterns
from web.refusals import refusal_text


class RedactionSettingsForm(forms.Form):
    """The switch and the patterns, and a sample to preview them on (saved or not)."""

    redact_secrets = forms.BooleanField(
        required=False, label="Redact secrets in what agents write",
        help_text="API keys, tokens, private keys and passwords become [REDACTED:kind] before "
                  "anything is stored, searched or audited. On for every new account.")
    redaction_patterns = forms.CharField(
        required=False, label="Your own patterns", strip=False,
        max_length=MAX_USER_PATTERNS * (MAX_USER_PATTERN_CHARS + 2),
        widget=forms.Textarea(attrs={"rows": 5, "spellcheck": "false",
                                     "autocomplete": "off"}),
        help_text=f"One Python regular expression per line (at most {MAX_USER_PATTERNS}), "
                  r"e.g. <code>ACME-[0-9]{6}</code> or <code>\binternal-[a-z]+-key</code>. "
                  "Each match becomes [REDACTED:custom]. A pattern that could backtrack "
                  "for minutes on long text is refused, with the way to write it.")
    sample = forms.CharField(
        required=False, label="Sample text", max_length=PREVIEW_CHARS, strip=False,
        widget=forms.Textarea(attrs={"rows": 4, "spellcheck": "false"}),
        help_text="Nothing you type here is stored. Preview uses the switch and patterns "
                  "above, saved or not.")

    def __init__(self, *args, may_change: bool, **kwargs):
        super().__init__(*args, **kwargs)
        if not may_change:  # members see the settings; the form ignores what they post
            for name in ("redact_secrets", "redaction_patterns"):
                self.fields[name].disabled = True
            self.fields["sample"].help_text = ("Nothing you type here is stored. Preview "
                                               "uses the account's saved settings.")

    def clean_redaction_patterns(self) -> list[str]:
        # Every line, blank ones too, so that "pattern 3" in a refusal is line 3.
        lines = self.cleaned_data["redaction_patterns"].splitlines()
        while lines and not lines[-1].strip():
            lines.pop()
        if len(lines) > MAX_USER_PATTERNS:  # blank lines do not count against the limit
            lines = [line for line in lines if line.strip()]
        try:
            return check_user_patterns(lines)
        except ValidationFailed as refused:
            on_line = ValidationFailed(refused.message.replace("pattern ", "line ", 1),
                                       field=refused.field, fix=refused.fix)
            raise forms.ValidationError(refusal_text(on_line, fix_sentence=True)) from None
