"""A tiny raw HTTP/1.1 server on 127.0.0.1 for adversarial tests: the test decides the bytes."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable


class RawServer:
    """Accepts connections on 127.0.0.1; for each request calls ``respond(conn, req, n)`` where
    ``req`` is (method, path, headers, body) and ``n`` the request's number overall."""

    def __init__(self, respond: Callable[[socket.socket, tuple, int], None]) -> None:
        self.respond = respond
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.requests: list[tuple] = []
        self.connections = 0
        self._lock = threading.Lock()
        self._stop = False
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def _accept(self) -> None:
        while not self._stop:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        buf = b""
        try:
            while True:
                while b"\r\n\r\n" not in buf:
                    data = conn.recv(65536)
                    if not data:
                        return
                    buf += data
                head, _, buf = buf.partition(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                method, path, _ = lines[0].split(" ", 2)
                headers = {}
                for line in lines[1:]:
                    k, _, v = line.partition(":")
                    headers[k.strip().lower()] = v.strip()
                length = int(headers.get("content-length", "0") or 0)
                while len(buf) < length:
                    data = conn.recv(65536)
                    if not data:
                        return
                    buf += data
                body, buf = buf[:length], buf[length:]
                req = (method, path, headers, body)
                with self._lock:
                    self.requests.append(req)
                    n = len(self.requests)
                self.respond(conn, req, n)
        except OSError:
            return
        finally:
            try:
                conn.close()
            except OSError:
                pass

    def close(self) -> None:
        self._stop = True
        self.sock.close()


def answer(status: str, body: bytes, extra: str = "") -> bytes:
    return (
        f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n{extra}\r\n"
    ).encode() + body


SUCCESS = b'{"status": "success"}'
FAILURE = b'{"status": "failure", "message": "no such entry"}'
