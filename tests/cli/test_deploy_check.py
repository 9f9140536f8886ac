"""`manage.py check --deploy` is clean with production variables, and not without them."""

from __future__ import annotations

import secrets
import subprocess
import sys
from pathlib import Path

from tests.cli.conftest import cli_env

ROOT = Path(__file__).resolve().parents[2]


def production_env(tmp_path, **overrides: str) -> dict[str, str]:
    env = cli_env(
        tmp_path / "home",
        SECRET_KEY=secrets.token_urlsafe(64),
        ALLOWED_HOSTS="api.echo-mem.com,app.echo-mem.com",
        DATABASE_URL="postgresql://echo:secret@db.internal:5432/echo",
        REDIS_URL="redis://cache.internal:6379/0",
        ECHO_MEMORY_HTTPS="1",
        ECHO_MEMORY_PUBLIC_URL="https://app.echo-mem.com",
    )
    env.update(overrides)
    return env


def check_deploy(env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )


def test_production_variables_pass_the_deploy_checklist(tmp_path):
    result = check_deploy(production_env(tmp_path))
    assert result.returncode == 0, result.stderr
    assert "System check identified no issues" in result.stdout
    assert not (tmp_path / "home").exists(), "production keeps nothing in the home"


def test_plain_http_settings_fail_the_deploy_checklist(tmp_path):
    env = production_env(tmp_path)
    del env["ECHO_MEMORY_HTTPS"]
    result = check_deploy(env)
    assert result.returncode != 0
    assert "SECURE_HSTS_SECONDS" in result.stderr or "security.W004" in result.stderr


def test_production_without_a_public_url_fails_the_deploy_checklist(tmp_path):
    """OAuth connectors would be told an issuer and a resource on localhost."""
    env = production_env(tmp_path)
    del env["ECHO_MEMORY_PUBLIC_URL"]
    result = check_deploy(env)
    assert result.returncode != 0
    assert "oauth.W001" in result.stderr and "http://localhost:8000/mcp" in result.stderr


def test_debug_in_production_fails_the_deploy_checklist(tmp_path):
    result = check_deploy(production_env(tmp_path, DEBUG="1"))
    assert result.returncode != 0
    assert "security.W018" in result.stderr


def test_the_conformance_suites_tools_fail_the_deploy_checklist(tmp_path):
    result = check_deploy(production_env(
        tmp_path, DJANGO_SETTINGS_MODULE="tests.conformance_settings"))
    assert result.returncode != 0
    assert "mcp_gateway.W001" in result.stderr
