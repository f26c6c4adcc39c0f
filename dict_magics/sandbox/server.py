"""A real local stand-in for the translation service's dictionary API.

``SandboxServer`` listens on 127.0.0.1 only and serves the service's endpoints as the vendor
documents them: the two DELETEs of the contract, the listing (GET), add (POST), bulk add
(``POST /dictionary/bulk``), update (``PUT /dictionary/<id>``) and tokens (``POST /token``, then
``Authorization: Bearer``). It checks method, path, headers, body, signature and the nonce rule
(each nonce greater than the key's last accepted one), and refuses in the vendor's shape with
the documented codes; it keeps entries with real terms, a log of every request it received, and
injectable faults, so the demo and the tests exercise real HTTP with no account. It can also
serve HTTPS with a throw-away CA, and refuse requests over a rate limit (40103, or a plain 429).
Run ``python -m dict_magics.sandbox`` to serve one until Ctrl-C.

HTTP status of coded errors: the vendor does not document it, so by default the sandbox sends a
plausible one (401 for credentials and nonces, 400 for the caller's data, 429 for 40103) and
``coded_status=200`` sends one status for all of them: the client must judge by the code.
"""

from __future__ import annotations

import argparse
import secrets
import shlex
import signal
import threading
import time
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from ..models import Entry, codes
from ..service.http import is_loopback
from .auth import NONCE_RULES, NonceBook, TokenBook, check_key, check_signed
from .bodies import Rejected, coded
from .faults import FAULT_KINDS, FaultQueue, make_fault
from .handler import Handler, Server
from .ratelimit import TokenBucket
from .router import ROUTERS
from .seed import coerce_entries, id_sort_key
from .store import EntryStore
from .tls import SandboxTLS, TrustmeMissing, load_trustme

__all__ = ["FAULT_KINDS", "LoggedRequest", "SandboxServer", "main", "use_sandbox"]

RATE_LIMIT_ANSWERS = ("40103", "429")
REDACTED = "<redacted>"
SANDBOX_MARKER = "DICT_MAGICS_SANDBOX"
"""Set (to the sandbox's URL) by whoever started a sandbox for a notebook run to reuse."""

EntrySpec = int | Iterable[str | Entry | Mapping[str, Any]]


@dataclass(frozen=True)
class LoggedRequest:
    """One request as the sandbox received it, and what it did about it.

    ``operation`` is ``list``, ``add``, ``bulk``, ``update``, ``delete``, ``purge``,
    ``token``, ``rejected``, ``rate_limited`` (40103 or 429, not acted on) or ``dropped``;
    ``entry`` is the entry added, updated (its new version) or deleted, when there was one;
    ``entries`` the entries a bulk add added; ``code`` the vendor code of a refusal. An
    ``Authorization`` header is logged as ``<redacted>``: the sandbox never keeps a token.
    """

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


@dataclass
class _State:
    log: deque[LoggedRequest] = field(default_factory=deque)
    lock: threading.Lock = field(default_factory=threading.Lock)


