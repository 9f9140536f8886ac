"""Where the single box keeps its state: the embedded database, the secret key."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

import platformdirs

from echomem.errors import ConfigurationError

HOME_VARIABLE = "ECHO_MEMORY_HOME"


def echo_home() -> Path:
    """The configured home directory; not created or checked here."""
    configured = os.environ.get(HOME_VARIABLE, "").strip()
    if configured:
        return Path(configured).expanduser().resolve()
    return Path(platformdirs.user_data_dir("echo-memory", appauthor=False)).resolve()


def ensure_writable_home() -> Path:
    """Create the home if needed and prove we can write in it, or explain the fix."""
    home = echo_home()
    probe = home / ".write-probe"
    try:
        home.mkdir(parents=True, exist_ok=True)
        probe.write_text("ok")
        probe.unlink()
    except OSError as exc:
        reason = exc.strerror or exc.__class__.__name__
        raise ConfigurationError(
            f"{HOME_VARIABLE}={home} is not a writable directory ({reason}); "
            f"set {HOME_VARIABLE} to a directory you can write to, "
            "for example ~/.local/share/echo-memory."
        ) from exc
    return home


def persistent_secret_key(home: Path) -> str:
    """A secret kept in the home, so logins survive restarts without a SECRET_KEY variable.

    Written with mode 0600 on first use; production sets SECRET_KEY instead.
    """
    path = home / "secret_key"
    try:
        return path.read_text().strip()
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise ConfigurationError(
            f"cannot read {path} ({exc.strerror}); set SECRET_KEY or fix {HOME_VARIABLE}."
        ) from exc
    key = secrets.token_urlsafe(64)
    try:
        home.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_text().strip()  # another process won the race; use its key
    except OSError as exc:
        raise ConfigurationError(
            f"{HOME_VARIABLE}={home} is not writable ({exc.strerror}); set SECRET_KEY, "
            f"or set {HOME_VARIABLE} to a directory you can write to."
        ) from exc
    with os.fdopen(fd, "w") as handle:
        handle.write(key)
    return key
