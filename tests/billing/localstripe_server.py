"""localstripe (a stateful fake Stripe from PyPI) as a subprocess on a free local port."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

# Deliveries of events nobody waits for go here: nothing listens on the discard port, so
# localstripe logs a refused connection instead of writing into another test's database.
NOWHERE = "http://127.0.0.1:9/nowhere"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class LocalStripe:
    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._process: subprocess.Popen | None = None

    def start(self) -> LocalStripe:
        # --from-scratch: never load the state another run left in /tmp/localstripe.pickle.
        self._process = subprocess.Popen(
            [sys.executable, "-m", "localstripe", "--port", str(self.port), "--from-scratch"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while True:
            try:
                urllib.request.urlopen(urllib.request.Request(
                    f"{self.url}/v1/customers", headers={"Authorization": "Bearer sk_test_up"}),
                    timeout=1).close()
                return self
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                if self._process.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"localstripe did not answer on {self.url}") from None
                time.sleep(0.1)

    def stop(self) -> None:
        if self._process is not None:
            self._process.terminate()
            self._process.wait(timeout=10)
            self._process = None

    def deliver_webhooks(self, url: str, secret: str) -> None:
        """Sign and POST every event from now on to `url` (localstripe's /_config/)."""
        body = urllib.parse.urlencode({"url": url, "secret": secret}).encode()
        urllib.request.urlopen(urllib.request.Request(
            f"{self.url}/_config/webhooks/echo", data=body, method="POST"), timeout=5).close()

    def stop_webhooks(self) -> None:
        self.deliver_webhooks(NOWHERE, "whsec_nowhere")
