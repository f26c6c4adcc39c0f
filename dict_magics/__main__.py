"""``python -m dict_magics``: the ``dict-magics`` command line."""

from __future__ import annotations

from .frontends.cli import main

raise SystemExit(main())
