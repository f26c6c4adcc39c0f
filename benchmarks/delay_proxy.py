"""A TCP proxy on 127.0.0.1 that delays every chunk, standing in for a real network's round trip.

``tc netem`` needs a kernel module these machines do not have, so the delay is added in user
space: each direction has a reader thread that stamps every chunk with ``now + rtt / 2`` and a
writer thread that sends it when due. TLS handshakes and requests pay the round trip; the TCP
handshake itself (local to the proxy) does not, so a fresh connection is still a little cheaper
here than on a real WAN. Used by the benchmarks only.
"""

from __future__ import annotations

import queue
import socket
import threading
import time

__all__ = ["DelayProxy"]


class DelayProxy:
    """Forward ``127.0.0.1:<port>`` to ``target_port`` with ``rtt`` seconds of round trip."""

    def __init__(self, target_port: int, rtt: float = 0.02) -> None:
        self.target_port = target_port
        self.half = rtt / 2
        self._listener = socket.create_server(("127.0.0.1", 0), backlog=128)
        self.port = self._listener.getsockname()[1]
        self._stopped = threading.Event()
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()

    def __enter__(self) -> DelayProxy:
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopped.set()
        self._listener.close()
        with self._lock:
            for sock in self._sockets:
                try:
                    sock.close()
                except OSError:
                    pass

    def _accept(self) -> None:
        while not self._stopped.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.target_port))
            for sock in (client, upstream):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self._lock:
                self._sockets += [client, upstream]
            self._pipe(client, upstream)
            self._pipe(upstream, client)

    def _pipe(self, source: socket.socket, sink: socket.socket) -> None:
        chunks: queue.Queue[tuple[float, bytes]] = queue.Queue()

        def read() -> None:
            while True:
                try:
                    data = source.recv(65536)
                except OSError:
                    data = b""
                chunks.put((time.monotonic() + self.half, data))
                if not data:
                    return

        def write() -> None:
            while True:
                due, data = chunks.get()
                wait = due - time.monotonic()
                if wait > 0:
                    time.sleep(wait)
                try:
                    if not data:
                        sink.shutdown(socket.SHUT_WR)
                        return
                    sink.sendall(data)
                except OSError:
                    return

        threading.Thread(target=read, daemon=True).start()
        threading.Thread(target=write, daemon=True).start()
