"""The admin's autocomplete select, when it shows a form again with a value it refused.

Django's AutocompleteSelect re-renders the submitted value by looking it up
(`pk__in=[value]`) without checking that it could be a key: an add form posted with
`account=abc`, a NUL or a number past the column's range answered 500 instead of
"Select a valid choice". Values the key field cannot hold are left out of that lookup,
so the form comes back with its field error.
"""

from __future__ import annotations

from django.contrib.admin import widgets
from django.core.exceptions import ValidationError


class AutocompleteSelect(widgets.AutocompleteSelect):
    def optgroups(self, name, value, attr=None):
        remote = self.field.remote_field
        key = remote.model._meta.get_field(remote.field_name)
        return super().optgroups(name, [v for v in value if _could_be(key, v)], attr)


def _could_be(key, value) -> bool:
    if value in (None, ""):
        return True
    try:
        key.run_validators(key.to_python(value))
    except ValidationError:
        return False
    return True


class CheckedAutocomplete:
    """For a ModelAdmin or an inline: its autocomplete_fields use the widget above."""

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if "widget" not in kwargs and db_field.name in self.get_autocomplete_fields(request):
            kwargs["widget"] = AutocompleteSelect(db_field, self.admin_site,
                                                  using=kwargs.get("using"))
        return super().formfield_for_foreignkey(db_field, request, **kwargs)