class SandboxServer:
    """The service's dictionary endpoints on ``127.0.0.1``, with faults on demand.

    ``entries`` is a count (ids ``"1"``..``"N"``), or an iterable of ids (terms generated),
    ``Entry`` objects or dicts in the service's field names. ``listing=False`` answers the GET as
    a service without it does (404). ``latency`` (seconds) is added to every answer; ``echo``
    prints one line per request (never a header value). ``tls=True`` serves HTTPS with a
    throw-away CA (needs ``trustme``; see ``ca_path``). ``rate_limit`` (requests a second, over
    all requests, in bursts of up to ``burst``) refuses the requests over it and does not act
    on them: with the vendor's 40103 (``rate_limit_answer="40103"``, the default) or a plain
    429 (``"429"``), either with ``Retry-After: <retry_after>``.

    ``nonce_rule="increasing"`` (the default, the vendor's rule) refuses a nonce not greater
    than the key's last accepted one with 40005; ``"unique"`` is the old lenient rule (any unused
    nonce within 5 minutes of the clock), for tests that need a forgiving server.
    ``coded_status`` sends every coded error with that HTTP status (e.g. 200) instead of the
    sandbox's plausible ones. ``token_lifetime`` (seconds) overrides the lifetime of every
    token (e.g. 1, to see tokens expire mid-batch). ``add_delay`` (seconds) makes each POST
    (one entry or a bulk chunk) wait that long before it adds (a slow service that still adds
    after its client died). Use as a context manager, or call ``start()`` / ``stop()``.
    """

    def __init__(
        self,
        entries: EntrySpec = 100,
        *,
        access_key: str = "sandbox-access-key",
        secret_key: str | None = None,
        port: int = 0,
        latency: float = 0.0,
        max_log: int | None = 100_000,
        echo: bool = False,
        router: str = "strict",
        listing: bool = True,
        tls: bool = False,
        rate_limit: float | None = None,
        burst: int = 10,
        retry_after: int = 1,
        rate_limit_answer: str = "40103",
        nonce_rule: str = "increasing",
        coded_status: int | None = None,
        token_lifetime: float | None = None,
        add_delay: float = 0.0,
    ) -> None:
        if router not in ROUTERS:
            raise ValueError(f"unknown router {router!r}; one of {', '.join(ROUTERS)}")
        if tls:
            load_trustme()  # TrustmeMissing now, rather than at start()
        self.tls = tls
        # A data folder (DICT_MAGICS_HOME) for the clients of this sandbox run, so their
        # snapshots and audit lines never land in the real one; ``env()`` names it when set.
        self.home: str | None = None
        self._bucket = None if rate_limit is None else TokenBucket(rate_limit, burst)
        if retry_after < 0:
            raise ValueError(f"retry_after must be 0 seconds or more, not {retry_after!r}")
        self.retry_after = retry_after
        if rate_limit_answer not in RATE_LIMIT_ANSWERS:
            raise ValueError(
                f"rate_limit_answer must be one of {', '.join(RATE_LIMIT_ANSWERS)}, "
                f"not {rate_limit_answer!r}"
            )
        self.rate_limit_answer = rate_limit_answer
        if coded_status is not None and not 200 <= coded_status < 600:
            raise ValueError(f"coded_status must be an HTTP status, not {coded_status!r}")
        self.coded_status = coded_status
        self._nonces = NonceBook(nonce_rule)
        self._tokens = TokenBook(token_lifetime)
        self.router = router
        self.listing = listing
        self.access_key = access_key
        # A recognisable prefix lets tests (and people) spot a leaked sandbox secret at once.
        self.secret_key = secret_key or "sandbox-secret-" + secrets.token_urlsafe(18)
        self.latency = latency
        self.add_delay = add_delay
        self.echo = echo
        self._store = EntryStore(coerce_entries(entries))
        self._faults = FaultQueue()
        self._state = _State(log=deque(maxlen=max_log))
        self._port = port
        self._open = threading.Event()
        self._open.set()
        self._server: Server | None = None
        self._thread: threading.Thread | None = None
        self._tls: SandboxTLS | None = None

    @property
    def nonce_rule(self) -> str:
        """``increasing`` (the vendor's) or ``unique`` (the old lenient rule)."""
        return self._nonces.rule

    def last_nonce(self, access_key: str | None = None) -> int:
        """The last nonce accepted for ``access_key`` (this sandbox's key by default)."""
        return self._nonces.last(access_key or self.access_key)

    @property
    def tokens_issued(self) -> int:
        """How many tokens ``POST /api/v1/token`` has handed out."""
        return self._tokens.issued

    def revoke_tokens(self) -> None:
        """Make every token issued so far invalid (40001 from now on)."""
        self._tokens.revoke_all()

    def __repr__(self) -> str:
        where = self.url if self._server else "stopped"
        return f"SandboxServer({where}, entries={len(self._store)})"

    # -- life cycle ------------------------------------------------------------------------

    def start(self) -> SandboxServer:
        """Bind 127.0.0.1 and serve on a background thread (with a new CA, for TLS)."""
        if self._server is not None:
            return self
        server = Server(("127.0.0.1", self._port), Handler)
        server.sandbox = self
        if self.tls:
            try:
                server.tls = self._tls = SandboxTLS()
            except BaseException:
                server.server_close()
                raise
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close every open connection."""
        server, self._server = self._server, None
        if server is None:
            return
        self._open.set()
        server.shutdown()
        server.close_connections()
        server.server_close()
        tls, self._tls = self._tls, None
        if tls is not None:
            tls.remove()

    def __enter__(self) -> SandboxServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        """The port it listens on (chosen by the system unless given)."""
        if self._server is None:
            raise RuntimeError("the sandbox is not running")
        return self._server.server_address[1]

    @property
    def url(self) -> str:
        """The base URL to give a client: ``http://127.0.0.1:<port>`` (``https``: TLS)."""
        scheme = "https" if self.tls else "http"
        return f"{scheme}://127.0.0.1:{self.port}"

    @property
    def ca_path(self) -> str | None:
        """The PEM file of the throw-away CA to trust while this TLS sandbox runs (in a
        private temporary folder, removed on stop); ``None`` without TLS or once stopped."""
        return self._tls.ca_path if self._tls is not None else None

    @property
    def connections_accepted(self) -> int:
        """How many connections it has accepted since it started: kept-alive requests share
        one."""
        if self._server is None:
            raise RuntimeError("the sandbox is not running")
        return self._server.accepted

    def env(self) -> dict[str, str]:
        """The ``DICT_MAGICS_*`` variables that point a client at this sandbox; with TLS also
        ``REQUESTS_CA_BUNDLE`` and ``SSL_CERT_FILE`` naming its CA (and only it): requests lets
        ``REQUESTS_CA_BUNDLE`` override a session's own ``verify``. ``DICT_MAGICS_HOME`` too
        when this run has a data folder of its own (``home``; ``dict-magics sandbox`` makes
        one)."""
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
        """The entry with ``entry_id``, or ``None``."""
        return self._store.get(str(entry_id))

    @property
    def terms(self) -> list[tuple[str, str, str, str]]:
        """Every entry's (fromLang, fromText, toLang, toText), in id order: what a restore
        must bring back, whatever ids the entries get."""
        return [e.terms for e in sorted(self.entries.values(), key=lambda e: id_sort_key(e.id))]

    def add_entries(self, entries: EntrySpec) -> None:
        """Add (or re-add) entries: ids (with their generated terms), ``Entry`` objects or
        dicts in the service's field names."""
        self._store.put(coerce_entries(entries))

    @property
    def requests(self) -> list[LoggedRequest]:
        """A copy of the log of every request received, oldest first."""
        with self._state.lock:
            return list(self._state.log)

    def clear_log(self) -> None:
        """Forget the requests received so far."""
        with self._state.lock:
            self._state.log.clear()

    def inject(
        self,
        kind: str,
        count: int = 1,
        *,
        status: int = 503,
        retry_after: str | int | float | None = None,
        delay: float = 0.5,
        location: str = "",
        method: str | None = None,
        code: int | None = None,
        message: str | None = None,
    ) -> None:
        """Make the next ``count`` requests (of ``method`` only, when given) that the sandbox
        would take meet fault ``kind`` (see ``FAULT_KINDS``); ``code`` and ``message`` are a
        ``coded`` fault's vendor error."""
        self._faults.add(
            make_fault(
                kind,
                count,
                status=status,
                retry_after=retry_after,
                delay=delay,
                location=location,
                method=method,
                code=code,
                message=message,
            )
        )

    def fail_next(
        self, count: int = 1, status: int = 503, retry_after: Any = None, method: str | None = None
    ) -> None:
        """Answer the next ``count`` requests with ``status`` (and ``Retry-After``)."""
        self.inject("status", count, status=status, retry_after=retry_after, method=method)

    def pause(self) -> None:
        """Hold every request that arrives from now on until ``resume()``: a request in flight,
        for as long as a test needs to look at it."""
        self._open.clear()

    def resume(self) -> None:
        """Let held requests (and new ones) through."""
        self._open.set()

    def drop_connections(self) -> None:
        """Close every open (kept-alive) connection now, as a restart or an idle timeout does."""
        if self._server is not None:
            self._server.close_connections()

    def clear_faults(self) -> None:
        """Drop every pending fault."""
        self._faults.clear()

    # -- request handling (called from the server's threads) -------------------------------

    def _admitted(self) -> bool:
        """Whether the rate limit (if any) lets one more request through now."""
        return self._bucket is None or self._bucket.take()

    def _log(
        self,
        handler: Handler,
        op: str,
        code: int | None,
        outcome: str,
        entry_id: str | None = None,
        entry: Entry | None = None,
        *,
        entries: tuple[Entry, ...] = (),
        vendor_code: int | None = None,
    ) -> None:
        headers = {
            k: REDACTED if k.lower() == "authorization" else v for k, v in handler.headers.items()
        }
        record = LoggedRequest(
            method=handler.command,
            path=handler.path,
            headers=headers,
            entry_id=entry_id,
            operation=op,
            http_status=code,
            outcome=outcome,
            at=time.time(),
            entry=entry,
            entries=entries,
            code=vendor_code,
        )
        with self._state.lock:
            self._state.log.append(record)
        if self.echo:
            shown = "-" if code is None else code
            print(f"{handler.command} {handler.path} -> {shown} {outcome}", flush=True)

    def _status(self, problem: Rejected) -> int:
        """The HTTP status a refusal goes out with (``coded_status`` for every coded one)."""
        if problem.code is not None and self.coded_status is not None:
            return self.coded_status
        return problem.status

    def _rate_refusal(self) -> Rejected:
        """What a request over the rate limit is answered: 40103, or the old plain 429."""
        if self.rate_limit_answer == "429":
            return Rejected(429, f"rate limit exceeded: retry after {self.retry_after} s")
        return coded(codes.FREQUENCY_LIMIT)

    @staticmethod
    def _check_content_type(handler: Handler) -> Rejected | None:
        content_type = (handler.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if content_type != "application/json":
            return coded(codes.INVALID_PARAMETERS, "Content-Type must be application/json")
        return None

    def _check_auth(self, handler: Handler) -> Rejected | None:
        """Why a dictionary request is not authentic (a coded refusal), or ``None``: a Bearer
        token issued here and not expired, or a valid signature with an acceptable nonce."""
        problem = self._check_content_type(handler)
        if problem is not None:
            return problem
        authorization = handler.headers.get("Authorization")
        if authorization is not None:
            return self._tokens.check(authorization)
        headers = handler.headers
        return check_signed(headers, handler.path, self.access_key, self.secret_key, self._nonces)

    def _check_token_request(self, access_key: str, secret_key: str) -> None:
        """Refuse (raise a coded ``Rejected``) a token request not naming this sandbox's
        keys."""
        problem = check_key(access_key, self.access_key)
        if problem is not None:
            raise problem
        if not secrets.compare_digest(secret_key.encode(), self.secret_key.encode()):
            raise coded(codes.KEY_INVALID, "the secret key does not match the access key")


def use_sandbox(entries: int = 100) -> SandboxServer | None:
    """Point this IPython session at a sandbox, and at nothing else (the demo notebooks' setup).

    A sandbox announced by ``DICT_MAGICS_SANDBOX`` (``dict-magics demo`` and the tests start
    one) is reused; otherwise one is started here and returned. Either way the session's
    profile and base-URL settings are reset, so a stored profile, a ``%config`` line or real
    credentials in the environment can never send these notebooks' deletes to a real account.
    """
    import os

    given = os.environ.get(SANDBOX_MARKER)
    sandbox = None
    loopback = is_loopback(urlsplit(given or "").hostname or "")
    if given and loopback and given == os.environ.get("DICT_MAGICS_BASE_URL"):
        print(f"Using the sandbox already running at {given}")
    else:
        sandbox = SandboxServer(entries).start()
        os.environ.update(sandbox.env())
        print(f"Started an embedded sandbox at {sandbox.url} with {entries} entries")
    os.environ["DICT_MAGICS_PROFILE"] = "default"
    from IPython import get_ipython

    shell = get_ipython()
    for configurable in getattr(shell, "configurables", []):
        if type(configurable).__name__ == "DictMagics":
            configurable.profile = ""
            configurable.base_url = ""
    return sandbox


def main(argv: list[str] | None = None, prog: str = "python -m dict_magics.sandbox") -> int:
    """Serve a sandbox until Ctrl-C, printing its URL and demo credentials."""
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Serve a local stand-in for the dictionary API (127.0.0.1 only).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=(
            "examples:\n"
            "  dict-magics sandbox\n"
            "  dict-magics sandbox --port 0 --entries 5000 --latency 0.05\n"
            "  dict-magics sandbox --tls --rate-limit 100 --burst 10\n"
            "  dict-magics sandbox --no-listing"
        ),
    )
    parser.add_argument("--port", type=int, default=8765, help="port (default 8765; 0: any)")
    parser.add_argument("--entries", type=int, default=100, help="seeded entries 1..N")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds added per answer")
    parser.add_argument("--secret-key", help="demo secret (default: a new random one)")
    parser.add_argument("--quiet", action="store_true", help="do not print a line per request")
    parser.add_argument(
        "--no-listing", action="store_true", help="answer the GET listing 404, as some services do"
    )
    parser.add_argument(
        "--tls", action="store_true", help="serve HTTPS with a throw-away CA (needs trustme)"
    )
    parser.add_argument(
        "--rate-limit",
        type=float,
        metavar="N",
        help="allow N requests a second (all requests); refuse the rest (--rate-limit-answer)",
    )
    parser.add_argument(
        "--burst", type=int, default=10, metavar="B", help="with --rate-limit: bursts of up to B"
    )
    parser.add_argument(
        "--rate-limit-answer",
        choices=RATE_LIMIT_ANSWERS,
        default="40103",
        help="with --rate-limit: the vendor's code 40103 (default) or a plain 429",
    )
    parser.add_argument(
        "--nonce-rule",
        choices=NONCE_RULES,
        default="increasing",
        help="increasing: each nonce above the key's last one (the vendor's rule, default); "
        "unique: any unused nonce within 5 minutes (lenient)",
    )
    parser.add_argument(
        "--coded-status",
        type=int,
        metavar="CODE",
        help="send every coded error with this HTTP status (e.g. 200); default: 401/400/429",
    )
    parser.add_argument(
        "--token-lifetime",
        type=float,
        metavar="S",
        help="every token lasts S seconds, whatever the request asks (default: as asked)",
    )
    parser.add_argument(
        "--retry-after",
        type=int,
        default=1,
        metavar="S",
        help="with --rate-limit: the Retry-After seconds of a 429 (default 1)",
    )
    args = parser.parse_args(argv)
    try:
        sandbox = SandboxServer(
            args.entries,
            listing=not args.no_listing,
            port=args.port,
            latency=args.latency,
            secret_key=args.secret_key,
            echo=not args.quiet,
            tls=args.tls,
            rate_limit=args.rate_limit,
            burst=args.burst,
            retry_after=args.retry_after,
            rate_limit_answer=args.rate_limit_answer,
            nonce_rule=args.nonce_rule,
            coded_status=args.coded_status,
            token_lifetime=args.token_lifetime,
        )
    except TrustmeMissing as exc:
        parser.exit(2, f"{exc}\n")
    except ValueError as exc:
        parser.error(str(exc))
    try:
        sandbox.start()
    except OSError as exc:
        hint = " (--port 0 picks any free port)" if args.port else ""
        parser.exit(2, f"cannot listen on 127.0.0.1:{args.port}: {exc.strerror or exc}{hint}\n")
    import shutil
    import tempfile

    # Whoever follows the printed exports keeps snapshots and audit lines of this run here,
    # not in the real data folder (the sandbox's entries are gone on stop: so is the folder).
    sandbox.home = tempfile.mkdtemp(prefix="dict-magics-sandbox-home-")
    _stop_on_sigterm()
    try:
        _print_welcome(sandbox, args)  # a Ctrl-C while it prints stops cleanly too
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        print("\nStopped.")
    finally:
        _stop_on_sigterm(ignore=True)  # a second kill must not cut the clean-up short
        sandbox.stop()  # also removes the throw-away CA's folder
        shutil.rmtree(sandbox.home, ignore_errors=True)
    return 0


