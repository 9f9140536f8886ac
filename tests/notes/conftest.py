"""Note tools over both doors: the MCP test client and a REST poster."""

from __future__ import annotations

import pytest

from tests.mcp.conftest import fake_clock, mcp_for  # noqa: F401


def rest(client, actor, name: str, body: dict, **headers: str):
    return client.post(f"/api/v1/tools/{name}", data=body, content_type="application/json",
                       headers={"Authorization": f"Bearer {actor.plaintext}", **headers})


def note(**extra) -> dict:
    return {"title": "Switched to JWT auth", "category": "decision",
            "what": "Replaced session cookies with JWT for stateless auth",
            "why": "The mobile API needed stateless auth instead of sticky sessions",
            "impact": "All endpoints now require a Bearer token",
            "tags": ["auth", "jwt"], "related_files": ["src/auth.py"],
            "details": "Options considered: cookies, JWT. Chose JWT.", "project": "api-server",
            **extra}


@pytest.fixture
def agent(mcp_for, alice):  # noqa: F811
    return mcp_for(alice)
