"""The REST API against its own OpenAPI schema, read from the running server (schemathesis).

Every operation the schema lists at run time is fuzzed with valid and invalid data;
replies must not be server errors and must match the schema, refusals must have the
documented error shape, and the ledger must hold what the 200s reported.
"""

from __future__ import annotations

from urllib.parse import quote, urljoin

import httpx
import pytest
import requests
import schemathesis
from hypothesis import given, note
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.fuzz.client import Reply, reply_of
from tests.fuzz.conftest import FUZZ
from tests.fuzz.envelopes import HOSTILE_TEXT
from tests.fuzz.invariants import assert_no_fault, assert_rest_error, ids_in

# The import's body is an export file (JSON Lines), declared as text: generated cases go as
# text, which the import must refuse by line and field like any other bad file.
schemathesis.serializer.alias("application/x-ndjson", "text/plain")

CHECKS = [not_a_server_error, response_schema_conformance, content_type_conformance,
          status_code_conformance]


@pytest.fixture(scope="session")
def rest_schema(fuzz):
    return schemathesis.openapi.from_url(f"{fuzz.base_url}/api/v1/schema",
                                         headers={"Accept": "application/json"}, timeout=60)


@pytest.fixture(scope="session")
def rest_session(fuzz):
    with requests.Session() as session:
        session.headers["Authorization"] = f"Bearer {fuzz.owner.key}"
        yield session


def _reply(response) -> Reply:
    """A schemathesis Response (headers as lists of values) as the suite's Reply."""
    headers = httpx.Headers([(name, value) for name, values in response.headers.items()
                             for value in (values if isinstance(values, list) else [values])])
    return reply_of(httpx.Response(response.status_code, headers=headers,
                                   content=response.content))


def test_rest_operations_answer_as_their_openapi_schema_says(fuzz, rest_schema, rest_session):
    """Each operation, with data that fits its schema and data that does not.

    (schemathesis's own pytest loader, `from_fixture`, does not run on pytest 9, so the
    operations are read here, at run time, and each gets its own Hypothesis run.)
    """
    operations = [result.ok() for result in rest_schema.get_all_operations()]
    assert len(operations) >= 2, "the schema lists no operations"
    failures = []
    for operation in operations:
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            try:
                _fuzz_operation(fuzz, rest_session, operation, mode)
            # Every operation runs; each failure is reported below (schemathesis raises
            # a BaseExceptionGroup of its check failures).
            except (Exception, BaseExceptionGroup) as exc:
                failures.append(f"{operation.method.upper()} {operation.path} ({mode.value}):"
                                f"\n{exc}\n" + "\n".join(getattr(exc, "__notes__", [])))
    assert not failures, "\n\n".join(failures)


def _fuzz_operation(fuzz, session, operation, mode) -> None:
    @FUZZ
    @given(case=operation.as_strategy(generation_mode=mode))
    def run(case):
        fuzz.stats["cases"] += 1
        response = case.call(base_url=fuzz.base_url, session=session)
        reply = _reply(response)
        fuzz.observe(reply)
        with fuzz.judging(f"{case.method} {case.path} with {case.body!r:.300}"):
            case.validate_response(response, checks=CHECKS)
            assert_no_fault(reply)
            if reply.status != 200:
                assert_rest_error(reply)
                return
            leaked = ids_in(reply.body) & fuzz.foreign
            assert not leaked, f"another account's ids {leaked} in {reply.describe()}"
            if "/tools/" in case.path:
                fuzz.ledger.credit(fuzz.owner.id, case.path.rsplit("/", 1)[1], reply.body)
                fuzz.remember(ids_in(reply.body))

    run()


def test_unknown_rest_paths_and_methods_answer_json_errors(fuzz, rest):
    """Anything under /api/v1 that is not an operation: a JSON 404 or 405, never a page."""

    @FUZZ
    @given(path=st.one_of(HOSTILE_TEXT, st.sampled_from(
        ["", "tools", "tools/", "tools/nope", "tools/query_memory/", "memories/x", "schema/x",
         "../admin/", "tools/QUERY_MEMORY", "%00", "tools/%2e%2e"])),
           method=st.sampled_from(["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]))
    def run(path, method):
        fuzz.stats["cases"] += 1
        url = "/api/v1/" + quote(path.encode("utf-8", "surrogatepass"), safe="/%")
        note(f"{method} {url}")
        reply = reply_of(rest.http.request(method, url, headers={"Content-Type":
                                                                 "application/json"},
                                           content=b"{}"))
        fuzz.observe(reply)
        with fuzz.judging(f"{method} {url}"):
            if reply.status == 200:
                return  # an operation or a documentation page after all (GET /api/v1/docs)
            if not urljoin("http://x/", url).startswith("http://x/api"):
                # Dot segments took it out of the API (`/api/v1/../../x`): the web app's
                # pages answer there, and they only must not fail.
                assert reply.status < 500, reply.describe()
                return
            assert_no_fault(reply)
            if reply.status == 414:
                # Refused by the HTTP layer before routing (docs/api.md): the door is not
                # known yet, so the body is the JSON-RPC error shape.
                assert reply.body["error"]["code"] == -32600, reply.describe()
                return
            error = assert_rest_error(reply)
            assert reply.status in (400, 404, 405, 415), reply.describe()
            assert error["code"], reply.describe()

    run()