def _stop_on_sigterm(*, ignore: bool = False) -> None:
    """``kill`` (SIGTERM) stops the sandbox as Ctrl-C does, so its CA folder is removed too
    (``ignore``: while it stops, further kills wait for that)."""

    def stop(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    try:
        signal.signal(signal.SIGTERM, signal.SIG_IGN if ignore else stop)
    except ValueError:  # not the main thread: whoever runs us handles signals
        pass


def _print_welcome(sandbox: SandboxServer, args: argparse.Namespace) -> None:
    print(f"Sandbox dictionary service at {sandbox.url} with {args.entries} entries.")
    if sandbox.ca_path is not None:
        print(f"Trust its throw-away CA (removed on stop): {sandbox.ca_path}")
    if args.rate_limit is not None:
        print(
            f"Rate limit: {args.rate_limit:g} requests a second in bursts of up to {args.burst}; "
            f"{args.rate_limit_answer} with Retry-After: {args.retry_after} beyond."
        )
    print("Its demo credentials (for this sandbox only):")
    print(f"  export DICT_MAGICS_BASE_URL={sandbox.url}")
    print(f"  export DICT_MAGICS_ACCESS_KEY={sandbox.access_key}")
    print(f"  export DICT_MAGICS_SECRET_KEY={sandbox.secret_key}")
    if sandbox.ca_path is not None:
        print(f"  export REQUESTS_CA_BUNDLE={shlex.quote(sandbox.ca_path)}")
        print(f"  export SSL_CERT_FILE={shlex.quote(sandbox.ca_path)}")
    if sandbox.home is not None:
        print("Its own data folder (snapshots, audit log; removed on stop), not your real one:")
        print(f"  export DICT_MAGICS_HOME={shlex.quote(sandbox.home)}")
    print("Press Ctrl-C to stop.", flush=True)
