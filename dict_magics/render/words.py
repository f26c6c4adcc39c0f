"""Re-exports for ``render/panel.py`` until it moves (see ``render/__init__.py``)."""

from ..models.text import count, entries
from ..models.text import shown as clean

__all__ = ["clean", "count", "entries"]
