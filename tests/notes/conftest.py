"""Note tools over both doors: the MCP test client and a REST poster."""

from __future__ import annotations

import pytest

from tests.mcp.conftest import fake_clock, mcp_for  # noqa: F401


def rest(client, actor, name: str, body: dict, **headers: str):
    return client.post(f"/api/v1/tools/{name}", data=body, content_type="application/json",
                       headers={"Authorization": f"Bearer {actor.plaintext}", **headers})


@pytest.fixture
def agent(mcp_for, alice):  # noqa: F811
    return mcp_for(alice)
