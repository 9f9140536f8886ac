"""`echo-memory serve`: gunicorn with threaded workers, run inside our own process.

Running gunicorn in-process (rather than exec'ing it) keeps this process the owner
of the embedded database handle, so the database stops when the server stops.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import socket
import tempfile
from pathlib import Path

from gunicorn import util as gunicorn_util
from gunicorn.app.base import BaseApplication
from gunicorn.glogging import Logger as GunicornLogger
from gunicorn.workers.base import Worker
from gunicorn.workers.gthread import ThreadWorker

from echomem.errors import ConfigurationError

SERVER_FILE = "server.json"
# Any header a client of ours sends fits (gunicorn's default is 8 KB); a longer one is
# answered by the application, which names it, instead of by gunicorn's parser. The
# request line gets gunicorn's largest bound (its default is 4 KB).
HEADER_FIELD_BYTES = 32 * 1024
REQUEST_LINE_BYTES = 8190


def check_port_free(host: str, port: int) -> None:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise ConfigurationError(
                f"port {port} on {host} is already in use ({exc.strerror}); pass --port "
                "(or set ECHO_MEMORY_PORT) with a free port, or stop the other process."
            ) from exc


class _Gunicorn(BaseApplication):
    def __init__(self, options: dict[str, object]):
        self.options = options
        super().__init__()

    def load_config(self) -> None:
        for key, value in self.options.items():
            self.cfg.set(key, value)

    def load(self):
        from echomem.wsgi import application

        return application


def serve(*, home: Path, host: str, port: int, workers: int, threads: int,
          graceful_timeout: int) -> None:
    from django.db import connections

    # Connections opened before the fork (migrations) must not be shared by workers.
    connections.close_all()
    # Production (DATABASE_URL and its own SECRET_KEY) keeps nothing in the home and may
    # not have one; `echo-memory status` is the single box's view.
    if home.is_dir():
        _record_server(home, host, port)
    _Gunicorn({
        "bind": f"[{host}]:{port}" if ":" in host else f"{host}:{port}",
        "workers": workers,
        "threads": threads,
        "timeout": 60,
        "graceful_timeout": graceful_timeout,
        "keepalive": 5,
        # Django writes one line per request (echomem/middleware.py), with the request id
        # and the route rather than the raw path; gunicorn's own access log would repeat it.
        "accesslog": None,
        "errorlog": "-",
        "logger_class": "echomem.server.FormattedLogger",
        "loglevel": "info",
        "proc_name": "echo-memory",
        "control_socket_disable": True,
        "limit_request_field_size": HEADER_FIELD_BYTES,
        "limit_request_line": REQUEST_LINE_BYTES,
        "worker_class": "echomem.server.JsonErrorWorker",
        "post_worker_init": _start_worker_services,
        "worker_exit": _stop_worker_services,
    }).run()


class FormattedLogger(GunicornLogger):
    """gunicorn's own lines (booting, workers starting and exiting) in the server's format
    (ECHO_MEMORY_LOG_FORMAT), so a JSON log pipeline gets nothing but JSON."""

    def setup(self, cfg) -> None:
        super().setup(cfg)
        from django.conf import settings

        if settings.LOG_FORMAT == "json":
            from echomem.logs import JsonFormatter

            for handler in self.error_log.handlers:
                handler.setFormatter(JsonFormatter())


def prepare_metrics_directory() -> None:
    """Give the worker processes a shared PROMETHEUS_MULTIPROC_DIR (echomem/metrics.py).

    Must run before anything imports prometheus_client. An operator's own directory is
    used as given (they empty it between runs, as prometheus_client asks); otherwise each
    server gets a fresh temporary one, removed when it exits, so a restart begins at zero.
    """
    given = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if given:
        # Checked here: otherwise the first request a worker counts would fail.
        if not (os.path.isdir(given) and os.access(given, os.W_OK | os.X_OK)):
            raise ConfigurationError(
                f"PROMETHEUS_MULTIPROC_DIR={given} is not a writable directory; create it "
                "(and empty it before each start), or unset it and serve uses a fresh one.")
        return
    directory = tempfile.mkdtemp(prefix="echo-memory-metrics-")
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = directory
    owner = os.getpid()

    def _remove() -> None:
        if os.getpid() == owner:  # forked workers inherit atexit handlers
            shutil.rmtree(directory, ignore_errors=True)

    atexit.register(_remove)


def _json_error(sock, status_int: int, reason: str, mesg: str) -> None:
    """gunicorn's refusals of a malformed request (before Django sees it), as JSON.

    The path is unknown at that point (the request line may be what failed), so the body
    is a JSON-RPC error at either door; error.message says why (docs/api.md notes it).
    """
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {
        "code": -32600, "message": f"{reason}: {mesg or 'the HTTP request is malformed'}; send "
                                   "a well-formed HTTP/1.1 request, its request line under "
                                   f"{REQUEST_LINE_BYTES} bytes and each header under "
                                   f"{HEADER_FIELD_BYTES}",
        "data": {"field": "request", "status": status_int}}})
    head = (f"HTTP/1.1 {status_int} {reason}\r\nConnection: close\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n")
    gunicorn_util.write_nonblock(sock, (head + body).encode("latin-1", "replace"))


class JsonErrorWorker(ThreadWorker):
    """gunicorn's threaded worker, answering its own refusals in JSON instead of HTML, and
    refusing new connections as soon as it starts to shut down."""

    def init_process(self) -> None:
        # gunicorn writes those pages through this one function; in our own worker
        # process, it writes ours.
        gunicorn_util.write_error = _json_error
        super().init_process()

    def handle_quit(self, sig, frame) -> None:
        """SIGQUIT (the master's answer to SIGINT or SIGQUIT): exit now, without the thread
        pool's shutdown that gunicorn's gthread worker calls first. The signal runs this on
        the main thread, which may be inside the pool's submit at that moment (starting a
        thread, holding the pool's lock); shutdown then waits for that lock forever, and
        the worker hangs until the master kills it (seen in a CI run: a server asked to
        stop right after a request). Exiting unwinds submit, which releases the lock; the
        pool's threads end at interpreter exit, as after shutdown."""
        Worker.handle_quit(self, sig, frame)

    def set_accept_enabled(self, enabled: bool) -> None:
        super().set_accept_enabled(enabled)
        if not enabled and not self.alive:
            # Shutting down: the master has closed its copy of the listening socket, but
            # while this worker holds its own, the kernel keeps completing handshakes that
            # nobody will accept, and those clients wait for the drain, then get a reset.
            # Closed now, new connections are refused at once and go to another server;
            # the requests in flight still finish.
            for listener in self.sockets:
                listener.close()


def _start_worker_services(worker) -> None:
    """Each web worker starts its indexer thread at boot, so facts written before a
    restart (or by a worker that died) are embedded without waiting for the next write;
    and loads, beside its first requests, the int8 model query_memory ranks waiting facts
    with, so no query pays for it."""
    import threading

    from django.conf import settings

    from memories.search.embeddings import get_embedder

    if settings.ECHO_MEMORY_QUERY_EMBED_FACTS > 0:
        threading.Thread(target=lambda: get_embedder().warm_quick(), name="echo-int8-warm",
                         daemon=True).start()
    if settings.ECHO_MEMORY_INDEXING == "thread":
        from memories.search.indexing import background

        background()
    if not settings.CELERY_BROKER_URL:  # no beat: this worker runs the periodic jobs
        from echomem import housekeeping

        housekeeping.start()


def _stop_worker_services(arbiter, worker) -> None:
    """After a worker's last request: its indexer thread ends after its running batch,
    within the graceful timeout (the master kills the worker when that runs out)."""
    from memories.search.indexing import stop_background

    stop_background(timeout=worker.cfg.graceful_timeout)


def _record_server(home: Path, host: str, port: int) -> None:
    """Let `echo-memory status` find this server; removed again on exit."""
    path = home / SERVER_FILE
    owner = os.getpid()
    path.write_text(json.dumps({"pid": owner, "host": host, "port": port}))

    def _forget() -> None:
        # Forked workers inherit atexit handlers; only the process that wrote it removes it.
        if os.getpid() == owner and (recorded_server(home) or {}).get("pid") in (owner, None):
            path.unlink(missing_ok=True)

    atexit.register(_forget)


def recorded_server(home: Path) -> dict[str, object] | None:
    try:
        data = json.loads((home / SERVER_FILE).read_text())
    except (OSError, ValueError):
        return None
    import psutil

    return data if psutil.pid_exists(int(data.get("pid", 0))) else None
