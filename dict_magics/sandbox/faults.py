"""Faults the sandbox can inject: an answer in place of the service's (nothing done), or one
garbled, delayed or dropped after it acted, where a client must not claim a failure.
"""

from __future__ import annotations

from dataclasses import dataclass

METHODS = ("GET", "POST", "PUT", "DELETE")
FAULT_KINDS = {
    "status": "answer `status` (a failure without code, optional Retry-After); nothing done",
    "coded": "answer `status` with the vendor's error `code` and its message (or `message`, in "
    "which {authorization} quotes the request's header; optional Retry-After); nothing done",
    "non_json": "answer 200 with a plain-text body; nothing done",
    "no_status": "answer 200 with JSON that has no status; nothing done",
    "other_status": "answer 200 with JSON status 'deleted'; nothing done",
    "html": "answer 500 with an HTML error page; nothing done",
    "huge": "answer 200 with a 1 MiB body; nothing done",
    "deep_json": "answer 200 with JSON nested 50,000 levels deep; nothing done",
    "redirect": "answer 307 pointing at `location`; nothing done",
    "drop_before": "reset the connection before reading the request; nothing done",
    "drip": "act, then send the body one byte every `delay` seconds",
    "drop_after": "act, then reset the connection without answering",
    "hang": "act, then wait `delay` seconds before answering",
    "gzip": "act, and gzip the answer if the request accepts gzip",
    "bom": "act, then answer with a UTF-8 byte order mark before the JSON",
    "gzip_forced": "act, then gzip the answer whatever the request accepts",
    "utf16": "act, then answer JSON in UTF-16 with a BOM (charset=utf-16)",
    "truncated": "act, then promise a longer body than is sent, and close",
    "empty_204": "act, then answer 204 with no body",
    "close_mid_headers": "act, then send 'HTTP/1.1 200 OK\\r\\nContent-Ty' and close",
    "drip_headers": "act, then send the head one byte every `delay` seconds, then the body",
    "continue_flood": "act, then send '100 Continue' every `delay` seconds until the client "
    "hangs up or the sandbox stops; never a final answer",
    "malformed_listing": "GET only: a success listing in which one entry lacks toText and one "
    "has a numeric fromText",
}


@dataclass
class Fault:
    """One injected fault, for the next ``remaining`` requests (of ``method``, or of any)."""

    kind: str
    remaining: int = 1
    status: int = 503
    retry_after: str | None = None
    delay: float = 0.5
    location: str = ""
    method: str | None = None
    code: int | None = None
    message: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault {self.kind!r}; one of {', '.join(FAULT_KINDS)}")
        self.method = self.method and self.method.upper()
        if self.method not in (None, *METHODS):
            raise ValueError(f"unknown method {self.method!r}; one of {', '.join(METHODS)}")
        if self.kind == "malformed_listing":
            if self.method not in (None, "GET"):
                raise ValueError(f"fault {self.kind!r} applies to GET only")
            self.method = "GET"
        if self.kind == "coded" and self.code is None:
            raise ValueError("fault 'coded' needs the vendor's error code (code=40103, say)")
        self.retry_after = None if self.retry_after is None else str(self.retry_after)

    @property
    def applied(self) -> bool:
        """Whether the sandbox acts first: the kinds that answer instead say "nothing done"."""
        return not FAULT_KINDS[self.kind].endswith("nothing done")
