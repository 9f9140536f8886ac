from __future__ import annotations

from django import forms
from django.contrib.auth import get_user_model, password_validation


class SignUpForm(forms.Form):
    email = forms.EmailField(max_length=150, widget=forms.EmailInput(
        attrs={"autocomplete": "email", "autofocus": True}))
    password = forms.CharField(strip=False, widget=forms.PasswordInput(
        attrs={"autocomplete": "new-password"}),
        help_text=password_validation.password_validators_help_text_html())

    def clean_email(self) -> str:
        email = get_user_model().objects.normalize_email(self.cleaned_data["email"]).lower()
        if get_user_model().objects.filter(username__iexact=email).exists():
            raise forms.ValidationError("An account with this email exists; sign in instead.")
        return email

    def clean(self):
        cleaned = super().clean()
        if cleaned.get("email") and cleaned.get("password"):
            user = get_user_model()(username=cleaned["email"], email=cleaned["email"])
            try:
                password_validation.validate_password(cleaned["password"], user)
            except forms.ValidationError as error:
                self.add_error("password", error)
        return cleaned
