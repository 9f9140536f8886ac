"""Logging pieces the settings refer to by name."""

from __future__ import annotations

import logging


class ClientErrorWithoutTraceback(logging.Filter):
    """Log a request Django refused as suspicious (`django.security.*`) as one warning line:
    in our logs a traceback means a fault of the server."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not record.name.startswith("django.security"):
            return True
        record.exc_info = None
        record.exc_text = None
        if record.levelno > logging.WARNING:
            record.levelno, record.levelname = logging.WARNING, "WARNING"
        return True
