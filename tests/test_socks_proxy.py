"""Through a SOCKS proxy (``ALL_PROXY=socks5h://...`` with ``requests[socks]``) a request goes
over urllib3's SOCKS connections: they must report to the attempt like any other, so a one-id
delete still waits for its snapshot on disk before the first byte, a snapshot that cannot be
kept still stops it, and the deadline and "was it sent" still hold.

Found by an adversarial review. Everything listens on 127.0.0.1 only: a tiny SOCKS5 proxy
terminates TLS for the made-up host ``dict.test`` and forwards plain HTTP to the sandbox.
"""

from __future__ import annotations

import errno
import os
import socket
import ssl
import threading
import time
from pathlib import Path

import pytest
import socks  # noqa: F401 - PySocks (the test extra): requests needs it for socks5://
import trustme

from dict_magics.errors import LocalDataError
from dict_magics.operations.context import OperationSettings
from dict_magics.operations.delete import delete
from dict_magics.sandbox import SandboxServer


class TlsSocksProxy:
    """SOCKS5 (no auth) on 127.0.0.1; every CONNECT goes to ``target_port`` on 127.0.0.1,
    with TLS for ``dict.test`` terminated here."""

    def __init__(self, target_port: int, tmp: Path) -> None:
        ca = trustme.CA()
        leaf = ca.issue_cert("dict.test")
        self.context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        leaf.configure_cert(self.context)
        self.ca_path = str(tmp / "ca.pem")
        ca.cert_pem.write_to_path(self.ca_path)
        self.target_port = target_port
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.tunnels = 0
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"socks5h://127.0.0.1:{self.sock.getsockname()[1]}"

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    @staticmethod
    def _exact(conn: socket.socket, n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = conn.recv(n - len(data))
            if not chunk:
                raise OSError("closed")
            data += chunk
        return data

    def _serve(self, conn: socket.socket) -> None:
        try:
            _, methods = self._exact(conn, 2)
            self._exact(conn, methods)
            conn.sendall(b"\x05\x00")
            _, _, _, atyp = self._exact(conn, 4)
            if atyp == 3:
                self._exact(conn, self._exact(conn, 1)[0])
            else:
                self._exact(conn, 4 if atyp == 1 else 16)
            self._exact(conn, 2)
            conn.sendall(b"\x05\x00\x00\x01\x7f\x00\x00\x01\x00\x00")
            self.tunnels += 1
            tls = self.context.wrap_socket(conn, server_side=True)
            up = socket.create_connection(("127.0.0.1", self.target_port))
            threading.Thread(target=self._pump, args=(up, tls), daemon=True).start()
            self._pump(tls, up)
        except OSError:
            conn.close()

    @staticmethod
    def _pump(src: socket.socket, dst: socket.socket) -> None:
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.close()
                except OSError:
                    pass

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def via_socks(monkeypatch: pytest.MonkeyPatch, sandbox: SandboxServer, tmp_path: Path):
    proxy = TlsSocksProxy(sandbox.port, tmp_path)
    monkeypatch.setenv("DICT_MAGICS_BASE_URL", "https://dict.test")
    monkeypatch.setenv("DICT_MAGICS_ACCESS_KEY", sandbox.access_key)
    monkeypatch.setenv("DICT_MAGICS_SECRET_KEY", sandbox.secret_key)
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", proxy.ca_path)
    for name in ("NO_PROXY", "no_proxy", "HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ALL_PROXY", proxy.url)
    yield sandbox, proxy
    proxy.close()


def test_a_batch_goes_through_the_socks_proxy(via_socks) -> None:
    """The set-up itself: a batch (its snapshot taken first) deletes through the proxy."""
    sandbox, proxy = via_socks
    result = delete(OperationSettings(), ["3", "4"])
    assert all(r.ok for r in result.results) and proxy.tunnels >= 1
    assert "3" not in sandbox.entries


def test_through_socks_a_one_id_delete_waits_for_its_snapshot_on_disk(
    via_socks, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The snapshot's fdatasync takes 1 s (a busy disk): the DELETE reaches the service only
    after it has returned."""
    sandbox, _ = via_socks
    real = os.fdatasync
    synced_at: list[float] = []

    def slow_sync(fd: int) -> None:
        time.sleep(1.0)
        real(fd)
        synced_at.append(time.time())

    monkeypatch.setattr(os, "fdatasync", slow_sync)
    result = delete(OperationSettings(), ["5"])
    assert result.ok
    delete_at = next(r.at for r in sandbox.requests if r.method == "DELETE")
    assert synced_at and delete_at >= synced_at[0], (
        f"DELETE reached the service {synced_at[0] - delete_at:.2f} s before the snapshot "
        "was on disk"
    )


def test_through_socks_a_snapshot_that_cannot_be_synced_sends_nothing(
    via_socks, monkeypatch: pytest.MonkeyPatch
) -> None:
    """fdatasync fails (EIO): a LocalDataError naming the file, and no DELETE at all."""
    sandbox, _ = via_socks

    def broken_sync(fd: int) -> None:
        time.sleep(0.3)
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(os, "fdatasync", broken_sync)
    with pytest.raises(LocalDataError, match=r"nothing was deleted") as raised:
        delete(OperationSettings(), ["6"])
    assert "snapshots" in str(raised.value) and ".json" in str(raised.value)
    assert [r.method for r in sandbox.requests if r.method == "DELETE"] == [], (
        "a DELETE was sent although the snapshot could not be kept"
    )
    assert "6" in sandbox.entries
