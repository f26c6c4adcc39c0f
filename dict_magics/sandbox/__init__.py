"""A real local stand-in for the translation service, for the demo, the notebooks and the tests.

``SandboxServer`` listens on 127.0.0.1 only; ``use_sandbox()`` points a notebook at one.
Run ``python -m dict_magics.sandbox`` (or ``dict-magics sandbox``) to serve one until Ctrl-C.
"""

from __future__ import annotations

from .server import (
    FAULT_KINDS,
    SANDBOX_MARKER,
    LoggedRequest,
    Received,
    SandboxServer,
    main,
    use_sandbox,
)
from .tls import TrustmeMissing

__all__ = [
    "FAULT_KINDS",
    "SANDBOX_MARKER",
    "LoggedRequest",
    "Received",
    "SandboxServer",
    "TrustmeMissing",
    "main",
    "use_sandbox",
]
