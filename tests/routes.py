"""The URLconf as data, for tests that must cover every route: each pattern Django would
resolve (includes followed), the path parameters it takes with their converters, and the
query and form fields a view reads while it answers.

The patterns are read the way Django's own reverse() reads them
(`django.utils.regex_helper.normalize`), so `path()` and `re_path()` routes, converters
and the admin's generated URLs all come out as a format string and parameter names.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import product
from typing import Any
from urllib.parse import quote, unquote_to_bytes

from django.http import QueryDict
from django.urls import URLPattern, URLResolver, get_resolver, resolve
from django.urls.converters import IntConverter, UUIDConverter
from django.urls.exceptions import Resolver404
from django.utils.datastructures import MultiValueDict
from django.utils.encoding import repercent_broken_unicode
from django.utils.regex_helper import normalize

from echomem.middleware import door_of

# Values no route can use, by kind; each kind has spellings, and a path parameter gets
# the first one its converter accepts (an <int:...> never matches letters, so it gets
# digits too many for the column instead), else the first, which then resolves nowhere.
HOSTILE: dict[str, tuple[str | bytes, ...]] = {
    "NUL": ("bad\x00name", "1\x00"),
    "overlong": ("a" * 10_000, "9" * 10_000, "9" * 25),
    "non-UTF-8": (b"\xff\xfe\xc3(",),
}
_PLAIN_SPELLINGS = ("x", "/x", "1")
# Where a refusal must be JSON: the agents' doors, Stripe's webhook, the passkey
# ceremonies the security and second-step pages' script calls (web/passkey_urls.py), and
# the OAuth server's endpoints for software (all but the consent page, which is a page).
JSON_PREFIXES = ("/mcp", "/api/", "/api", "/billing/stripe/", "/account/security/webauthn/",
                 "/oauth/register", "/oauth/token", "/oauth/revoke", "/.well-known/oauth-",
                 "/.well-known/openid-configuration")


def json_door(path: str) -> bool:
    return path.startswith(JSON_PREFIXES)


def page_door(path: str) -> bool:
    """Pages for people: a refusal there is a page too (not the ops endpoints' text)."""
    return not json_door(path) and door_of(path) == "web"


def _encoded(value: str | bytes) -> str:
    """Percent-encoded as a browser would send it; bytes stay bytes (not UTF-8)."""
    return quote(value, safe="")


def encode_fields(fields: dict[str, str | bytes]) -> str:
    return "&".join(f"{_encoded(name)}={_encoded(value)}" for name, value in fields.items())


@dataclass(frozen=True)
class Route:
    template: str                   # "memories/%(name)s/delete/"
    params: dict[str, Any]          # name -> converter (None for a re_path group)
    callback: Any
    shown: str                      # the pattern as written, for failure messages

    def __str__(self) -> str:
        return self.shown

    def path(self, known: dict[str, str], hostile: str | None = None,
             spellings: tuple[str | bytes, ...] = ()) -> str:
        """The route's URL with known values (or plain ones) for its parameters, and the
        first spelling of a hostile value that still reaches this view for `hostile`."""
        plain = {name: self._plain(name, known) for name in self.params}
        if hostile is None:
            return self._fill(plain)
        tries = [{**plain, hostile: prefix + spelling if isinstance(spelling, str)
                  else prefix.encode() + spelling}
                 for spelling, prefix in product(spellings, ("", "/"))]
        paths = [self._fill(values) for values in tries]
        return next((p for p in paths if self._reaches(p)), paths[0])

    def _plain(self, name: str, known: dict[str, str]) -> str:
        if name in known:
            return known[name]
        converter = self.params[name]
        if isinstance(converter, IntConverter):
            return "1"
        if isinstance(converter, UUIDConverter):
            return str(uuid.uuid4())
        for spelling in _PLAIN_SPELLINGS:
            if self._reaches(self._fill({**dict.fromkeys(self.params, spelling)})):
                return spelling
        return "x"

    def _fill(self, values: dict[str, str | bytes]) -> str:
        return "/" + self.template % {name: _encoded(v) for name, v in values.items()}

    def _reaches(self, path: str) -> bool:
        # As Django reads a path: bytes that are not UTF-8 stay percent-encoded.
        path_info = repercent_broken_unicode(unquote_to_bytes(path)).decode()
        try:
            return resolve(path_info).func is self.callback
        except Resolver404:
            return False


def every_route() -> Iterator[Route]:
    yield from _walk(get_resolver(), [("", [])], {}, "")


def _walk(resolver: URLResolver, prefixes: list[tuple[str, list[str]]],
          converters: dict[str, Any], shown: str) -> Iterator[Route]:
    for entry in resolver.url_patterns:
        pattern = entry.pattern
        here = [(p + s, pp + sp) for (p, pp), (s, sp) in
                product(prefixes, normalize(pattern.regex.pattern))]
        found = {**converters, **getattr(pattern, "converters", {})}
        text = shown + str(pattern)
        if isinstance(entry, URLResolver):
            yield from _walk(entry, here, found, text)
        elif isinstance(entry, URLPattern):
            for template, params in here:
                yield Route(template, {name: found.get(name) for name in params},
                            entry.callback, text)


def declared_fields(route: Route) -> set[str]:
    """Query fields a view reads without naming them one by one, where it declares them: the
    admin's change lists copy the whole query string, then read search (`q`), ordering,
    page and each declared list filter from the copy."""
    model_admin = getattr(route.callback, "model_admin", None)
    if model_admin is None:
        return set()
    filters = {f"{name}__exact" for name in model_admin.list_filter if isinstance(name, str)}
    return {"q", "o", "p", *filters}


class FieldsRead:
    """Records the name of every query or form field read while it is open (forms read
    through `get`/`getlist`, views through `request.GET[...]` or `in`). Only QueryDicts:
    Django keeps other things in MultiValueDicts too (the URL resolver's reverse map)."""

    def __enter__(self) -> FieldsRead:
        self.fields: set[str] = set()
        self._saved = {name: MultiValueDict.__dict__.get(name)
                       for name in ("__getitem__", "_getlist", "__contains__")}
        original_item, original_list = MultiValueDict.__getitem__, MultiValueDict._getlist
        fields = self.fields

        def getitem(data, key):
            if isinstance(data, QueryDict) and isinstance(key, str):
                fields.add(key)
            return original_item(data, key)

        def getlist(data, key, *args, **kwargs):
            if isinstance(data, QueryDict) and isinstance(key, str):
                fields.add(key)
            return original_list(data, key, *args, **kwargs)

        def contains(data, key):
            if isinstance(data, QueryDict) and isinstance(key, str):
                fields.add(key)
            return dict.__contains__(data, key)

        MultiValueDict.__getitem__ = getitem
        MultiValueDict._getlist = getlist
        MultiValueDict.__contains__ = contains
        return self

    def __exit__(self, *exc: object) -> None:
        for name, original in self._saved.items():
            if original is None:
                delattr(MultiValueDict, name)
            else:
                setattr(MultiValueDict, name, original)
