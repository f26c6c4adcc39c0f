"""``python -m dict_magics.sandbox``: serve a sandbox until Ctrl-C."""

from __future__ import annotations

from .server import main

raise SystemExit(main())
