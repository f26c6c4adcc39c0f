"""Re-exports for ``render/panel.py`` until it moves (see ``render/__init__.py``)."""

from ..models.purge import purge_html, purge_text

__all__ = ["purge_html", "purge_text"]
