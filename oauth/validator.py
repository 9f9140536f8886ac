"""django-oauth-toolkit's validator, with one thing RFC 6749 4.1.2 asks that it leaves out:
a code presented a second time is refused (as before) and also revokes the tokens issued
for it (RFC 9700 4.5: a replayed code means someone else holds it). DOT deletes a code once
it is traded, keeping nothing that links it to the tokens, so the trade is remembered here
(a digest of the code, for the code's lifetime ten times over) by person and app: every
token under that connection dies, as a reused refresh token kills its family."""

from __future__ import annotations

import hashlib

from django.core.cache import cache
from oauth2_provider.oauth2_validators import OAuth2Validator
from oauth2_provider.settings import oauth2_settings

from accounts.connections import revoke_tokens

SPENT = "oauth:spent-code:"


def _spent_key(code: str) -> str:
    return SPENT + hashlib.sha256(code.encode("utf-8")).hexdigest()


class ConnectorValidator(OAuth2Validator):
    def invalidate_authorization_code(self, client_id, code, request, *args, **kwargs):
        super().invalidate_authorization_code(client_id, code, request, *args, **kwargs)
        if request.user is not None and request.client is not None:
            cache.set(_spent_key(code), (request.user.pk, request.client.pk),
                      timeout=oauth2_settings.AUTHORIZATION_CODE_EXPIRE_SECONDS * 10)

    def validate_code(self, client_id, code, client, request, *args, **kwargs):
        if super().validate_code(client_id, code, client, request, *args, **kwargs):
            return True
        spent = cache.get(_spent_key(code)) if isinstance(code, str) else None
        if spent is not None and client is not None and spent[1] == client.pk:
            revoke_tokens(user_id=spent[0], application_id=spent[1])
        return False
