"""Client ID metadata documents: a client whose client_id is an https URL is described by
the JSON at that URL. django-oauth-toolkit's fetcher does the fetching safely (https only, a
public address resolved once and connected to, no redirects, a timeout, a size limit, the
result cached on the application); this one also refuses a document whose callbacks could
not be registered dynamically either (oauth/redirects.py)."""

from __future__ import annotations

from oauth2_provider.cimd import CIMDError, SafeMetadataFetcher

from oauth.redirects import redirect_uri_problem


class CheckedFetcher(SafeMetadataFetcher):
    def fetch(self, client_id):
        metadata, max_age = super().fetch(client_id)
        problem = redirect_uri_problem(metadata.get("redirect_uris")
                                       if isinstance(metadata, dict) else None)
        if problem:
            raise CIMDError(f"client metadata document {client_id}: {problem}")
        return metadata, max_age
