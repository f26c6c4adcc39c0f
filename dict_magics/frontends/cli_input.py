"""What ``dict-magics`` reads: stdin, id files, a saved result to retry, and typed answers.

Every problem with what was given is a ``UsageProblem`` (one line, exit 2) before anything is
sent. A saved result is judged only by its machine-readable fields (``outcome``, ``ok``), never
by the words of a ``reason``.
"""

from __future__ import annotations

import json
import sys
from typing import IO, Any

from ..errors import UsageProblem
from ..operations.context import ids_from_bytes
from ..operations.prompts import NoAnswer, Prompter, ScriptedPrompter
from .hints import CLI

__all__ = [
    "Terminal",
    "ids_to_retry",
    "is_terminal",
    "prompter",
    "read_ids_file",
    "read_text_file",
    "stdin_line",
]

OUTCOMES = ("success", "failure", "unknown", "absent")


def is_terminal(stream: IO[str] | None) -> bool:
    """True for a terminal; a closed stream (``<&-``, ``2>&-``) is none."""
    return stream is not None and stream.isatty()


def _stdin_bytes(what: str) -> bytes:
    """All of stdin, for ``what``; a closed stdin is a usage problem, not a traceback."""
    if sys.stdin is None:
        raise UsageProblem(f"cannot read {what} from stdin: it is closed. Nothing was sent.")
    return sys.stdin.buffer.read()


def stdin_line(what: str) -> str:
    """The first line of stdin (UTF-8), without its line ending."""
    if sys.stdin is None:
        raise UsageProblem(f"cannot read {what} from stdin: it is closed. Nothing was stored.")
    try:
        return sys.stdin.buffer.readline().decode("utf-8").rstrip("\r\n")
    except UnicodeDecodeError:
        raise UsageProblem(f"{what} on stdin is not UTF-8 text. Nothing was stored.") from None


def _read(name: str, what: str) -> bytes:
    """The bytes of file ``name`` (``-``: stdin)."""
    if name == "-":
        return _stdin_bytes(what)
    try:
        with open(name, "rb") as handle:
            return handle.read()
    except OSError as exc:
        raise UsageProblem(f"cannot read {what} from {name!r}: {exc.strerror or exc}.") from None


def read_ids_file(name: str) -> list[str]:
    """The ids in file ``name`` (``-``: stdin), one a line."""
    return ids_from_bytes(_read(name, "ids"), "stdin" if name == "-" else repr(name))


def read_text_file(name: str) -> str:
    """The UTF-8 text of file ``name`` (``-``: stdin), a byte-order mark dropped."""
    raw = _read(name, "the text")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        where = "stdin" if name == "-" else repr(name)
        raise UsageProblem(
            f"the text on {where} is not UTF-8 (byte {exc.start}). Nothing was sent."
        ) from None


# -- --retry-failed ------------------------------------------------------------------------


def ids_to_retry(name: str) -> list[str]:
    """The ids a saved ``delete --json`` (or ``--jsonl``) result did not surely delete.

    A result counts as done only when its ``outcome`` is ``success`` (files without
    ``outcome``, from version 1: when ``ok`` is true). Anything that is not such a result is
    refused before anything is sent.
    """
    where = "stdin" if name == "-" else repr(name)
    raw = _read(name, "a saved result")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise _not_a_result(where, "it is not UTF-8 text") from None
    results = _results(text, where)
    final: dict[str, bool] = {}
    for index, item in enumerate(results, 1):
        entry_id, done = _judge(item, index, where)
        final[entry_id] = done  # in a --jsonl stream, the last line for an id is final
    return [entry_id for entry_id, done in final.items() if not done]


def _not_a_result(where: str, why: str) -> UsageProblem:
    return UsageProblem(
        f"--retry-failed: {where} is not a saved `dict-magics delete --json` result: {why}. "
        "Nothing was sent."
    )


def _results(text: str, where: str) -> list[Any]:
    """The result objects of a ``--json`` document or of ``--jsonl`` lines."""
    try:
        data = json.loads(text)
    except ValueError:
        return _jsonl_results(text, where)
    if not isinstance(data, dict):
        raise _not_a_result(where, "it is not a JSON object")
    if "error" in data:
        raise _not_a_result(where, "it records an error, not results")
    if "entry_id" in data:
        return [data]  # one result, as version 1 printed it
    results = data.get("results")
    if not isinstance(results, list):
        raise _not_a_result(where, "it has no 'results' list")
    return results


def _jsonl_results(text: str, where: str) -> list[Any]:
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        raise _not_a_result(where, "it is empty")
    results = []
    for number, line in enumerate(lines, 1):
        try:
            item = json.loads(line)
        except ValueError:
            raise _not_a_result(where, f"line {number} is not JSON") from None
        if isinstance(item, dict) and "summary" in item:
            continue
        if isinstance(item, dict) and "error" in item:
            raise _not_a_result(where, f"line {number} records an error, not a result")
        results.append(item)
    return results


def _judge(item: Any, index: int, where: str) -> tuple[str, bool]:
    """``(entry_id, done)`` for one saved result; refused when its fields are not ours."""
    if not isinstance(item, dict):
        raise _not_a_result(where, f"result {index} is not a JSON object")
    entry_id = item.get("entry_id")
    if entry_id is None and "entry_id" in item:
        raise _not_a_result(where, "it is the result of a purge; run `dict-magics purge` again")
    if not isinstance(entry_id, str) or not entry_id:
        raise _not_a_result(where, f"result {index} has no 'entry_id'")
    outcome = item.get("outcome")
    if outcome is not None:
        if outcome not in OUTCOMES:
            raise _not_a_result(where, f"result {index} has an unknown outcome {outcome!r}")
        # "absent": the entry was not there, so nothing can ever delete it (a re-run is moot).
        return entry_id, outcome in ("success", "absent") or _no_such_entry(item)
    if not isinstance(item.get("ok"), bool):
        raise _not_a_result(where, f"result {index} has neither 'outcome' nor 'ok'")
    return entry_id, item["ok"] or _no_such_entry(item)


def _no_such_entry(item: dict[str, Any]) -> bool:
    """A saved refusal saying the entry does not exist (HTTP 404, refused: a result saved before
    ``absent`` existed); sending it again can never succeed."""
    return item.get("http_status") == 404 and item.get("cause") == "refused"


# -- answers typed at the terminal ------------------------------------------------------------


class Terminal:
    """The command line's ``Prompter`` on a terminal: prompts on stderr, keys never echoed."""

    def ask(self, question: str) -> str:
        sys.stderr.write(question)
        sys.stderr.flush()
        line = sys.stdin.readline()
        if not line:
            raise NoAnswer("stdin was closed")
        return line.rstrip("\r\n")

    def ask_secret(self, question: str) -> str:
        import getpass

        try:
            return getpass.getpass(question)
        except EOFError:
            raise NoAnswer("stdin was closed") from None

    def confirm(self, warning: object, question: str) -> str:
        sys.stderr.write(CLI.text(warning) + "\n")
        return self.ask(question)


def prompter(hint: str = "") -> Prompter:
    """Questions on the terminal; where stdin is none, a prompter saying why (and ``hint``)."""
    if is_terminal(sys.stdin):
        return Terminal()
    state = "closed" if sys.stdin is None else "not a terminal"
    return ScriptedPrompter(reason=f"stdin is {state}{hint}")
