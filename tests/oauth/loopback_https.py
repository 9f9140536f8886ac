"""An https server on this machine for client ID metadata documents: a self-signed
certificate for 127.0.0.1 and localhost (made with `cryptography`), and a small threaded
server that answers one path with a body the test chooses (bytes, or a generator that
never ends)."""

from __future__ import annotations

import datetime
import ipaddress
import ssl
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

# The environment variable naming the PEM file of the certificate the test's document server
# presents: the test-only fetcher trusts it (tests/oauth/loopback_fetcher.py).
TRUSTED_CERTIFICATE = "ECHO_MEMORY_TEST_DOCUMENTS_CA"


@dataclass
class Certificate:
    cert: Path
    key: Path


def self_signed(directory: Path) -> Certificate:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "echo-memory test documents")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([
                x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    made = Certificate(cert=directory / "documents.pem", key=directory / "documents.key")
    made.cert.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    made.key.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return made


@dataclass
class Served:
    base: str
    sent: list[int]  # bytes of body written, per request

    def url(self, path: str) -> str:
        return self.base + path


@contextmanager
def serving_documents(certificate: Certificate,
                      body: Callable[[str], Iterable[bytes] | None]) -> Iterator[Served]:
    """Serve `body(path)` as application/json (404 when it gives None) over https on 127.0.0.1."""
    sent: list[int] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            chunks = body(self.path)
            if chunks is None:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            written = 0
            sent.append(0)
            try:
                for chunk in chunks:
                    self.wfile.write(chunk)
                    written += len(chunk)
                    sent[-1] = written
            except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
                pass  # the fetcher hung up: what a size limit does

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(certificate.cert, certificate.key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield Served(base=f"https://127.0.0.1:{server.server_address[1]}", sent=sent)
    finally:
        server.shutdown()
        server.server_close()
