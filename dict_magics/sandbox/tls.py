"""HTTPS for the sandbox: a throw-away CA (made by ``trustme``) and the server's side of TLS.

The CA lives only as long as one sandbox run: its certificate is written to a private temporary
folder for clients to trust, and the folder is removed when the sandbox stops. The server
certificate covers ``127.0.0.1`` and ``localhost``, the only names the sandbox answers on.
"""

from __future__ import annotations

import os
import shutil
import socket
import ssl
import tempfile
from types import ModuleType

__all__ = ["HANDSHAKE_TIMEOUT_S", "TRUSTME_MISSING", "SandboxTLS", "TrustmeMissing", "load_trustme"]

HANDSHAKE_TIMEOUT_S = 10.0
"""How long a client may take over its handshake before the server gives up on it."""
TRUSTME_MISSING = "the TLS sandbox needs trustme: pip install trustme"


class TrustmeMissing(RuntimeError):
    """TLS was asked for, but ``trustme`` (in the project's test extra) is not installed."""


def load_trustme() -> ModuleType:
    """The ``trustme`` module, imported only when TLS is asked for (it pulls in cryptography)."""
    try:
        import trustme as module
    except ImportError:
        raise TrustmeMissing(TRUSTME_MISSING) from None
    return module


class SandboxTLS:
    """A new CA, a certificate for ``127.0.0.1`` and ``localhost`` it signed, and the server
    context that presents it. Call ``remove()`` once the server is closed."""

    def __init__(self) -> None:
        module = load_trustme()
        ca = module.CA(organization_name="dict-magics sandbox (throw-away)")
        leaf = ca.issue_cert("127.0.0.1", "localhost")
        self.context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        leaf.configure_cert(self.context)
        self._folder = tempfile.mkdtemp(prefix="dict-magics-sandbox-ca-")  # mode 0700
        self.ca_path = os.path.join(self._folder, "ca.pem")
        ca.cert_pem.write_to_path(self.ca_path)

    def wrap(self, sock: socket.socket) -> ssl.SSLSocket:
        """The server side of TLS on an accepted connection; no bytes move until ``handshake``."""
        return self.context.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)

    @staticmethod
    def handshake(sock: ssl.SSLSocket) -> None:
        """Shake hands within ``HANDSHAKE_TIMEOUT_S`` (``OSError`` if the client does not).

        Run on the connection's own thread: a slow or silent client then holds only itself up.
        """
        before = sock.gettimeout()
        sock.settimeout(HANDSHAKE_TIMEOUT_S)
        sock.do_handshake()
        sock.settimeout(before)

    def remove(self) -> None:
        """Delete the CA's file and folder."""
        shutil.rmtree(self._folder, ignore_errors=True)
