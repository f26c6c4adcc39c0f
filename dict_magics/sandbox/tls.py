"""HTTPS for the sandbox: a throw-away CA (made by ``trustme``) and the server's side of TLS.

The CA's certificate lives in a private temporary folder only while one sandbox runs; the
server certificate covers ``127.0.0.1`` and ``localhost``, the only names the sandbox answers on.
"""

from __future__ import annotations

import os
import shutil
import socket
import ssl
import tempfile
from types import ModuleType

__all__ = ["TRUSTME_MISSING", "SandboxTLS", "TrustmeMissing", "load_trustme"]

HANDSHAKE_TIMEOUT_S = 10.0
TRUSTME_MISSING = "the TLS sandbox needs trustme: pip install trustme"


class TrustmeMissing(RuntimeError):
    """TLS was asked for, but ``trustme`` (in the project's test extra) is not installed."""


def load_trustme() -> ModuleType:
    """``trustme``, imported only when TLS is asked for (it pulls in cryptography)."""
    try:
        import trustme
    except ImportError:
        raise TrustmeMissing(TRUSTME_MISSING) from None
    return trustme


class SandboxTLS:
    """A new CA, a certificate it signed, and the server context presenting it."""

    def __init__(self) -> None:
        ca = load_trustme().CA(organization_name="dict-magics sandbox (throw-away)")
        self.context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ca.issue_cert("127.0.0.1", "localhost").configure_cert(self.context)
        self._folder = tempfile.mkdtemp(prefix="dict-magics-sandbox-ca-")  # mode 0700
        self.ca_path = os.path.join(self._folder, "ca.pem")
        ca.cert_pem.write_to_path(self.ca_path)

    def wrap(self, sock: socket.socket) -> ssl.SSLSocket:
        """The server side of TLS on an accepted connection; no bytes move until ``handshake``."""
        return self.context.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)

    @staticmethod
    def handshake(sock: ssl.SSLSocket) -> None:
        """Shake hands within ``HANDSHAKE_TIMEOUT_S`` (``OSError`` if the client does not)."""
        before = sock.gettimeout()
        sock.settimeout(HANDSHAKE_TIMEOUT_S)
        sock.do_handshake()
        sock.settimeout(before)

    def remove(self) -> None:
        shutil.rmtree(self._folder, ignore_errors=True)
