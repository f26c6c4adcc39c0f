"""What every benchmark section shares: sizes, ratio lines, helper processes, the sandbox process.

The sandbox always runs in a process of its own (``run.py _child-sandbox``), so its Python work
never competes with the client's for the GIL and its memory never counts as the client's. It can
serve TLS (a throw-away CA) behind a delay proxy in that same process, and rate-limit.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

SCRIPT = Path(__file__).resolve().with_name("run.py")
WORK = Path(tempfile.gettempdir()) / "dict-magics-bench"
RESULTS: dict[str, Any] = {}

# Every benchmark (and each process it starts) keeps its snapshots, audit lines and nonces in a
# data folder of its own: a run against sandboxes never writes into the user's real one.
WORK.mkdir(parents=True, exist_ok=True)
os.environ["DICT_MAGICS_HOME"] = tempfile.mkdtemp(prefix="home-", dir=WORK)


@dataclass(frozen=True)
class Mode:
    """How much work each section does: the full run, or a quick smoke run."""

    load_ext_runs: int
    delete_rounds: int
    delete_calls: int
    bulk_ids: int
    bulk_rounds: int
    memory_sizes: tuple[int, ...]
    cli_runs: int
    network_rounds: int
    network_calls: int
    limited_ids: int
    limited_rounds: int
    listing_entries: int
    listing_rounds: int
    lint_entries: int = 100_000
    lint_naive_entries: int = 2_000
    lint_rounds: int = 5
    check_entries: int = 10_000
    check_chars: int = 100_000
    check_rounds: int = 5
    restore_entries: int = 10_000
    restore_rounds: int = 3


FULL = Mode(21, 15, 40, 400, 3, (1_000, 10_000, 100_000), 5, 9, 20, 600, 3, 100_000, 7)
QUICK = Mode(
    5, 4, 10, 50, 1, (100, 300, 1_000), 2, 2, 5, 150, 1, 3_000, 2,
    lint_entries=2_000, lint_naive_entries=300, lint_rounds=2,
    check_entries=1_000, check_chars=10_000, check_rounds=2,
    restore_entries=300, restore_rounds=1,
)  # fmt: skip


def median(values: list[float]) -> float:
    return statistics.median(values)


def verdict(value: float, target: float) -> str:
    return "PASS" if value <= target else "MISS"


def ratio_line(name: str, value: float, target: float | None = None) -> str:
    """One parseable line: ``ratio <name> = <value>`` and, if it has one, its target."""
    line = f"  ratio {name} = {value:.3f}"
    if target is not None:
        line += f"  (target <= {target:g}: {verdict(value, target)})"
    return line


def section(title: str) -> None:
    print(f"\n== {title} ==", flush=True)


def rotations(names: list[str], rounds: int) -> Iterator[list[str]]:
    """Each round runs every variant, the order shifted by one each round (interleaving)."""
    for r in range(rounds):
        k = r % len(names)
        yield names[k:] + names[:k]


_HAND_LOCK = threading.Lock()
_HAND_LAST = [0]


def _hand_nonce() -> str:
    """Unix milliseconds, strictly increasing in this process: what a user writes by hand."""
    with _HAND_LOCK:
        _HAND_LAST[0] = max(time.time_ns() // 1_000_000, _HAND_LAST[0] + 1)
        return str(_HAND_LAST[0])


def hand_headers(path: str, access_key: str, secret_key: str) -> dict[str, str]:
    """The signed headers a user writes by hand (the floor every benchmark compares with)."""
    from dict_magics.sandbox.checks import sign

    nonce = _hand_nonce()
    return {
        "Content-Type": "application/json",
        "accessKey": access_key,
        "nonce": nonce,
        "signature": sign(path, secret_key, nonce),
    }


def child_env(**extra: str) -> dict[str, str]:
    """The environment for helper processes: cached bytecode, a private IPython directory."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(WORK / "pycache")
    env["IPYTHONDIR"] = str(WORK / "ipython")
    for var in ("DICT_MAGICS_BASE_URL", "DICT_MAGICS_ACCESS_KEY", "DICT_MAGICS_SECRET_KEY"):
        env.pop(var, None)
    env.pop("DICT_MAGICS_PROFILE", None)
    env.update(extra)
    return env


