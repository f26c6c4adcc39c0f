"""A real local stand-in for the translation service: ``SandboxServer`` on 127.0.0.1 only.

Each documented variant is a keyword, named as ``probe`` reports it; the defaults are the
vendor's.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import os
import secrets
import shlex
import shutil
import signal
import socket
import ssl
import sys
import tempfile
import threading
import time
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from http.server import ThreadingHTTPServer
from typing import Any, NamedTuple
from urllib.parse import urlsplit

from ..models import Entry
from .checks import NONCE_RULES, NonceBook, TokenBook, TokenBucket
from .faults import Fault
from .handler import Handler, TrustmeMissing, load_trustme, throwaway_ca
from .store import EntryStore, coerce_entries
from .translate import LIMIT_UNITS

SANDBOX_MARKER = "DICT_MAGICS_SANDBOX"
"""Set (to the sandbox's URL) by whoever started a sandbox for a notebook run to reuse."""
CHOICES = {
    "listing": (False, "data.entries", "entries"),
    "ids": ("integer", "string"),
    "nonce_rule": NONCE_RULES,
    "errors": ("coded", "plain"),
    "limit_unit": LIMIT_UNITS,
    "rate_limit_answer": ("40103", "429"),
}
EntrySpec = int | Iterable[str | Entry | Mapping[str, Any]]


class Received(NamedTuple):
    """A request as it arrived, before the sandbox did anything about it."""

    method: str
    path: str
    entry_id: str | None


@dataclass(frozen=True)
class LoggedRequest:
    """One request the sandbox answered (or dropped): its ``operation`` (``list``, ``add``,
    ``rejected``, ``dropped``...), the ``entry`` or ``entries`` it touched. Never a token."""

    method: str
    path: str
    headers: dict[str, str]
    entry_id: str | None
    operation: str
    http_status: int | None
    outcome: str
    at: float
    entry: Entry | None = None
    entries: tuple[Entry, ...] = ()
    code: int | None = None


class SandboxServer(ThreadingHTTPServer):
    """The service on ``127.0.0.1``, with faults on demand; a context manager.

    ``entries``: a count (ids 1..N), ids, ``Entry`` objects or dicts in the service's field
    names. The variants' choices are ``CHOICES``; ``bulk``, ``update``, ``token``: the endpoint
    exists. ``rate_limit``: requests a second in bursts of ``burst``, beyond it 40103 or 429.
    """

    daemon_threads = True
    block_on_close = False
    # A batch's workers connect at once; the default backlog of 5 drops SYNs on a busy machine.
    request_queue_size = 128

    def __init__(
        self,
        entries: EntrySpec = 100,
        *,
        access_key: str = "sandbox-access-key",
        secret_key: str | None = None,
        port: int = 0,
        listing: str | bool = "data.entries",
        ids: str = "integer",
        nonce_rule: str = "increasing",
        errors: str = "coded",
        bulk: bool = True,
        update: bool = True,
        token: bool = True,
        limit_unit: str = "element",
        case_sensitive: bool = True,
        latency: float = 0.0,
        add_delay: float = 0.0,
        max_log: int | None = 100_000,
        echo: bool = False,
        tls: bool = False,
        rate_limit: float | None = None,
        burst: int = 10,
        retry_after: int = 1,
        rate_limit_answer: str = "40103",
        token_lifetime: float | None = None,
    ) -> None:
        given = dict(listing=listing, ids=ids, nonce_rule=nonce_rule, errors=errors)
        given.update(limit_unit=limit_unit, rate_limit_answer=rate_limit_answer)
        for name, value in given.items():
            if value not in CHOICES[name]:
                choices = ", ".join(map(repr, CHOICES[name]))
                raise ValueError(f"{name} must be one of {choices}, not {value!r}")
        if retry_after < 0:
            raise ValueError(f"retry_after must be 0 seconds or more, not {retry_after!r}")
        if tls:
            load_trustme()  # TrustmeMissing now, rather than at start()
        self.listing, self.ids, self.errors, self.nonce_rule = listing, ids, errors, nonce_rule
        self.bulk, self.update, self.token = bulk, update, token
        self.limit_unit, self.case_sensitive = limit_unit, case_sensitive
        self.access_key = access_key
        # A recognisable prefix makes a leaked sandbox secret easy to spot.
        self.secret_key = secret_key or "sandbox-secret-" + secrets.token_urlsafe(18)
        self.latency, self.add_delay, self.echo, self.tls = latency, add_delay, echo, tls
        self.retry_after, self.rate_limit_answer = retry_after, rate_limit_answer
        self.home: str | None = None  # a DICT_MAGICS_HOME for this run's clients (``env()``)
        self._bucket = None if rate_limit is None else TokenBucket(rate_limit, burst)
        self._nonces = NonceBook(nonce_rule)
        self._tokens = TokenBook(token_lifetime)
        self._store = EntryStore(coerce_entries(entries))
        self._lock = threading.Lock()  # the logs, the faults and the open connections
        self._faults: list[Fault] = []
        self._log_records: deque[LoggedRequest] = deque(maxlen=max_log)
        self._arrivals: deque[Received] = deque(maxlen=max_log)
        self._open = threading.Event()  # cleared: requests wait (``pause``)
        self._open.set()
        self._context: ssl.SSLContext | None = None
        self.ca_path: str | None = None
        """The PEM file of the throw-away CA while a TLS sandbox runs (removed on stop)."""
        self.serving = False
        self.connections: set[socket.socket] = set()
        self.connections_accepted = 0
        """Connections accepted since start: kept-alive requests share one."""
        super().__init__(("127.0.0.1", port), Handler, bind_and_activate=False)

    @property
    def tokens_issued(self) -> int:
        return self._tokens.issued

    def revoke_tokens(self) -> None:
        """Make every token issued so far invalid, as a restart does."""
        self._tokens.revoke_all()

    def __repr__(self) -> str:
        where = self.url if self.serving else "stopped"
        return f"SandboxServer({where}, entries={len(self.entries)})"

    # -- life cycle ------------------------------------------------------------------------

    def start(self) -> SandboxServer:
        """Bind 127.0.0.1 and serve on a background thread (with a new CA, for TLS)."""
        if self.serving:
            return self
        try:
            self.server_bind()
            self.server_activate()
            if self.tls:
                self._context, self.ca_path = throwaway_ca()
        except BaseException:
            self.server_close()
            raise
        self.serving = True
        threading.Thread(target=self.serve_forever, args=(0.05,), daemon=True).start()
        return self

    def stop(self) -> None:
        """Stop serving, close every open connection, remove the throw-away CA."""
        if not self.serving:
            return
        self.serving = False
        self._open.set()
        self.shutdown()
        self.drop_connections()
        self.server_close()
        if self.ca_path is not None:
            shutil.rmtree(os.path.dirname(self.ca_path), ignore_errors=True)
            self._context = self.ca_path = None

    def __enter__(self) -> SandboxServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        if self._context is not None:
            try:
                # No I/O here: the handshake is the handler's, on the connection's own thread.
                request = self._context.wrap_socket(
                    request, server_side=True, do_handshake_on_connect=False
                )
            except OSError:
                self.shutdown_request(request)
                return
        with self._lock:
            self.connections.add(request)
            self.connections_accepted += 1
        try:
            super().process_request_thread(request, client_address)
        finally:
            with self._lock:
                self.connections.discard(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Clients hanging up or failing their TLS handshake are part of the game."""
        if not isinstance(sys.exc_info()[1], (ConnectionError, ssl.SSLError, TimeoutError)):
            super().handle_error(request, client_address)

    @property
    def port(self) -> int:
        if not self.serving:
            raise RuntimeError("the sandbox is not running")
        return self.server_address[1]

    @property
    def url(self) -> str:
        """The base URL to give a client: ``http://127.0.0.1:<port>`` (``https``: TLS)."""
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}"

    def env(self) -> dict[str, str]:
        """The variables that point a client at this sandbox (its CA and data folder too)."""
        env = {
            "DICT_MAGICS_BASE_URL": self.url,
            "DICT_MAGICS_ACCESS_KEY": self.access_key,
            "DICT_MAGICS_SECRET_KEY": self.secret_key,
            SANDBOX_MARKER: self.url,
        }
        if self.ca_path is not None:
            env["REQUESTS_CA_BUNDLE"] = env["SSL_CERT_FILE"] = self.ca_path
        if self.home is not None:
            env["DICT_MAGICS_HOME"] = self.home
        return env

    # -- state -----------------------------------------------------------------------------

    @property
    def entries(self) -> dict[str, Entry]:
        """A copy of the current entries (id -> ``Entry``)."""
        return self._store.snapshot()

    def entry(self, entry_id: str) -> Entry | None:
        return self._store.snapshot().get(str(entry_id))

    @property
    def terms(self) -> list[tuple[str, str, str, str]]:
        """Every entry's terms in id order (a restore brings them back under new ids)."""
        return [e.terms for e in self._store.sorted()]

    def add_entries(self, entries: EntrySpec) -> None:
        """Add (or replace) entries under their own ids, as ``entries`` of the constructor."""
        self._store.put(coerce_entries(entries))

    @property
    def requests(self) -> list[LoggedRequest]:
        """Every request answered (or dropped), oldest first, once the sandbox acted on it."""
        with self._lock:
            return list(self._log_records)

    @property
    def received(self) -> list[Received]:
        """Every request that arrived, logged before anything is done (even while paused)."""
        with self._lock:
            return list(self._arrivals)

    def clear_log(self) -> None:
        with self._lock:
            self._log_records.clear()
            self._arrivals.clear()

    def inject(self, kind: str, count: int = 1, **options: Any) -> None:
        """The next ``count`` requests the sandbox would take meet fault ``kind``."""
        fault = Fault(kind, count, **options)
        with self._lock:
            self._faults.append(fault)

    def fail_next(
        self, count: int = 1, status: int = 503, retry_after: Any = None, method: str | None = None
    ) -> None:
        """Answer the next ``count`` requests with ``status`` (and ``Retry-After``)."""
        self.inject("status", count, status=status, retry_after=retry_after, method=method)

    def clear_faults(self) -> None:
        with self._lock:
            self._faults.clear()

    def pause(self) -> None:
        """Hold every request that arrives from now on until ``resume()``."""
        self._open.clear()

    def resume(self) -> None:
        self._open.set()

    def drop_connections(self) -> None:
        """Close every open (kept-alive) connection now, as a restart or an idle timeout does."""
        with self._lock:
            for conn in list(self.connections):
                # socket.socket's own shutdown: SSLSocket.shutdown would drop its TLS state under
                # the feet of the thread still reading from it.
                with contextlib.suppress(OSError):
                    socket.socket.shutdown(conn, socket.SHUT_RDWR)

    # -- called from the server's threads ----------------------------------------------------

    def _take_fault(self, method: str, kind: str | None = None) -> Fault | None:
        """The first pending fault for ``method`` (if it is of ``kind``), counted as met: faults
        are met in the order injected by the requests they apply to."""
        with self._lock:
            fault = next((f for f in self._faults if f.method in (None, method)), None)
            if fault is None or kind not in (None, fault.kind):
                return None
            fault.remaining -= 1
            if fault.remaining <= 0:
                self._faults.remove(fault)
            return fault

    def _received(self, method: str, path: str, entry_id: str | None) -> None:
        with self._lock:
            self._arrivals.append(Received(method, path, entry_id))

    def _log(
        self,
        handler: Handler,
        operation: str,
        status: int | None,
        outcome: str,
        entry_id: str | None = None,
        touched: tuple[Entry, ...] = (),
        code: int | None = None,
    ) -> None:
        """Log a request, and the entries it ``touched`` (added, updated, deleted, applied)."""
        headers = {
            k: "<redacted>" if k.lower() == "authorization" else v
            for k, v in handler.headers.items()
        }
        one = operation in ("add", "update", "delete") and touched
        record = LoggedRequest(
            handler.command, handler.path, headers, entry_id, operation, status, outcome,
            time.time(), touched[0] if one else None, () if one else touched, code,
        )  # fmt: skip
        with self._lock:
            self._log_records.append(record)
        if self.echo:
            print(f"{handler.command} {handler.path} -> {status or '-'} {outcome}", flush=True)


def use_sandbox(entries: int = 100) -> SandboxServer | None:
    """Point this IPython session at a sandbox and nothing else (the demo notebooks' setup):
    the one ``DICT_MAGICS_SANDBOX`` announces, else a new one (returned) with a temporary data
    folder. The profile and base URL are reset, so no stored profile gets these deletes.
    """
    given = os.environ.get(SANDBOX_MARKER)
    sandbox = None
    loopback = urlsplit(given or "").hostname == "127.0.0.1"  # where every sandbox listens
    if loopback and given == os.environ.get("DICT_MAGICS_BASE_URL"):
        print(f"Using the sandbox already running at {given}")
    else:
        sandbox = SandboxServer(entries).start()
        sandbox.home = tempfile.mkdtemp(prefix="dict-magics-sandbox-home-")
        atexit.register(shutil.rmtree, sandbox.home, ignore_errors=True)
        os.environ.update(sandbox.env())
        print(
            f"Started an embedded sandbox at {sandbox.url} with {entries} entries; this kernel "
            f"keeps its snapshots and audit log in a temporary data folder, {sandbox.home}, "
            "not in yours"
        )
    os.environ["DICT_MAGICS_PROFILE"] = "default"
    from IPython import get_ipython

    for configurable in getattr(get_ipython(), "configurables", []):
        if type(configurable).__name__ == "DictMagics":
            configurable.profile = configurable.base_url = ""
    return sandbox


def _parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Serve a local stand-in for the translation service (127.0.0.1 only).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="examples:\n  dict-magics sandbox --port 0 --entries 5000 --latency 0.05\n"
        "  dict-magics sandbox --tls --rate-limit 100 --burst 10\n"
        "  dict-magics sandbox --listing entries --ids string --no-bulk --limit-unit request",
    )
    add = parser.add_argument
    add("--port", type=int, default=8765, help="port (default 8765; 0: any free one)")
    add("--entries", type=int, default=100, help="seeded entries 1..N (default 100)")
    add("--secret-key", help="demo secret (default: a new random one)")
    add("--quiet", action="store_true", help="do not print a line per request")
    add("--latency", type=float, default=0.0, metavar="S", help="seconds added per answer")
    add("--tls", action="store_true", help="serve HTTPS with a throw-away CA (needs trustme)")
    add("--rate-limit", type=float, metavar="N", help="N requests a second; refuse the rest")
    add("--burst", type=int, default=10, metavar="B", help="with --rate-limit: bursts of B")
    variants = parser.add_argument_group("variants (defaults: the vendor's documentation)")
    add = variants.add_argument
    add("--listing", choices=("data.entries", "entries"), help="where its entries are")
    add("--no-listing", dest="listing", action="store_const", const=False, help="no GET (404)")
    add("--ids", choices=CHOICES["ids"], help="ids in the listing")
    add("--nonce-rule", choices=NONCE_RULES, help="each above the last, unused, or any")
    add("--errors", choices=CHOICES["errors"], help="plain: a status and a text, no code")
    for name, what in (("bulk", "POST bulk: 404"), ("update", "PUT: 405"), ("token", "token")):
        add(f"--no-{name}", dest=name, action="store_false", help=f"no {what}")
    add("--limit-unit", choices=LIMIT_UNITS, help="what 3 entries a translation counts in")
    add("--case-insensitive", dest="case_sensitive", action="store_false", help="match any case")
    return parser


