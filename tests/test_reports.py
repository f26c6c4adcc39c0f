"""Every report true, every exit code right, no secret shown (issue 34, items 6-12).

Real parts only: the command line in a real subprocess and the magics in the real shell, against
the sandbox over loopback with its faults; Ctrl-C is a real SIGINT.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from conftest import paired_audit, run_cli

from dict_magics.sandbox import SandboxServer

JWT_START = "eyJ"  # every JWT's header starts so: {"alg" ... in base64url


def test_a_bearer_token_quoted_in_a_refusal_reaches_neither_output_nor_audit(
    tmp_path: Path,
) -> None:
    """A service that quotes the request's Authorization header in its refusal (a gateway's
    error page, a debug message): the token is cut out of what is printed and audited."""
    with SandboxServer(10) as box:
        quoted = "invalid token in Authorization: {authorization} (expired?)"
        box.inject("coded", 4, code=40001, method="DELETE", message=quoted)
        done = run_cli(box, "delete", "3", "--auth", "token")
        as_json = run_cli(box, "delete", "4", "--auth", "token", "--json")
    audit = Path(os.environ["DICT_MAGICS_HOME"], "audit.jsonl")
    assert [line["outcome"] for line in paired_audit(audit)] == ["failure", "failure"]
    for shown in (done.stdout, done.stderr, as_json.stdout, audit.read_text(encoding="utf-8")):
        assert JWT_START not in shown
    assert done.returncode == 1 and "Bearer <hidden>" in done.stdout
    assert "invalid token in Authorization" in done.stdout  # the service's words, less the token
    result = json.loads(as_json.stdout)["results"][0]
    assert "Bearer <hidden>" in result["vendor_message"]


def _token_batch_meets(
    faults: list[dict[str, Any]], *options: str
) -> tuple[subprocess.CompletedProcess[str], int, SandboxServer]:
    """A 300-id ``delete --auth token`` batch that meets ``faults`` once 20 entries are gone:
    the process's outcome and the token requests the sandbox received after that."""
    with SandboxServer(300, latency=0.01) as box:
        ids = [str(i) for i in range(1, 301)]
        argv = [sys.executable, "-m", "dict_magics", "delete", "--auth", "token", "-w", "4"]
        proc = subprocess.Popen(
            [*argv, *options, *ids],
            env={**os.environ, **box.env()},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 60  # a safety limit, not a timing assertion
        while len(box.entries) > 280 and time.monotonic() < deadline:
            time.sleep(0.005)
        seen = len(box.received)
        for fault in faults:
            box.inject(**fault)
        out, err = proc.communicate(timeout=300)
        tokens = sum(1 for r in box.received[seen:] if r.path.endswith("/token"))
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err), tokens, box


def test_a_token_endpoint_that_refuses_the_keys_stops_the_batch() -> None:
    """Mid-batch the service refuses the token and then every token request (40001): the batch
    stops as it does for a refused signature, instead of asking for a token per entry (878
    refused token requests, an account-lockout risk)."""
    done, tokens, box = _token_batch_meets([dict(kind="coded", count=10**6, code=40001)])
    assert done.returncode == 1
    assert tokens <= 3, tokens
    assert len(box.entries) > 200  # the rest were not sent
    assert "refused the credentials" in done.stdout and "not sent" in done.stdout


def test_a_token_endpoint_that_fails_is_not_asked_again_per_request() -> None:
    """The token is refused once, then the token endpoint answers 503: a few token requests,
    then the batch stops, saying why (on main: 1,767 token requests in 262 s)."""
    faults = [
        dict(kind="coded", count=1, code=40001, method="DELETE"),
        dict(kind="status", count=10**6, status=503, method="POST"),
    ]
    done, tokens, box = _token_batch_meets(faults, "--max-retries", "1")
    assert done.returncode == 1
    assert tokens <= 2, tokens  # one token request and its one retry
    assert len(box.entries) > 200
    assert "could not get a token" in done.stdout and "not sent" in done.stdout