def run_child(*args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    """Run ``run.py _child-...`` in a fresh interpreter; its last stdout line is JSON."""
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), *args],
        env=env or child_env(),
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"helper {args[0]} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


@contextlib.contextmanager
def environ(values: dict[str, str]) -> Iterator[None]:
    """Set environment variables for the block, then put back what was there."""
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@dataclass(frozen=True)
class SandboxSpec:
    """What the sandbox process serves: ``rtt`` puts a delay proxy in front of it."""

    entries: int
    latency: float = 0.0
    tls: bool = False
    rtt: float = 0.0
    rate_limit: float | None = None
    burst: int = 10
    retry_after: int = 1
    max_log: int = 1000
    nonce_rule: str = "increasing"
    port: int = 0


@dataclass
class SandboxProcess:
    """A sandbox served by another process; the secret never leaves the two processes."""

    url: str
    access_key: str
    ca_path: str | None
    secret_key: str = field(repr=False)
    _proc: subprocess.Popen[str] = field(repr=False)

    def env(self) -> dict[str, str]:
        """``DICT_MAGICS_*`` for it, and its CA (only it) for TLS."""
        env = {
            "DICT_MAGICS_BASE_URL": self.url,
            "DICT_MAGICS_ACCESS_KEY": self.access_key,
            "DICT_MAGICS_SECRET_KEY": self.secret_key,
        }
        if self.ca_path:
            env["REQUESTS_CA_BUNDLE"] = env["SSL_CERT_FILE"] = self.ca_path
            env["CURL_CA_BUNDLE"] = self.ca_path
        return env

    def stats(self) -> dict[str, Any]:
        """What the sandbox has seen: ``operations`` (counts by kind in its log) and ``left``
        (entries still there)."""
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._proc.stdin.write("stats\n")
        self._proc.stdin.flush()
        return json.loads(self._proc.stdout.readline())


@contextlib.contextmanager
def sandbox_process(spec: SandboxSpec | int, latency: float = 0.0) -> Iterator[SandboxProcess]:
    """Serve ``spec`` (or ``SandboxServer(entries, latency=...)``) from its own process."""
    if isinstance(spec, int):
        spec = SandboxSpec(spec, latency)
    secret = "sandbox-secret-" + secrets.token_urlsafe(18)
    env = child_env(BENCH_SANDBOX_SECRET=secret)
    proc = subprocess.Popen(
        [sys.executable, str(SCRIPT), "_child-sandbox", json.dumps(asdict(spec))],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        if not first:
            raise RuntimeError("the sandbox process did not start")
        info = json.loads(first)
        yield SandboxProcess(info["url"], info["access_key"], info["ca_path"], secret, proc)
    finally:
        if proc.stdin is not None:
            proc.stdin.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def child_sandbox(spec_json: str) -> None:
    """Serve a sandbox until stdin closes; print its URL and access key (not the secret).

    Each ``stats`` line on stdin is answered with one JSON line of what its log holds.
    """
    from collections import Counter

    from delay_proxy import DelayProxy

    from dict_magics.sandbox import SandboxServer

    spec = SandboxSpec(**json.loads(spec_json))
    secret = os.environ.pop("BENCH_SANDBOX_SECRET")
    sandbox = SandboxServer(
        spec.entries,
        secret_key=secret,
        latency=spec.latency,
        max_log=spec.max_log,
        tls=spec.tls,
        rate_limit=spec.rate_limit,
        burst=spec.burst,
        retry_after=spec.retry_after,
        nonce_rule=spec.nonce_rule,
        port=spec.port,
    )
    with sandbox, contextlib.ExitStack() as stack:
        url = sandbox.url
        if spec.rtt:
            proxy = stack.enter_context(DelayProxy(sandbox.port, spec.rtt))
            url = f"{url.split('://')[0]}://127.0.0.1:{proxy.port}"
        info = {"url": url, "access_key": sandbox.access_key, "ca_path": sandbox.ca_path}
        print(json.dumps(info), flush=True)
        for line in sys.stdin:
            if line.strip() == "stats":
                operations = Counter(r.operation for r in sandbox.requests)
                codes = Counter(str(r.code) for r in sandbox.requests if r.code is not None)
                left = len(sandbox.entries)
                print(json.dumps({"operations": operations, "codes": codes, "left": left}))
                sys.stdout.flush()