def main(argv: list[str] | None = None, prog: str = "python -m dict_magics.sandbox") -> int:
    """Serve a sandbox until Ctrl-C (or SIGTERM), printing its URL and demo credentials."""
    parser = _parser(prog)
    args = parser.parse_args(argv)
    options = {k: v for k, v in vars(args).items() if v is not None}  # None: the default
    count, quiet, port = options.pop("entries"), options.pop("quiet"), args.port
    try:
        sandbox = SandboxServer(count, echo=not quiet, **options)
    except TrustmeMissing as exc:
        parser.exit(2, f"{exc}\n")
    except ValueError as exc:
        parser.error(str(exc))
    try:
        sandbox.start()
    except OSError as exc:
        hint = " (--port 0 picks any free port)" if port else ""
        parser.exit(2, f"cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}{hint}\n")
    # Whoever follows the printed exports keeps this run's snapshots and audit lines here.
    sandbox.home = tempfile.mkdtemp(prefix="dict-magics-sandbox-home-")
    _on_sigterm(signal.default_int_handler)  # a kill stops it as Ctrl-C does, cleaning up
    try:  # a Ctrl-C while it prints stops cleanly too
        print(f"Sandbox dictionary service at {sandbox.url} with {args.entries} entries.")
        if sandbox.ca_path is not None:
            print(f"Trust its throw-away CA (removed on stop): {sandbox.ca_path}")
        if args.rate_limit is not None:
            print(
                f"Rate limit: {args.rate_limit:g} requests a second in bursts of up to "
                f"{args.burst}; {sandbox.rate_limit_answer} with Retry-After: "
                f"{sandbox.retry_after} beyond."
            )
        print("Its demo credentials (for this sandbox only):")
        for name, value in sandbox.env().items():
            if name != SANDBOX_MARKER:
                print(f"  export {name}={shlex.quote(value)}")
        print("Press Ctrl-C to stop.", flush=True)
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        print("\nStopped.")
    finally:
        _on_sigterm(signal.SIG_IGN)  # a second kill must not cut the clean-up short
        sandbox.stop()
        shutil.rmtree(sandbox.home, ignore_errors=True)
    return 0


def _on_sigterm(handler: Any) -> None:
    with contextlib.suppress(ValueError):  # not the main thread: whoever runs us handles signals
        signal.signal(signal.SIGTERM, handler)
