"""A local stand-in for the translation service, for the demo, the notebooks and the tests.

Run ``python -m dict_magics.sandbox`` (or ``dict-magics sandbox``) to serve one until Ctrl-C.
"""

from .faults import FAULT_KINDS
from .handler import TrustmeMissing
from .server import SANDBOX_MARKER, LoggedRequest, Received, SandboxServer, main, use_sandbox

__all__ = ["FAULT_KINDS", "SANDBOX_MARKER", "LoggedRequest", "Received", "SandboxServer"]
__all__ += ["TrustmeMissing", "main", "use_sandbox"]
