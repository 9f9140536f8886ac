"""TEST ONLY: a client ID metadata document fetcher that may reach this machine.

Production's fetcher (oauth.client_documents.CheckedFetcher on django-oauth-toolkit's
SafeMetadataFetcher) refuses loopback addresses, as it must: a document URL is chosen by
the client. The live tests serve their document from 127.0.0.1 with a self-signed
certificate, so their server (and theirs only) names this class in
OAUTH2_PROVIDER["CIMD_METADATA_FETCHER"]. Only the connection differs: the reading of the
response (status, media type, size limit, JSON) is production's _read_document, and
CheckedFetcher's callback check runs on top (it comes first in the method order)."""

from __future__ import annotations

import os
import ssl
import time

import urllib3
from oauth2_provider.cimd import CIMDError, SafeMetadataFetcher, _validate_client_id_url
from oauth2_provider.settings import oauth2_settings

from oauth.client_documents import CheckedFetcher
from tests.oauth.loopback_https import TRUSTED_CERTIFICATE

LOOPBACK = {"127.0.0.1", "localhost"}


class _LoopbackConnection(SafeMetadataFetcher):
    def fetch(self, client_id):
        parsed = _validate_client_id_url(client_id)
        if parsed.hostname not in LOOPBACK:
            raise CIMDError("the test fetcher reaches only this machine")
        context = ssl.create_default_context(cafile=os.environ[TRUSTED_CERTIFICATE])
        timeout = oauth2_settings.CIMD_FETCH_TIMEOUT_SECONDS
        started = time.monotonic()
        pool = urllib3.HTTPSConnectionPool(
            host="127.0.0.1", port=parsed.port or 443, retries=False, maxsize=1,
            timeout=urllib3.Timeout(connect=timeout, read=timeout, total=timeout),
            ssl_context=context, server_hostname=parsed.hostname)
        try:
            response = pool.urlopen("GET", parsed.path, redirect=False, preload_content=False,
                                    headers={"Host": parsed.netloc,
                                             "Accept": "application/json"})
            try:
                return self._read_document(response)
            finally:
                response.release_conn()
        except urllib3.exceptions.HTTPError as error:
            raise CIMDError(f"could not fetch client_id document: {error} "
                            f"after {time.monotonic() - started:.1f}s") from error
        finally:
            pool.close()


class LoopbackFetcher(CheckedFetcher, _LoopbackConnection):
    """CheckedFetcher's checks over a connection to 127.0.0.1 that trusts the test's certificate."""
