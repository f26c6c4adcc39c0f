"""Every report true, every exit code right, no secret shown (issue 34, items 6-12).

Real parts only: the command line in a real subprocess and the magics in the real shell, against
the sandbox over loopback with its faults; Ctrl-C is a real SIGINT.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

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
